"""The batch jobs' fault table, inferred from the lake's error events alone: one row per fault with its kind.

Each fault has exactly one primary signal (an XID, a link-down, a flap, or for causes without
a hardware signal the JobInterrupted itself); co-emitted events (AER, ECC, XID 63) are not
counted again, nor is the signal an imported incident's mapping generated: one fault per incident. Kinds and causes follow the shared fault contract (docs/ANALYTICS.md).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from analytics.jobs.incidents import load_incidents, normalised_cause
from analytics.jobs.source import scan_events
from schemas.taxonomy import FAULT_KINDS, KIND_CAUSE, SIGNAL_SUFFIX
from schemas.xids import XID_KIND

# Causes that have no hardware signal of their own (the kinds the taxonomy maps to no cause): the
# JobInterrupted is the fault record.
SIGNAL_FREE_CAUSES = tuple(kind for kind in FAULT_KINDS if kind not in KIND_CAUSE)
EARLY_LIFE_KINDS = ("fell_off_bus", "link_down")
# Faults that need no hardware repair; every other kind, recorded incidents' causes (``unclassified``
# included: the host was out) too, counts in the maintenance-domain model's failure rate.
NO_REPAIR_KINDS = ("software", "nccl_watchdog", "link_flap")

_FAULT_SCHEMA = {
    "host_id": pl.String,
    "cluster": pl.String,
    "ts": pl.Int64,
    "gpu": pl.Int32,
    "port": pl.Int32,
    "kind": pl.String,
    "cause": pl.String,
}


def _cause_of(kind: pl.Expr) -> pl.Expr:
    return kind.replace_strict(KIND_CAUSE, default=kind, return_dtype=pl.String)


def _xid_kind() -> pl.Expr:
    return pl.col("xid").replace_strict(XID_KIND, default=None, return_dtype=pl.String)


def _link_kind(nic: pl.Expr) -> pl.Expr:
    return (
        pl.when(pl.col("kind") == "flap")
        .then(pl.lit("link_flap"))
        .when((pl.col("kind") == "nic_lost") | nic)
        .then(pl.lit("nic"))
        .when(pl.col("kind") == "down")
        .then(pl.lit("link_down"))
    )


def xid_faults(xid: pl.LazyFrame) -> pl.LazyFrame:
    """Fault rows from XidRaised: only the XIDs that are a fault's primary signal."""
    kind = _xid_kind()
    return (
        xid.with_columns(kind.alias("kind"))
        .filter(pl.col("kind").is_not_null())
        .select(
            "host_id",
            "cluster",
            pl.col("ts").cast(pl.Int64),
            pl.col("gpu").cast(pl.Int32),
            pl.lit(None, pl.Int32).alias("port"),
            "kind",
            _cause_of(pl.col("kind")).alias("cause"),
        )
    )


def link_faults(link: pl.LazyFrame, interrupted: pl.LazyFrame | None = None) -> pl.LazyFrame:
    """Fault rows from LinkEventObserved: downs (cable/switch), lost NICs, and flaps.

    A ``nic_lost`` is a NIC fault; so is a down that a JobInterrupted with cause ``nic`` has the
    same host and ts as (how a NIC fault was told before it had its own kind).
    """
    downs = link.filter(pl.col("kind").is_in(["down", "flap", "nic_lost"])).select(
        "host_id", "cluster", pl.col("ts").cast(pl.Int64), pl.col("port").cast(pl.Int32), "kind"
    )
    if interrupted is not None:
        nic = (
            interrupted.filter(pl.col("cause") == "nic")
            .select("host_id", pl.col("ts").cast(pl.Int64), pl.lit(True).alias("_nic"))
            .unique(["host_id", "ts"])
        )
        downs = downs.join(nic, on=["host_id", "ts"], how="left")
    else:
        downs = downs.with_columns(pl.lit(None, pl.Boolean).alias("_nic"))
    kind = _link_kind(pl.col("_nic").fill_null(False))
    return downs.with_columns(kind.alias("kind")).select(
        "host_id",
        "cluster",
        "ts",
        pl.lit(None, pl.Int32).alias("gpu"),
        "port",
        "kind",
        _cause_of(pl.col("kind")).alias("cause"),
    )


