"""Pages per true incident: how often a person is paged for each host the detectors rightly found.

Operators mute tools that page again for every repeat of the same incident, so one page per incident
(the planner absorbs further findings while an operation is open; alerts carry a ``group_key``, and
a group is one notification) is a goal scored like precision: ≤ 1.2 pages per true incident. A host
that fails again after returning from a repair opens a new group with a ``RepeatAfterRepair`` alert:
a new incident for the operator (the repair did not hold), counted apart. Pure: the flat AlertRaised
rows in; reading them is ``fleetpulse.evaluation.alerts_io``'s job.
"""

from __future__ import annotations

import polars as pl

from fleetpulse.evaluation.report import PageScore, ScoreReport
from schemas import FLEET

ALERT_COLUMNS: dict[str, type[pl.DataType]] = {
    "event_id": pl.Utf8,
    "host_id": pl.Utf8,
    "ts": pl.Int64,
    "alertname": pl.Utf8,
    "status": pl.Utf8,
    "group_key": pl.Utf8,
}
AFTER_REPAIR = "RepeatAfterRepair"


def score_pages(alerts: pl.DataFrame, report: ScoreReport) -> PageScore:
    """``alerts``: one row per AlertRaised (``ALERT_COLUMNS``; a re-sent alert, same id, counts once)."""
    alerts = alerts.unique("event_id")
    incidents = sorted({h for d in report.detectors.values() for h in d.tp_hosts})
    firing = alerts.filter(pl.col("status") == "firing")
    on_hosts = firing.filter(pl.col("host_id") != FLEET).with_columns(
        pl.col("group_key").fill_null(pl.col("event_id"))  # an alert without a group is its own page
    )
    groups = on_hosts.group_by("host_id", "group_key").agg(
        (pl.col("alertname") == AFTER_REPAIR).any().alias("after")
    )
    mine = groups.filter(pl.col("host_id").is_in(incidents))
    per_host = mine.group_by("host_id").len()
    n, after = len(incidents), int(mine["after"].sum())
    return PageScore(
        incidents=n,
        alerts_on_incidents=on_hosts.filter(pl.col("host_id").is_in(incidents)).height,
        pages_on_incidents=mine.height,
        pages_per_incident=mine.height / n if n else None,
        max_pages_per_incident=int(per_host["len"].max() or 0) if per_host.height else 0,  # type: ignore[arg-type]
        after_repair_pages=after,
        first_pages_per_incident=(mine.height - after) / n if n else None,
        pages_elsewhere=groups.height - mine.height,
        resolved=alerts.filter(pl.col("status") == "resolved").height,
        fleet_pages=firing.height - on_hosts.height,
    )
