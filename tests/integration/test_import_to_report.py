"""Imported history on the real broker, archived into the lake, read by the report: coverage, time to
repair and the early-life skip as the jobs see them, and a second import that changes no figure."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from analytics.jobs import build_report, run_job
from analytics.lake import Archiver
from ground.kafka import admin
from ground.settings import Settings
from producers.importer import EXAMPLE_MAPPING, load_mapping, run_import
from producers.importer.incidents import parse_start
from tests.analytics.jobs.test_jobs_imported_history import TRACE, TTR_HOURS
from tests.conftest import KafkaCluster
from tests.streams.kafka_io import isolated_settings, with_own_lake

pytestmark = pytest.mark.integration


@pytest.fixture
def settings(kafka: KafkaCluster, tmp_path: Path) -> Settings:
    s = with_own_lake(isolated_settings(kafka.settings), str(tmp_path / "lake"))
    admin.create_topics(s)
    return s


def _import_and_archive(settings: Settings, trace: Path) -> int:
    summary = run_import(settings, trace, load_mapping(EXAMPLE_MAPPING), start_ms=parse_start("2024-01-01"))
    Archiver(settings).run(until_idle=True, max_seconds=60)
    return summary.sent


def test_imported_trace_reaches_the_report(settings: Settings, tmp_path: Path) -> None:
    trace = tmp_path / "trace.csv"
    trace.write_text(TRACE)
    lake = Path(settings.lake.path)
    assert _import_and_archive(settings, trace) == 8

    rep = build_report(lake, tmp_path / "out", show_progress=False)
    cov = rep.results["incidents"].summary["coverage"]["causes"]
    assert (cov["counted"], cov["total"]) == (5, 8)
    ttr = rep.results["incidents"].tables["time_to_repair"]
    for cause, hours in TTR_HOURS.items():
        row = ttr.filter(pl.col("cause") == cause).row(0, named=True)
        assert row["ttr_median_h"] == pytest.approx(float(pl.Series(hours).median()))  # type: ignore[arg-type]
    assert "real install date" in rep.skipped["early-life"]
    assert "coverage: 5 of 8 incidents classified (62.5%)" in rep.markdown.read_text()

    assert (
        _import_and_archive(settings, trace) == 0
    )  # the same history again: nothing sent, nothing counted twice
    again = run_job("incidents", lake)
    assert again.summary["coverage"]["causes"]["total"] == 8
    assert again.tables["time_to_repair"].equals(ttr)
