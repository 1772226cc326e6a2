"""A long import says what it is doing: rows read, incidents paired, records sent (every 10 %)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from fleetpulse.cli import app as cli
from producers.importer.kafka_io import send
from producers.progress import StepLines
from schemas import Codec, IncidentReported


def test_step_lines_print_every_tenth_and_the_end() -> None:
    lines: list[str] = []
    steps = StepLines(lines.append)
    for done in range(0, 101, 1):
        steps("records sent", done, 100)
    steps("rows read", 5000, 0)
    shown = [line.split(" (")[0] for line in lines]
    assert shown[:3] == ["records sent: 0 of 100", "records sent: 10 of 100", "records sent: 20 of 100"]
    assert shown[-2:] == ["records sent: 100 of 100", "rows read: 5,000"]
    assert len(shown) == 12


class CountingSink:
    """Takes batches like the Kafka sink and sends them nowhere."""

    def __init__(self, settings: Any) -> None:
        self.codec = Codec()
        self.records = 0

    def write(self, batch: Any) -> None:
        self.records += len(batch.encode(self.codec))

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None


def incident(n: int) -> dict[str, Any]:
    payload = {
        "cause": "psu",
        "source_class": "Power/PSU",
        "source_text": "",
        "component": None,
        "component_kind": None,
        "start_ts": 1_700_000_000_000 + n,
        "end_ts": None,
    }
    return IncidentReported(
        event_id=f"inc-{n}", host_id=f"n{n % 7}", cluster="c", ts=1_700_000_000_000 + n, payload=payload
    ).to_record()


def test_send_reports_records_sent() -> None:
    seen: list[tuple[str, int, int]] = []
    incidents = [incident(n) for n in range(25)]
    send(None, [], incidents, sink_factory=CountingSink, chunk=10, progress=lambda *a: seen.append(a))  # type: ignore[arg-type]
    assert seen == [("records sent", 10, 25), ("records sent", 20, 25), ("records sent", 25, 25)]


def test_the_cli_prints_the_steps_of_a_large_import(tmp_path: Path) -> None:
    rows = [
        f"{n % 40},{n / 100},start,GPU/lost\n{n % 40},{n / 100 + 0.001},end,GPU/lost" for n in range(2000)
    ]
    (tmp_path / "t.csv").write_text("node_id,time,event,fault_type\n" + "\n".join(rows) + "\n")
    (tmp_path / "m.toml").write_text(
        '[columns]\nhost = "node_id"\ntime = "time"\nevent = "event"\nsource_class = "fault_type"\n'
    )
    args = [
        "import",
        str(tmp_path / "t.csv"),
        "--mapping",
        str(tmp_path / "m.toml"),
        "--start",
        "2024-01-01",
        "--dry-run",
    ]
    quiet = CliRunner().invoke(cli, args)  # a small file: no steps unless asked
    assert quiet.exit_code == 0 and "rows read" not in quiet.output
    result = CliRunner().invoke(cli, [*args, "--progress"])
    assert result.exit_code == 0, result.output
    assert "rows read: 4,000" in result.output and "incidents paired: 2,000" in result.output
