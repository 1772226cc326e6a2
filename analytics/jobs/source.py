"""Where the jobs get their inputs: lake tables as LazyFrames, the inventory, the truth manifest.

Every read goes through ``scan``, a thin wrapper of ``analytics.lake.scan`` (which reads only
published files) that turns a missing table into a MissingTableError naming the job.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from analytics.jobs.errors import JobError, MissingTableError
from analytics.lake import Lake
from analytics.lake import scan as lake_scan
from schemas.events import NO_JOB_STEP_MS

MS_PER_DAY = 86_400_000
MS_PER_HOUR = 3_600_000


def is_uri(lake: str | Path) -> bool:
    """True for a lake given as a URI (``s3://…``, ``file://…``) rather than a local folder."""
    return isinstance(lake, str) and "://" in lake


def local_lake(lake: str | Path) -> Path:
    """The lake as a local folder; a JobError for a URI, which the jobs do not read.

    The jobs test folders with ``Path.is_dir()``, so without this a URI lake would be reported
    as missing tables rather than as an unsupported kind of lake.
    """
    if is_uri(lake):
        raise JobError(
            f"lake {lake} is a URI, but analyze and report read a local lake folder only "
            "(the archiver and the `fleetpulse lake` commands accept URIs); copy the lake to a local folder "
            "and pass --lake FOLDER"
        )
    return Path(lake).expanduser()


def has_table(lake: str | Path, table: str) -> bool:
    """True when the lake has at least one published Parquet file for ``table``."""

    folder = local_lake(lake)
    return folder.is_dir() and bool(Lake(folder).files(table))


def scan(lake: str | Path, table: str, job: str | None = None) -> pl.LazyFrame:
    """A lazy scan of one lake table's published files (``analytics.lake.scan``: quarantined and
    superseded files are not read); MissingTableError when the table has none."""

    if not has_table(lake, table):
        raise MissingTableError(str(lake), table, job)
    return lake_scan(lake, table).drop("date", strict=False)


def scan_optional(lake: str | Path, table: str) -> pl.LazyFrame | None:
    """Like ``scan`` but ``None`` when the table is absent (optional inputs such as findings)."""
    return scan(lake, table) if has_table(lake, table) else None


def step_time() -> pl.Expr:
    """``step_time_ms`` where a job reported one, else null (``schemas.events.job_step_time`` over a
    column), so samples of hosts without a job never pull a mean, median or percentile towards zero."""
    step = pl.col("step_time_ms")
    return pl.when(step > NO_JOB_STEP_MS).then(step).alias("step_time_ms")


def unique_events(frame: pl.LazyFrame) -> pl.LazyFrame:
    """One row per event id: a record delivered twice (producers deliver at least once) counts once."""
    return frame.unique("event_id", keep="first", maintain_order=True)


def scan_events(lake: str | Path, table: str) -> pl.LazyFrame | None:
    """``scan_optional`` of an event table, one row per event id (for the small error and incident
    tables; the sample tables are aggregated, where a repeat weighs next to nothing)."""
    frame = scan_optional(lake, table)
    return None if frame is None else unique_events(frame)


def latest_inventory(inventory: pl.LazyFrame) -> pl.LazyFrame:
    """One row per host: its latest HostInventoried record (the topic is compacted by host)."""
    return (
        inventory.sort("ts")
        .group_by("host_id")
        .agg(pl.all().last())
        .select(
            "host_id", "cluster", "fabric", "rack", "maintenance_domain", "sku", "install_ts", "gpu_count"
        )
    )


def time_range(*frames: pl.LazyFrame) -> tuple[int, int]:
    """(first ts, last ts) in epoch ms over the given event frames."""
    parts = [f.select(pl.col("ts").min().alias("lo"), pl.col("ts").max().alias("hi")) for f in frames]
    got = pl.concat(parts).collect()
    return int(got["lo"].min()), int(got["hi"].max())  # type: ignore[arg-type]


def read_manifest(truth: str | Path | None) -> dict[str, Any] | None:
    """The simulator's ``manifest.json`` from a truth directory, or None."""
    if truth is None:
        return None
    path = Path(truth) / "manifest.json"
    return json.loads(path.read_text()) if path.is_file() else None


def observation_window(
    lake: str | Path, manifest: dict[str, Any] | None = None, tables: tuple[str, ...] = ()
) -> tuple[int, int]:
    """The observed period in epoch ms: the manifest's when known, else the data's time range."""
    if manifest and "start_ts" in manifest and "end_ts" in manifest:
        return int(manifest["start_ts"]), int(manifest["end_ts"])
    names = tables or (
        "host_sampled",
        "xid_raised",
        "link_event_observed",
        "job_interrupted",
        "incidents",
        "operator_events",
    )
    frames = [scan(lake, t) for t in names if has_table(lake, t)]
    if not frames:
        raise MissingTableError(str(lake), names[0])
    return time_range(*frames)
