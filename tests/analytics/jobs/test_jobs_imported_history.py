"""The importer's records, as the archiver lays them out, read by the jobs: the two sides of the contract agree.

A made-up trace in the shape of public fault traces (node id, relative time in days, one row per
start or end event, a slash-separated fault type) goes through ``plan_import`` with the shipped
example mapping; its records become lake tables through ``schemas.arrow`` like the archiver's.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from analytics.jobs import build_report, run_job
from analytics.jobs.cli import app
from producers.importer import EXAMPLE_MAPPING, load_mapping, plan_import
from producers.importer.incidents import parse_start
from schemas.arrow import to_table
from tests.analytics.jobs.factories import write_table

# node, day, event, fault type, detail, component
TRACE = """node_id,time,event,fault_type,detail,component
1,1.0,start,GPU/lost,GPU fell off the bus,3
1,1.5,end,GPU/lost,,3
2,2.0,start,GPU/lost,GPU fell off the bus,1
2,2.25,end,GPU/lost,,1
3,3.0,start,GPU/lost,GPU fell off the bus,0
3,4.0,end,GPU/lost,,0
4,1.0,start,Power/PSU/failed,PSU 2 failed,2
4,1.125,end,Power/PSU/failed,,2
5,2.0,start,Power/PSU/failed,PSU 1 failed,1
5,2.5,end,Power/PSU/failed,,1
1,5.0,start,Unknown/unknown error,unknown error,
1,5.25,end,Unknown/unknown error,,
2,6.0,start,Unknown/unknown error,unknown error,
6,7.0,start,Misc/odd/thing,odd thing,
6,7.5,end,Misc/odd/thing,,
"""
# By hand from the rows above: hours of the closed outages per cause.
TTR_HOURS = {"faulty_gpu": [12.0, 6.0, 24.0], "psu": [3.0, 12.0], "unclassified": [6.0, 12.0]}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    folder = tmp_path_factory.mktemp("imported")
    source = folder / "trace.csv"
    source.write_text(TRACE)
    plan = plan_import(source, load_mapping(EXAMPLE_MAPPING), start_ms=parse_start("2024-01-01"))
    lake = folder / "lake"
    for event_type, table, records in (
        ("IncidentReported", "incidents", plan.records),
        ("HostInventoried", "host_inventoried", plan.inventory),
    ):
        write_table(lake, table, pl.from_arrow(to_table(event_type, records)))  # type: ignore[arg-type]
    return lake, plan.summary


def test_the_jobs_count_what_the_import_counted(imported: tuple[Path, object]) -> None:
    lake, summary = imported
    result = run_job("incidents", lake)
    cov = result.summary["coverage"]["causes"]
    assert (cov["counted"], cov["total"]) == (summary.classified, summary.incidents) == (5, 8)  # type: ignore[attr-defined]
    counts = dict(result.tables["causes"].select("cause", "count").iter_rows())
    assert counts == summary.by_cause  # type: ignore[attr-defined]
    classes = result.tables["unclassified_classes"]["source_class"].to_list()
    assert sorted(classes) == sorted(c for c, _ in summary.unmapped_classes)  # type: ignore[attr-defined]


def test_time_to_repair_matches_the_trace_by_hand(imported: tuple[Path, object]) -> None:
    lake, _ = imported
    ttr = run_job("incidents", lake).tables["time_to_repair"]
    for cause, hours in TTR_HOURS.items():
        row = ttr.filter(pl.col("cause") == cause).row(0, named=True)
        assert row["closed"] == len(hours)
        assert row["ttr_median_h"] == pytest.approx(float(pl.Series(hours).median()))  # type: ignore[arg-type]
        assert row["ttr_p90_h"] == pytest.approx(pl.Series(hours).quantile(0.9, "linear"))
    assert ttr.filter(pl.col("cause") == "unclassified")["outages"].item() == 3  # one still open


def test_report_on_imported_history_skips_early_life_and_states_assumptions(
    imported: tuple[Path, object], tmp_path: Path
) -> None:
    lake, _ = imported
    rep = build_report(lake, tmp_path / "out", show_progress=False)
    assert "real install date" in rep.skipped["early-life"]
    domain = rep.results["maintenance-domain"].summary
    closed = sorted(h for hours in TTR_HOURS.values() for h in hours)
    assert domain["model"]["repair_hours"] == pytest.approx(float(pl.Series(closed).median()))  # type: ignore[arg-type]
    assert domain["inputs"]["job_hosts"].startswith("assumed")
    md = rep.markdown.read_text()
    assert "coverage: 5 of 8 incidents classified (62.5%)" in md and "| unclassified | 3 |" in md
    # the three lost GPUs name failed hardware; psu (a signal-free interruption cause too) and unclassified do not
    assert "coverage: 3 of 8 faults with a hardware signal, or incidents naming failed hardware (37.5%)" in md


def test_cli_analyze_says_skipped_where_the_report_does(
    imported: tuple[Path, object], tmp_path: Path
) -> None:
    """A job the report skips (imported hosts have no install date) is not a failure of ``analyze``."""
    lake, _ = imported
    rep = build_report(lake, tmp_path / "out", show_progress=False)
    assert "early-life" in rep.skipped
    for job, why in rep.skipped.items():
        res = CliRunner().invoke(app, ["analyze", job, "--lake", str(lake)])
        assert res.exit_code == 0, res.output
        assert res.output.startswith("skipped: ") and why.split(" (")[0][:40] in " ".join(res.output.split())
    assert CliRunner().invoke(app, ["analyze", "nope", "--lake", str(lake)]).exit_code != 0
