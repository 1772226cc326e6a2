"""group.instance.id per detect worker: stable across restarts, distinct between workers, off on request."""

from __future__ import annotations

from pathlib import Path

from ground.settings.detect import DetectSettings
from streams.membership import instance_id, stage_instance_id


def test_stable_for_one_worker_and_distinct_between_workers(tmp_path: Path) -> None:
    d = DetectSettings()
    one = instance_id(d, tmp_path / "w1", hostname=lambda: "node-a")
    assert one == instance_id(d, tmp_path / "w1", hostname=lambda: "node-a")  # a restart rejoins as itself
    assert one != instance_id(d, tmp_path / "w2", hostname=lambda: "node-a")  # a second worker, same host
    assert one != instance_id(d, tmp_path / "w1", hostname=lambda: "node-b")  # same path, another machine
    assert one is not None and one.startswith(d.app_id)
    # another web port is another Faust URL: Faust's assignor would reject the old id's assignment
    moved = DetectSettings(web_port=d.web_port + 1)
    assert one != instance_id(moved, tmp_path / "w1", hostname=lambda: "node-a")


def test_explicit_and_off() -> None:
    assert instance_id(DetectSettings(instance_id="rack7-w3"), Path("x")) == "rack7-w3"
    assert instance_id(DetectSettings(static_membership=False), Path("x")) is None
    assert stage_instance_id(None, "samples") is None
    assert stage_instance_id("w", "samples") == "w-samples"
