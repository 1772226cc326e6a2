"""Two archivers splitting the partitions (member 0/2 and 1/2) on a real broker: every record once, none
quarantined, though each owns only half of the inventory the known-host gate needs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from analytics.lake import Archiver, Lake
from analytics.lake.synthetic import synthetic_records
from tests.conftest import KafkaCluster
from tests.integration.test_archiver import (
    archiver_processes,  # noqa: F401 (a fixture)
    fleet_topics,  # noqa: F401 (a fixture)
    frontier,
    lake_event_ids,
    produce,
    settings_for,
    start_archiver,
    topic_contents,
)

pytestmark = pytest.mark.integration


def test_two_members_archive_every_record_once_and_know_every_host(
    kafka: KafkaCluster,
    fleet_topics: dict[str, str],  # noqa: F811
    tmp_path: Path,
    archiver_processes: list[subprocess.Popen[bytes]],  # noqa: F811
) -> None:
    lake = tmp_path / "lake"
    settings = settings_for(kafka, fleet_topics, lake, flush_records=200, flush_seconds=60, members=2)
    produce(kafka, fleet_topics, synthetic_records(n_hosts=30, samples_per_host=20, span_ms=3 * 86_400_000))

    # member 1 alone first: the hosts inventoried on partition 0 reach its lake only through member 0, so
    # its known hosts come from reading that partition itself
    alone = Archiver(settings.with_section("lake", member=1)).run(until_idle=True, max_seconds=100)
    assert alone.records > 0 and alone.quarantined_rows == 0
    owned_by_1 = {(tp.topic, tp.partition) for tp in frontier(lake)}
    assert owned_by_1 and all(p % 2 == 1 for _, p in owned_by_1)

    produce(
        kafka,
        fleet_topics,
        synthetic_records(n_hosts=30, samples_per_host=20, span_ms=3 * 86_400_000, seed=2, id_prefix="ev2"),
    )
    both = [
        start_archiver(settings, archiver_processes, "--until-idle", "--max-seconds", "100", "--member", m)
        for m in ("0/2", "1/2")
    ]
    for proc in both:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out.decode()

    on_topics, end = topic_contents(kafka, fleet_topics)
    in_lake = lake_event_ids(lake)
    assert {k: n for k, n in in_lake.items() if n > 1} == {}, "archived twice"
    assert set(in_lake) == set(on_topics)
    assert frontier(lake) == end
    assert Lake(lake).quarantine() == []
