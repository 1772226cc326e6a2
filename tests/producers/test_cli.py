"""``fleetpulse simulate`` end to end (parquet and null sinks; Kafka is in tests/integration)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from fleetpulse.cli import app
from ground.packaged_policy import parse_duration_ms
from producers.cli import parse_duration
from producers.errors import FleetConfigError


def test_simulate_to_parquet_writes_lake_and_truth(tmp_path: Path) -> None:
    lake, truth = tmp_path / "lake", tmp_path / "truth"
    args = [
        "simulate",
        "--preset",
        "small",
        "--days",
        "2",
        "--seed",
        "3",
        "--sink",
        "parquet",
        "--out",
        str(lake),
        "--truth-out",
        str(truth),
        "--interval",
        "3600",
        "--no-progress",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert CliRunner().invoke(app, args).exit_code == 0  # the same run again adds nothing to the lake
    manifest = json.loads((truth / "manifest.json").read_text())
    assert manifest["seed"] == 3 and manifest["sample_interval_s"] == 3600
    samples = pl.read_delta(str(lake / "host_sampled"))
    assert stored_once(samples, manifest, "HostSampled")
    assert set(samples["interval_s"]) == {3600}
    inventory = pl.read_delta(str(lake / "host_inventoried"))
    assert inventory.height == manifest["counts"]["HostInventoried"] == 48
    assert "done:" in result.output and "fleet.samples" in result.output


def test_unknown_preset_is_a_one_line_user_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["simulate", "--preset", "nope", "--sink", "null", "--no-progress"])
    assert isinstance(result.exception, FleetConfigError)
    # through the console entry point: exit code 2, one line on stderr naming the choices, nothing else,
    # however narrow the terminal (rich would wrap it at the width)
    env = {**os.environ, "COLUMNS": "40"}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "fleetpulse",
            "simulate",
            "--preset",
            "nope",
            "--sink",
            "null",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=env,
    )
    assert run.returncode == 2, run.stderr
    assert run.stdout == ""
    assert run.stderr.splitlines() == [f"error: {result.exception}"]
    assert "'nope'" in run.stderr and "small" in run.stderr and "Traceback" not in run.stderr


def test_help_lists_the_options() -> None:
    result = CliRunner().invoke(app, ["simulate", "--help"], env={"COLUMNS": "200"})
    for option in (
        "--preset",
        "--mode",
        "--days",
        "--duration",
        "--speed",
        "--truth-out",
        "--sink",
        "--fleet-config",
    ):
        assert option in result.output


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90), ("60s", 60), ("5m", 300), ("2h", 7200), ("1.5d", 129600)]
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_parse_duration_rejects_garbage() -> None:
    with pytest.raises(typer.BadParameter):
        parse_duration("soon")


@pytest.mark.parametrize("text", ["250ms", "90", " 5m ", "0.5h", "1.5d"])
def test_parse_duration_is_the_policy_parser_in_seconds(text: str) -> None:
    """One way to read a duration: ``--duration`` accepts what a policy file does, with the same value."""
    assert parse_duration(text) == parse_duration_ms(text) / 1000


def test_fleet_config_file_replaces_the_preset(tmp_path: Path) -> None:
    fleet = tmp_path / "tiny.toml"
    fleet.write_text('[[clusters]]\nname = "lab"\nfabric = "infiniband"\nhosts = 4\n[lemons]\nfraction = 0\n')
    truth = tmp_path / "truth"
    args = [
        "simulate",
        "--fleet-config",
        str(fleet),
        "--days",
        "1",
        "--sink",
        "null",
        "--truth-out",
        str(truth),
        "--no-progress",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    manifest = json.loads((truth / "manifest.json").read_text())
    assert manifest["preset"] == "tiny" and manifest["n_hosts"] == 4
    assert pq.read_table(truth / "hosts.parquet").column("fabric").to_pylist() == ["infiniband"] * 4


def test_sigint_stops_flushes_and_records_the_interruption(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    lake, truth = tmp_path / "lake", tmp_path / "truth"
    cmd = [
        sys.executable,
        "-m",
        "fleetpulse",
        "simulate",
        "--preset",
        "small",
        "--mode",
        "live",
        "--duration",
        "60s",
        "--sink",
        "parquet",
        "--out",
        str(lake),
        "--truth-out",
        str(truth),
        "--no-progress",
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, "COLUMNS": "200"}
    )
    try:
        deadline = time.monotonic() + 90  # a fixed sleep was too short on a loaded machine
        while proc.poll() is None and time.monotonic() < deadline and not _ticking(proc.pid):
            time.sleep(0.2)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0, out.decode()
    assert time.monotonic() - started < 10
    assert b"interrupted" in out
    manifest = json.loads((truth / "manifest.json").read_text())
    assert manifest["interrupted"] is True
    assert manifest["counts"]["HostInventoried"] > 0
    assert stored_once(pl.read_delta(str(lake / "host_inventoried")), manifest, "HostInventoried")


def stored_once(table: pl.DataFrame, manifest: dict[str, Any], event_type: str) -> bool:
    """The lake holds every event of the type the run sent, a resent one once: the simulator resends
    ``delivery.duplicate_fraction`` of its events on purpose, and the lake sink stores an event id once."""
    sent, resent = manifest["counts"][event_type], manifest["delivery"]["events_duplicated"]
    return table["event_id"].n_unique() == table.height and sent - resent <= table.height <= sent


def _ticking(pid: int) -> bool:
    """Whether the run is between two ticks: its stop handlers installed and the process asleep, using no CPU.

    The clock of the stop then starts in the run, not in its start-up: the first tick's write imports
    pandas (seconds of CPU, many more on a loaded machine) before the run looks at its stop flag again.
    """
    if not _catches_sigterm(pid):
        return False
    before = _sleeping_cpu_ticks(pid)
    time.sleep(1.0)
    return before is not None and before == _sleeping_cpu_ticks(pid)


def _sleeping_cpu_ticks(pid: int) -> int | None:
    """The process's CPU time (utime + stime, clock ticks) if it is asleep, None if it runs or waits for a CPU."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12]) if fields[0] == "S" else None


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has a SIGTERM handler (Python installs none of its own: the run's is there)."""
    import signal

    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False
