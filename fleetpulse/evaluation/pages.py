"""Pages per true incident: how often a person is paged for each host the detectors rightly found.

Operators mute tools that page again for every repeat of the same incident, so one page per incident
(the planner absorbs further findings while an operation is open; alerts carry a ``group_key``) is a
goal scored like precision: ≤ 1.2 firing alerts per true incident. Pure: the flat AlertRaised rows in,
reading them is ``fleetpulse.evaluation.sources``'s job.
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


def score_pages(alerts: pl.DataFrame, report: ScoreReport) -> PageScore:
    """``alerts``: one row per AlertRaised (``ALERT_COLUMNS``; a re-sent alert, same id, counts once)."""
    alerts = alerts.unique("event_id")
    incidents = sorted({h for d in report.detectors.values() for h in d.tp_hosts})
    firing = alerts.filter(pl.col("status") == "firing")
    on_hosts = firing.filter(pl.col("host_id") != FLEET)
    mine = on_hosts.filter(pl.col("host_id").is_in(incidents))
    per_host = mine.group_by("host_id").agg(pl.len().alias("pages"), pl.col("group_key").n_unique().alias("groups"))
    n = len(incidents)
    return PageScore(
        incidents=n,
        pages_on_incidents=mine.height,
        pages_per_incident=mine.height / n if n else None,
        max_pages_per_incident=int(per_host["pages"].max() or 0) if per_host.height else 0,  # type: ignore[arg-type]
        groups_per_incident=int(per_host["groups"].sum()) / n if n else None,
        pages_elsewhere=on_hosts.height - mine.height,
        resolved=alerts.filter(pl.col("status") == "resolved").height,
        fleet_pages=firing.height - on_hosts.height,
    )
