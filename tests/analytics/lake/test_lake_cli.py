"""``fleetpulse lake …`` on a small lake built without Kafka."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from analytics.lake.batch import plan_batch
from analytics.lake.fs import LakeFS
from fleetpulse.cli import app
from schemas import Codec
from schemas.arrow import to_table
from tests.analytics.lake.helpers import as_consumed

runner = CliRunner()


@pytest.fixture
def filled(lake: LakeFS, records: list[dict[str, Any]], publisher_factory) -> Path:  # type: ignore[no-untyped-def]
    consumed = as_consumed(records)
    publisher = publisher_factory()
    publisher.publish(plan_batch(consumed[:30], Codec()))
    publisher.publish(plan_batch(consumed[30:], Codec()))
    return Path(lake.base)


def invoke(*args: str) -> Any:
    result = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    return result


def test_status_lists_tables_and_offsets(filled: Path) -> None:
    result = invoke("lake", "status", "--lake", str(filled))
    assert result.exit_code == 0, result.output
    assert "host_sampled" in result.output and "fleet.samples" in result.output
    assert "quarantine: 0 entries" in result.output


def test_compact_then_validate(filled: Path) -> None:
    result = invoke("lake", "compact", "--lake", str(filled), "--all-dates", "-t", "host_sampled")
    assert result.exit_code == 0, result.output
    assert "host_sampled" in result.output
    result = invoke("lake", "validate", "--lake", str(filled), "-t", "host_sampled")
    assert result.exit_code == 0, result.output
    assert "checks passed, 0 failed" in result.output


def write_bad_ecc(filled: Path, records: list[dict[str, Any]]) -> None:
    """Another writer's file with a negative ECC count in the 2025-01-01 partition."""
    ecc = [r for r in records if r["event_type"] == "EccErrorObserved"][:1]
    bad = [{**ecc[0], "event_id": "bad-1", "payload": {**ecc[0]["payload"], "count": -9}}]
    LakeFS(filled).write_parquet(
        "ecc_error_observed/date=2025-01-01/other-writer.parquet", to_table("EccErrorObserved", bad)
    )


def test_validate_fails_on_bad_files_and_names_the_expectation(
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


def test_chunked_recheck_reports_exactly_what_one_partition_at_a_time_reports(
    filled: Path, records: list[dict[str, Any]]
) -> None:
    import datetime as dt

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
