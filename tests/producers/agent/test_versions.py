"""The agent reports the host's versions at start and whenever one changes, from NVML, sysfs and uname."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ground.settings.agent import VersionsSettings
from producers.agent.build import build_agent
from producers.agent.collector import Problems
from producers.agent.sysfs import SysfsReader
from producers.agent.testing import FixtureHost, fake_pynvml
from producers.agent.versions import VersionsCollector, cuda_text, lowest, os_image
from schemas import Codec


def agent_rounds(
    host: FixtureHost, tmp_path: Path, nvml: Any, rounds: int, between: Any = None
) -> list[dict]:
    out: list[dict] = []
    settings = host.agent_settings(
        tmp_path / "s",
        nvml={"enabled": True},
        versions={"enabled": True, "interval_s": 1, "os_release": host.os_release},
    )
    agent = build_agent(settings, lambda records, st: out.extend(records), nvml=nvml)
    t = [1_800_000_000.0]
    agent.clock = lambda: t[0]
    for i in range(rounds):
        if between is not None:
            between(i)
        agent.round()
        t[0] += 2
    agent.close()
    return [r for r in out if r["event_type"] == "HostVersionsReported"]


def test_versions_are_reported_at_start_with_every_component(host: FixtureHost, tmp_path: Path) -> None:
    reports = agent_rounds(host, tmp_path, fake_pynvml(), 3)
    assert len(reports) == 1  # nothing changed after the start
    p = reports[0]["payload"]
    assert p == {
        "driver": "550.54.15",
        "cuda_driver": "12.4",
        "vbios": "96.00.99.00.01",
        "inforom": "G520.0200.00.05",
        "nic_firmware": "28.39.1002",
        "kernel": p["kernel"],
        "os_image": "Ubuntu 22.04.4 LTS",
        "reason": "start",
        "actor": "agent",
    }
    assert p["kernel"]  # uname -r of the machine running the test
    assert Codec().decode(Codec().encode(reports[0])).record == reports[0]


def test_a_driver_upgrade_is_reported_as_a_change(host: FixtureHost, tmp_path: Path) -> None:
    nvml = fake_pynvml()

    def upgrade(i: int) -> None:
        if i == 2:
            nvml.driver_version = "560.35.03"

    reports = agent_rounds(host, tmp_path, nvml, 4, upgrade)
    assert [(r["payload"]["reason"], r["payload"]["driver"]) for r in reports] == [
        ("start", "550.54.15"),
        ("change", "560.35.03"),
    ]


def test_nics_that_disagree_report_the_lowest_firmware(host: FixtureHost) -> None:
    (host.sys / "class" / "infiniband" / "mlx5_3" / "fw_ver").write_text("28.9.1000\n")
    problems = Problems()
    c = VersionsCollector(
        VersionsSettings(os_release=host.os_release),
        SysfsReader(host.sys, problems, "v"),
        problems,
        fake_pynvml(),
        uname=lambda: "6.8.0-45-generic",
    )
    versions = c.collect(0).versions
    assert versions["nic_firmware"] == "28.9.1000" and versions["kernel"] == "6.8.0-45-generic"


def test_no_driver_and_no_nics_leave_those_components_null(tmp_path: Path) -> None:
    problems = Problems()
    broken = fake_pynvml(absent=frozenset({"nvmlInit"}))
    c = VersionsCollector(
        VersionsSettings(os_release=tmp_path / "none"),
        SysfsReader(tmp_path, problems, "v"),
        problems,
        broken,
        uname=lambda: "6.8.0",
    )
    versions = c.collect(0).versions
    assert versions["driver"] is None and versions["nic_firmware"] is None and versions["os_image"] is None
    assert problems.total("versions") >= 1


def test_version_helpers() -> None:
    assert cuda_text(12040) == "12.4" and cuda_text(11080) == "11.8"
    assert lowest(["10.0.1", "9.1.2"]) == "9.1.2"
    assert os_image('NAME="Rocky Linux"\nVERSION_ID="9.4"\n') == "Rocky Linux 9.4"
