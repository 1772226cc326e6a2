"""Report, truth checks and the CLI on the synthetic lake."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
from typer.testing import CliRunner

from analytics.jobs import build_report, run_job, truth_checks
from analytics.jobs.errors import UnknownJobError
from analytics.lake.layout import QUARANTINE_REPORTS
from analytics.lake.quarantine import BATCH_ID, REPORTS_SCHEMA
from fleetpulse.cli import app
from ground.delta import DeltaTables
from tests.analytics.jobs.factories import SyntheticFleet

Lake = tuple[Path, dict[str, Any], SyntheticFleet]


def test_report_is_self_contained_and_lists_skipped_jobs(synthetic_lake: Lake, tmp_path: Path) -> None:
    lake, _, _ = synthetic_lake
    partial = tmp_path / "lake"
    shutil.copytree(lake, partial)
    shutil.rmtree(partial / "host_sampled")  # the fabric job cannot run without samples
    held = {
        "table": "xid_raised",
        BATCH_ID: "fleet.errors-p0-o100-199",
        "topic": "fleet.errors",
        "partition": 0,
        "first_offset": 100,
        "last_offset": 199,
        "rows": 7,
        "failed_expectations": ["xid_in_catalog"],
        "quarantined_at": dt.datetime(2025, 1, 2, tzinfo=dt.UTC),
        "report": "{}",
    }
    DeltaTables(partial).append(QUARANTINE_REPORTS, pa.Table.from_pylist([held], schema=REPORTS_SCHEMA))
    rep = build_report(partial, tmp_path / "out", jobs=("interruptions", "fabric"), show_progress=False)
    assert set(rep.results) == {"interruptions"} and "host_sampled" in rep.skipped["fabric"]
    page = rep.html.read_text()
    assert page.count("data:image/png;base64,") == 2 and not re.search(r'<img[^>]+src="(?!data:)', page)
    md = rep.markdown.read_text()
    for link in re.findall(r"!\[[^]]*\]\(([^)]+)\)", md):
        assert (tmp_path / "out" / link).is_file()
    assert "skipped" in md and "| cause | count | pct | llama3_pct |" in md
    assert rep.quarantine["rows"].to_list() == [7] and "xid_in_catalog" in md and "xid_in_catalog" in page
    doc = json.loads((tmp_path / "out" / "interruptions" / "summary.json").read_text())
    assert doc["summary"]["interruptions"] > 0
    causes = pl.read_parquet(tmp_path / "out" / "interruptions" / "root_causes.parquet")
    assert causes.height == 14 and "unclassified" in causes["cause"].to_list()  # Table 5's 13, unclassified
    assert "coverage: " in md and "interruptions classified (100.0%)" in md


def test_truth_checks_pass_and_fail(synthetic_lake: Lake, tmp_path: Path) -> None:
    lake, _, fleet = synthetic_lake
    results = {"early-life": run_job("early-life", lake)}
    (tmp_path / "manifest.json").write_text(json.dumps({"failures": {"weibull_shape": fleet.weibull_shape}}))
    assert truth_checks(results, tmp_path)["ok"].to_list() == [True]
    (tmp_path / "manifest.json").write_text(json.dumps({"failures": {"weibull_shape": 0.9}}))
    assert truth_checks(results, tmp_path)["ok"].to_list() == [False]


def test_cli_analyze_writes_outputs_and_rejects_unknown_jobs(synthetic_lake: Lake, tmp_path: Path) -> None:
    lake, _, _ = synthetic_lake
    runner = CliRunner()
    res = runner.invoke(
        app, ["analyze", "offenders", "--lake", str(lake), "--out", str(tmp_path), "--set", "min_events=2"]
    )
    assert res.exit_code == 0, res.output
    assert "repeat offenders (≥ 2 faults" in res.output
    assert (tmp_path / "offenders" / "offender_share.png").is_file()
    res = runner.invoke(app, ["analyze", "nope", "--lake", str(lake)])
    assert isinstance(res.exception, UnknownJobError)


def test_cli_analyze_and_report_as_json_and_csv(synthetic_lake: Lake, tmp_path: Path) -> None:
    """The job's whole tables (not the terminal's first rows and columns) alone on stdout."""
    lake, _, _ = synthetic_lake
    runner = CliRunner()
    res = runner.invoke(
        app, ["analyze", "offenders", "--lake", str(lake), "--set", "min_events=2", "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    tables = json.loads(res.stdout)
    whole = run_job("offenders", lake, min_events=2).tables
    assert tables and all(len(rows) == whole[name].height for name, rows in tables.items())
    assert all(set(rows[0]) == set(whole[name].columns) for name, rows in tables.items() if rows)
    res = runner.invoke(
        app,
        [
            "report",
            "--lake",
            str(lake),
            "--out",
            str(tmp_path),
            "--jobs",
            "interruptions,fabric",
            "--format",
            "csv",
        ],
    )
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0] in ("job,why", "# truth checks")
    assert "wrote " in res.stderr
