"""``fleetpulse lake …`` on a small lake built without Kafka."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from analytics.lake.batch import plan_batch
from analytics.lake.layout import date_of
from analytics.lake.synthetic import HOUR_MS, synthetic_records
from fleetpulse.cli import app
from ground.delta import DATE, DeltaTables, with_date
from schemas import Codec
from schemas.arrow import to_table
from tests.analytics.lake.helpers import as_consumed, files_per_date, ids_of

runner = CliRunner()


@pytest.fixture
def filled(lake: DeltaTables, records: list[dict[str, Any]], publisher_factory) -> Path:  # type: ignore[no-untyped-def]
    consumed = as_consumed(records)
    publisher = publisher_factory()
    publisher.publish(plan_batch(consumed[:30], Codec()))
    publisher.publish(plan_batch(consumed[30:], Codec()))
    return Path(lake.uri())


def invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


def test_status_lists_tables_and_offsets(filled: Path) -> None:
    result = invoke("lake", "status", "--lake", str(filled))
    assert result.exit_code == 0, result.output
    assert "host_sampled" in result.output and "fleet.samples" in result.output
    assert "fleetpulse-archiver" in result.output
    assert "quarantine: 0 entries, 0 rows; rejected: 0" in result.output


def test_compact_then_validate(filled: Path) -> None:
    result = invoke("lake", "compact", "--lake", str(filled), "--all-dates", "-t", "host_sampled")
    assert result.exit_code == 0, result.output
    assert "host_sampled" in result.output and "xid_raised" not in result.output
    result = invoke("lake", "validate", "--lake", str(filled), "-t", "host_sampled")
    assert result.exit_code == 0, result.output
    assert "checks passed, 0 failed" in result.output


def test_compact_takes_closed_dates_unless_all_dates_then_vacuum_deletes_what_it_replaced(
    lake: DeltaTables, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    """Events of 2025 (closed) and of the last hour (today or yesterday: open), two commits each."""
    now_ms = int(dt.datetime.now(dt.UTC).timestamp() * 1000)
    recent = synthetic_records(
        n_hosts=2, samples_per_host=2, start_ms=now_ms - HOUR_MS, span_ms=HOUR_MS // 2, id_prefix="r"
    )
    consumed = as_consumed(records + recent, partitions=1)
    publisher = publisher_factory()
    n, m = len(records), len(records) + len(recent) // 2
    # two commits per date
    for batch in (consumed[: n // 2], consumed[n // 2 : n], consumed[n:m], consumed[m:]):
        publisher.publish(plan_batch(batch, Codec()))
    ids = ids_of(lake, "host_sampled")
    before = files_per_date(lake, "host_sampled")
    open_dates = {d: n for d, n in before.items() if d in {date_of(r["ts"]) for r in recent}}
    assert open_dates and max(open_dates.values()) > 1 and before["2025-01-01"] > 1

    result = invoke("lake", "compact", "--lake", lake.uri(), "-t", "host_sampled")
    assert result.exit_code == 0, result.output
    assert "compaction" in result.output and "host_sampled" in result.output
    assert "fleetpulse lake vacuum" in result.output and "168 h" in result.output
    after = files_per_date(lake, "host_sampled")
    assert after["2025-01-01"] == 1 and {d: after[d] for d in open_dates} == open_dates
    assert (
        invoke("lake", "compact", "--lake", lake.uri(), "-t", "host_sampled").output.strip()
        == "nothing to compact"
    )

    result = invoke("lake", "compact", "--lake", lake.uri(), "-t", "host_sampled", "--all-dates")
    assert result.exit_code == 0, result.output
    assert all(n == 1 for n in files_per_date(lake, "host_sampled").values())

    result = invoke("lake", "vacuum", "--lake", lake.uri())
    assert result.exit_code == 0, result.output
    assert "deleted 0 files older than 168 h" in result.output  # the replaced files are younger than a week
    result = invoke("lake", "vacuum", "--lake", lake.uri(), "--retention-hours", "0", "--dry-run")
    assert "host_sampled: would delete" in result.output
    argv = ["lake", "vacuum", "--lake", lake.uri(), "--retention-hours", "0", "--dry-run", "--format", "json"]
    listed = runner.invoke(app, argv, env={"COLUMNS": "200"})  # stdout only: the summary goes to stderr
    assert listed.exit_code == 0, listed.output
    rows = {r["table"]: int(r["files to delete"]) for r in json.loads(listed.stdout)}
    assert rows["host_sampled"] == sum(n for n in before.values() if n > 1)
    result = invoke("lake", "vacuum", "--lake", lake.uri(), "--retention-hours", "0")
    assert result.exit_code == 0, result.output
    replaced = sum(n for n in before.values() if n > 1)  # every file of a partition that had several
    assert f"host_sampled: deleted {replaced} files" in result.output
    assert ids_of(lake, "host_sampled") == ids


def write_bad_ecc(filled: Path, records: list[dict[str, Any]]) -> None:
    """Another writer's commit: a negative ECC count in the 2025-01-01 partition."""
    ecc = [r for r in records if r["event_type"] == "EccErrorObserved"][:1]
    bad = [{**ecc[0], "event_id": "bad-1", "payload": {**ecc[0]["payload"], "count": -9}}]
    DeltaTables(filled).append(
        "ecc_error_observed", with_date(to_table("EccErrorObserved", bad)), partition_by=[DATE]
    )