def signal_free_faults(interrupted: pl.LazyFrame) -> pl.LazyFrame:
    """Fault rows for causes without a hardware signal: the JobInterrupted is the only record."""
    return interrupted.filter(pl.col("cause").is_in(SIGNAL_FREE_CAUSES)).select(
        "host_id",
        "cluster",
        pl.col("ts").cast(pl.Int64),
        pl.col("gpu").cast(pl.Int32),
        pl.lit(None, pl.Int32).alias("port"),
        pl.col("cause").alias("kind"),
        "cause",
    )


def incident_faults(incidents: pl.LazyFrame, signal_kinds: pl.LazyFrame | None = None) -> pl.LazyFrame:
    """Fault rows for recorded incidents: kind and cause are the incident's cause (``unclassified``
    when its source class had no mapping), at its start; a GPU or port component becomes gpu / port.
    ``signal_kinds`` (``event_id`` of an incident, ``_signal_kind``): the kind of the hardware signal
    linked to it, which names the fault's kind when there is one."""
    cause = normalised_cause(pl.col("cause"))
    kind = cause
    if signal_kinds is not None:
        incidents = incidents.join(signal_kinds, on="event_id", how="left")
        kind = pl.coalesce(pl.col("_signal_kind"), cause)

    def unit(kind: str) -> pl.Expr:
        return pl.when(pl.col("component_kind") == kind).then(
            pl.col("component").cast(pl.Int32, strict=False)
        )

    return incidents.select(
        "host_id",
        "cluster",
        pl.col("start_ts").cast(pl.Int64).alias("ts"),
        unit("gpu").alias("gpu"),
        unit("port").alias("port"),
        kind.alias("kind"),
        cause.alias("cause"),
    )


def classify_faults(
    xid: pl.LazyFrame | None,
    link: pl.LazyFrame | None,
    interrupted: pl.LazyFrame | None,
    incidents: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """All faults seen in the error tables and recorded incidents, one row each:
    host_id, cluster, ts, gpu, port, kind, cause."""
    parts = []
    if incidents is not None:
        xid, xid_kinds = _unlink(xid, incidents, _xid_kind())
        link, link_kinds = _unlink(link, incidents, _link_kind(pl.lit(False)))
        kinds = [k for k in (xid_kinds, link_kinds) if k is not None]
        parts.append(incident_faults(incidents, pl.concat(kinds).unique("event_id") if kinds else None))
    if xid is not None:
        parts.append(xid_faults(xid))
    if link is not None:
        parts.append(link_faults(link, interrupted))
    if interrupted is not None:
        parts.append(signal_free_faults(interrupted))
    if not parts:
        return pl.LazyFrame(schema=_FAULT_SCHEMA)
    return pl.concat([p.cast(_FAULT_SCHEMA) for p in parts]).sort("ts", "host_id")  # type: ignore[arg-type]


def _unlink(
    signals: pl.LazyFrame | None, incidents: pl.LazyFrame, kind: pl.Expr
) -> tuple[pl.LazyFrame | None, pl.LazyFrame | None]:
    """(the signals no incident generated, the kinds of those it did by the incident's ``event_id``).

    One fault per incident: the hardware signal an imported incident's mapping generated
    (``schemas.taxonomy.incident_signal_id``) is linked to it, never counted beside it.
    """
    if signals is None or "event_id" not in signals.collect_schema().names():
        return signals, None
    links = incidents.select(
        pl.col("event_id").alias("_incident"), (pl.col("event_id") + SIGNAL_SUFFIX).alias("event_id")
    )
    linked = signals.join(links, on="event_id", how="inner").select(
        pl.col("_incident").alias("event_id"), kind.alias("_signal_kind")
    )
    return signals.join(links, on="event_id", how="anti"), linked


def load_faults(lake: str | Path) -> pl.LazyFrame:
    """``classify_faults`` over a lake's error tables and incidents (any of them may be absent)."""
    return classify_faults(
        scan_events(lake, "xid_raised"),
        scan_events(lake, "link_event_observed"),
        scan_events(lake, "job_interrupted"),
        load_incidents(lake),
    )
