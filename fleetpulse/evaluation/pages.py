"""Pages per true incident: how often a person is paged for each incident the detectors rightly found.

Operators mute tools that page again for every repeat of the same incident, so one page per incident
(the planner absorbs further findings while an operation is open; alerts carry a ``group_key``, and
a group is one notification) is a goal scored like precision: ≤ 1.2 pages per true incident.

What an incident is comes from the fleet's truth, not from the alerts (``fleetpulse.evaluation.incidents``):
a true host's fault, and again each time the host came back from a repair that did not cure it (a relapse,
which the operators must hear about). A relapse counts when a finding on the host followed it (found, as a
true host is); a page is counted against the incident in which its group first fired, so a page after a
relapse opens no new incident unless the fleet had one. ``pages_per_host`` is the previous figure, one
incident per true host whatever its repairs; a group opened by a ``RepeatAfterRepair`` alert (the planner's
own judgement that a repair did not hold) is counted apart. Pure: the flat AlertRaised rows in; reading them is
``fleetpulse.evaluation.alerts_io``'s job.
"""

from __future__ import annotations

import polars as pl

from fleetpulse.evaluation.incidents import Relapses, found_incidents, pages_per_incident
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


def score_pages(
    alerts: pl.DataFrame,
    report: ScoreReport,
    *,
    findings: pl.DataFrame | None = None,
    relapses: Relapses | None = None,
) -> PageScore:
    """``alerts``: one row per AlertRaised (``ALERT_COLUMNS``; a re-sent alert, same id, counts once).

    ``findings`` (``host_id``, ``ts``) tell which relapses were found; ``relapses``: the fleet's
    (``incidents.relapses_of``), none by default (each true host one incident).
    """
    relapses = relapses or {}
    alerts = alerts.unique("event_id")
    hosts = sorted({h for d in report.detectors.values() for h in d.tp_hosts})
    firing = alerts.filter(pl.col("status") == "firing")
    on_hosts = firing.filter(pl.col("host_id") != FLEET).with_columns(
        pl.col("group_key").fill_null(pl.col("event_id"))  # an alert without a group is its own page
    )
    groups = on_hosts.group_by("host_id", "group_key").agg(
        (pl.col("alertname") == AFTER_REPAIR).any().alias("after"), pl.col("ts").min().alias("first")
    )
    mine = groups.filter(pl.col("host_id").is_in(hosts))
    seen = [] if findings is None else findings.select("host_id", "ts").iter_rows()
    found = found_incidents(hosts, seen, relapses)
    per_incident = pages_per_incident(mine.select("host_id", "first").iter_rows(), found, relapses)
    n_incidents = sum(len(v) for v in found.values())
    n, after = len(hosts), int(mine["after"].sum())
    return PageScore(
        incidents=n_incidents,
        alerts_on_incidents=on_hosts.filter(pl.col("host_id").is_in(hosts)).height,
        pages_on_incidents=mine.height,
        pages_per_incident=mine.height / n_incidents if n_incidents else None,
        max_pages_per_incident=max(per_incident.values(), default=0),
        after_repair_pages=after,
        first_pages_per_incident=(mine.height - after) / n if n else None,
        pages_elsewhere=groups.height - mine.height,
        resolved=alerts.filter(pl.col("status") == "resolved").height,
        fleet_pages=firing.height - on_hosts.height,
        hosts=n,
        pages_per_host=mine.height / n if n else None,
        relapses_found=n_incidents - n,
        relapses=sum(len(relapses.get(h, ())) for h in hosts),
    )