def test_validate_fails_on_bad_rows_and_names_the_expectation(
    filled: Path, records: list[dict[str, Any]]
) -> None:
    write_bad_ecc(filled, records)
    result = invoke("lake", "validate", "--lake", str(filled), "--table", "ecc_error_observed")
    assert result.exit_code == 1, result.output
    assert "FAIL" in result.output and "count" in result.output


def test_validate_future_events_against_now(filled: Path) -> None:
    result = invoke(
        "lake", "validate", "--lake", str(filled), "-t", "xid_raised", "--now", "2024-06-01T00:00:00"
    )
    assert result.exit_code == 1
    assert "(ts)" in result.output


def test_quarantine_listing(filled: Path) -> None:
    result = invoke("lake", "quarantine", "--lake", str(filled))
    assert result.exit_code == 0 and "quarantine is empty" in result.output


def test_quarantine_listing_names_the_source_and_the_failed_expectation(
    lake: DeltaTables, records: list[dict[str, Any]], publisher_factory
) -> None:  # type: ignore[no-untyped-def]
    ecc = [r for r in records if r["event_type"] == "EccErrorObserved"]
    inventory = [r for r in records if r["event_type"] == "HostInventoried"]
    bad = [{**ecc[0], "payload": {**ecc[0]["payload"], "count": -3}}, *ecc[1:]]
    publisher_factory(gated=True).publish(plan_batch(as_consumed(inventory + bad, partitions=1), Codec()))
    result = invoke("lake", "quarantine", "--lake", lake.uri())
    assert result.exit_code == 0, result.output
    assert "ecc_error_observed" in result.output and "fleet.errors[0] 0-3" in result.output
    assert "count" in result.output
    status = invoke("lake", "status", "--lake", lake.uri()).output
    assert f"quarantine: 1 entries, {len(bad)} rows" in status


def test_chunked_recheck_reports_exactly_what_one_partition_at_a_time_reports(
    filled: Path, records: list[dict[str, Any]]
) -> None:
    from analytics.lake.reader import Lake
    from analytics.quality.gate import QualityGate
    from analytics.quality.recheck import recheck

    write_bad_ecc(filled, records)
    gate = QualityGate()
    calls: list[int] = []
    validate = gate.validate

    def counting(table: str, data: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(len(data))
        return validate(table, data, *args, **kwargs)

    gate.validate = counting  # type: ignore[method-assign]
    now = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    one_by_one = recheck(Lake(str(filled)), gate, now, chunk_rows=0)
    single_calls = len(calls)
    calls.clear()
    chunked = recheck(Lake(str(filled)), gate, now)
    assert chunked == one_by_one
    failing = {(r.table, r.date) for r in chunked if not r.success}
    assert failing == {("ecc_error_observed", "2025-01-01")}
    dates = {(r.table, r.date) for r in chunked if r.date != "*"}
    assert len(dates) > len({t for t, _ in dates}) and single_calls == len(dates)  # several dates per table
    assert len(calls) < single_calls


def test_status_and_validate_as_json_and_csv_for_scripts(filled: Path) -> None:
    result = runner.invoke(app, ["lake", "status", "--lake", str(filled), "--format", "json"])
    assert result.exit_code == 0, result.output
    status = json.loads(result.stdout)  # nothing but the JSON on stdout
    tables = {row["table"]: row for row in status[f"lake {filled}"]}
    assert tables["host_sampled"]["rows"] > 0 and isinstance(tables["host_sampled"]["rows"], int)
    assert {o["topic"] for o in status["committed offsets (next offset to archive)"]} >= {"fleet.samples"}
    assert status["quarantine"] == [{"entries": 0, "rows": 0, "rejected": 0}]
    result = runner.invoke(
        app, ["lake", "validate", "--lake", str(filled), "-t", "host_sampled", "--format", "csv"]
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert rows and {r["table"] for r in rows} == {"host_sampled"} and {r["result"] for r in rows} == {"pass"}
    assert "checks passed, 0 failed" in result.stderr
    result = runner.invoke(app, ["detect-policy", "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert next(csv.reader(io.StringIO(result.stdout))) == [
        "rule",
        "classes",
        "scope",
        "count",
        "window",
        "action",
        "detector",
    ]
