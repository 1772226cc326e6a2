"""What a report says about itself: the lake's time window, the fleetpulse version, when it was made;
and its tables as people read them (a verdict column, UTC times instead of epoch milliseconds).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import NamedTuple

import polars as pl

from analytics.lake import Lake

VERDICTS = {True: "yes", False: "no"}
NO_VERDICT = "insufficient data"
HUMAN = "%Y-%m-%d %H:%M UTC"


class Header(NamedTuple):
    lake: str
    first_ts: int | None  # epoch ms of the oldest and newest event in the lake
    last_ts: int | None
    version: str
    generated_ts: int

    def lines(self) -> list[str]:
        if self.first_ts is None or self.last_ts is None:
            window = "no events"
        else:
            window = f"{human(self.first_ts)} to {human(self.last_ts)}"
        return [
            f"Lake: {self.lake}",
            f"Events from {window}",
            f"fleetpulse {self.version}, generated {human(self.generated_ts)}",
        ]


def human(ts_ms: int) -> str:
    return dt.datetime.fromtimestamp(ts_ms / 1000, tz=dt.UTC).strftime(HUMAN)


def fleetpulse_version() -> str:
    try:
        return metadata.version("fleetpulse")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def header(lake: str | Path, now: Callable[[], float]) -> Header:
    """The lake's event-time window over every table with events (min and max ``ts``; Delta stats)."""
    reader = Lake(lake)
    bounds = [
        reader.scan(t).select(pl.col("ts").min().alias("lo"), pl.col("ts").max().alias("hi"))
        for t in reader.tables()
        if "ts" in reader.schema(t)
    ]
    lo = hi = None
    if bounds:
        found = pl.concat(pl.collect_all(bounds)).select(pl.col("lo").min(), pl.col("hi").max())
        lo, hi = found["lo"][0], found["hi"][0]
    return Header(str(lake), lo, hi, fleetpulse_version(), round(now() * 1000))


def with_verdict(checks: pl.DataFrame) -> pl.DataFrame:
    """The truth checks with ``verdict`` (yes / no / insufficient data) where ``ok`` was (true / false / null)."""
    if "ok" not in checks.columns:
        return checks
    verdict = (
        pl.when(pl.col("ok").is_null())
        .then(pl.lit(NO_VERDICT))
        .when(pl.col("ok"))
        .then(pl.lit(VERDICTS[True]))
        .otherwise(pl.lit(VERDICTS[False]))
        .alias("verdict")
    )
    at = checks.columns.index("ok")
    out = checks.with_columns(verdict).drop("ok")
    cols = [c for c in out.columns if c != "verdict"]
    return out.select([*cols[:at], "verdict", *cols[at:]])


def human_times(df: pl.DataFrame) -> pl.DataFrame:
    """Epoch-millisecond instants (``ts`` and ``*_ts`` integer columns) as UTC date and time."""
    instants = [c for c, t in df.schema.items() if (c == "ts" or c.endswith("_ts")) and t.is_integer()]
    if not instants:
        return df
    return df.with_columns(
        pl.from_epoch(pl.col(c), time_unit="ms").dt.strftime(HUMAN.replace("%M UTC", "%M:%S UTC")).alias(c)
        for c in instants
    )
