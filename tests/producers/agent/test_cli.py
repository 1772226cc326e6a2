from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from fleetpulse.cli import app
from producers.agent.testing import FixtureHost


def test_once_print_prints_one_round_as_json(host: FixtureHost, tmp_path: Path) -> None:
    host.fall_off_bus(5)
    result = CliRunner().invoke(
        app,
        [
            "agent",
            "--once",
            "--print",
            "--sysfs-root",
            str(host.sys),
            "--kmsg-path",
            str(host.kmsg),
            "--state-dir",
            str(tmp_path / "state"),
            "--no-nvml",
            "--host-id",
            "fx-h1",
        ],
        env={
            "FLEETPULSE_AGENT__KERNEL_LOG__BOOT_ID_PATH": str(host.boot_id),
            "FLEETPULSE_AGENT__STEP_TIME__ENABLED": "false",
        },
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["event_type"] for r in records] == [
        "HostInventoried",
        "HostVersionsReported",
        "XidRaised",
        "HostSampled",
    ]
    assert records[2]["payload"]["gpu"] == 5
    assert (
        records[1]["payload"]["driver"] is None and records[1]["payload"]["kernel"]
    )  # --no-nvml: no GPU side
    assert {r["host_id"] for r in records} == {"fx-h1"}
    assert not (tmp_path / "state").exists()  # --once writes no state and sends nothing


def test_fixture_host_option_builds_and_reads_a_synthetic_host(tmp_path: Path) -> None:
    args = ["agent", "--once", "--print", "--fixture-host", str(tmp_path / "fx"), "--host-id", "fx-h2"]
    env = {"FLEETPULSE_AGENT__STEP_TIME__ENABLED": "false"}
    for _ in range(2):  # a second start rebuilds the same host over the first
        result = CliRunner().invoke(app, args, env=env)
        assert result.exit_code == 0, result.output
        records = [json.loads(line) for line in result.stdout.splitlines()]
        inventory = records[0]["payload"]
        assert (inventory["gpu_count"], inventory["nic_ports"]) == (8, 8)
