"""The report says what it covers and when it was made, gives every check a verdict, and shows times as dates."""

from __future__ import annotations

import datetime as dt
import json
from importlib import metadata
from pathlib import Path
from typing import Any

import polars as pl

from analytics.jobs import build_report
from analytics.jobs.report_header import NO_VERDICT, human_times, with_verdict
from analytics.lake import Lake
from tests.analytics.jobs.factories import SyntheticFleet

LakeFixture = tuple[Path, dict[str, Any], SyntheticFleet]
NOW = dt.datetime(2026, 3, 4, 5, 6, tzinfo=dt.UTC).timestamp()


def test_a_check_without_a_verdict_is_not_shown_like_a_failed_one() -> None:
    checks = pl.DataFrame(
        {"check": ["a", "b", "c"], "ok": [True, False, None], "detail": ["", "", "too few"]}
    )
    shown = with_verdict(checks)
    assert shown.columns == ["check", "verdict", "detail"]
    assert shown["verdict"].to_list() == ["yes", "no", NO_VERDICT]


def test_epoch_milliseconds_become_utc_dates_and_other_numbers_stay() -> None:
    df = pl.DataFrame({"ts": [1_767_225_600_000], "install_ts": [0], "events": [3], "median_ms": [1_500]})
    shown = human_times(df)
    assert shown["ts"].to_list() == ["2026-01-01 00:00:00 UTC"]
    assert shown["install_ts"].to_list() == ["1970-01-01 00:00:00 UTC"]
    assert shown["events"].to_list() == [3] and shown["median_ms"].to_list() == [1_500]


def test_the_report_names_its_window_version_and_time(synthetic_lake: LakeFixture, tmp_path: Path) -> None:
    lake, _, fleet = synthetic_lake
    (tmp_path / "truth").mkdir()
    (tmp_path / "truth" / "manifest.json").write_text(json.dumps({"failures": {"weibull_shape": 0.9}}))
    rep = build_report(
        lake,
        tmp_path / "out",
        truth=tmp_path / "truth",
        jobs=("early-life",),
        show_progress=False,
        now=lambda: NOW,
    )
    reader = Lake(lake)
    stamps = pl.concat(
        [reader.scan(t).select("ts").collect() for t in reader.tables() if "ts" in reader.schema(t)]
    )["ts"]
    first = dt.datetime.fromtimestamp(stamps.min() / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    last = dt.datetime.fromtimestamp(stamps.max() / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    version = metadata.version("fleetpulse")
    for text in (rep.markdown.read_text(), rep.html.read_text()):
        assert f"Events from {first} to {last}" in text
        assert f"fleetpulse {version}, generated 2026-03-04 05:06 UTC" in text
        assert "verdict" in text and ("| no |" in text or "<td>no</td>" in text)
    assert rep.truth is not None and rep.truth["ok"].to_list() == [False]  # the data keep true / false / null
