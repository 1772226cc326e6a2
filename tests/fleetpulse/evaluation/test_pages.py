"""Pages per true incident: firing host alerts on the hosts rightly found, each alert id once."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from fleetpulse.evaluation.alerts_io import alerts_from_lake
from fleetpulse.evaluation.pages import ALERT_COLUMNS, score_pages
from fleetpulse.evaluation.report import ScoreReport, assemble
from ground.delta import DATE, DeltaTables, with_date
from schemas.arrow import to_table
from streams.alerts import alerts_for
from streams.core.actions import Action


def report() -> ScoreReport:
    lemons = assemble(
        "repeat_offender", {"h1": 1, "h2": 2, "h9": 3}, {"h1", "h2", "h3"}, {"h1", "h2", "h3"}, ["h9"], [], {}
    )
    slow = assemble("slow_host", {"s1": 5}, {"s1"}, {"s1"}, [], [], {})
    return ScoreReport({"repeat_offender": lemons, "slow_host": slow}, {}, {})


def alert(
    eid: str, host: str, status: str = "firing", group: str | None = None, name: str = "NewRMA"
) -> dict:  # type: ignore[type-arg]
    return {
        "event_id": eid,
        "host_id": host,
        "ts": 0,
        "alertname": name,
        "status": status,
        "group_key": group or f"{host}/f",
    }


def test_pages_are_counted_per_alert_group_and_true_incident() -> None:
    alerts = pl.DataFrame(
        [
            alert("a1", "h1"),
            alert("a1", "h1"),  # the same alert sent twice: one page
            alert("a0", "h1", name="SlowHost"),  # another alert of the same group: an update, not a page
            alert("a2", "h1", group="h1/g2", name="RepeatAfterRepair"),
            alert("a6", "h1", group="h1/g2"),
            alert("a3", "h2"),
            alert("a4", "s1", name="SlowHost"),
            alert("r1", "h1", status="resolved"),
            alert("a5", "h9"),
            alert("t1", "-", name="TrainHalted"),
        ],
        schema=ALERT_COLUMNS,
    )
    p = score_pages(alerts, report())
    assert (p.incidents, p.alerts_on_incidents, p.pages_on_incidents, p.max_pages_per_incident) == (
        3,
        6,
        4,
        2,
    )
    assert p.pages_per_incident == 4 / 3 and p.after_repair_pages == 1 and p.first_pages_per_incident == 1.0
    assert (p.pages_elsewhere, p.fleet_pages, p.resolved) == (1, 1, 1)


def test_no_alerts_and_no_incidents() -> None:
    p = score_pages(pl.DataFrame(schema=ALERT_COLUMNS), report())
    assert (p.pages_on_incidents, p.pages_per_incident, p.max_pages_per_incident) == (0, 0.0, 0)
    empty = ScoreReport({}, {}, {})
    assert score_pages(pl.DataFrame(schema=ALERT_COLUMNS), empty).pages_per_incident is None


def test_alerts_read_from_the_lake_carry_their_group_key(tmp_path: Path) -> None:
    rma = Action(
        action_id="act-1",
        kind="rma_opened",
        host_id="h1",
        cluster="c0",
        domain="d0",
        operation="rma",
        ts=1_767_225_600_000,
        finding_id="f-1",
        rule="dram_uce_repeat_gpu",
    )
    records = alerts_for(rma)
    lake = DeltaTables(tmp_path / "lake")
    lake.append("alert_raised", with_date(to_table("AlertRaised", records)), partition_by=[DATE])
    got = alerts_from_lake(tmp_path / "lake")
    assert got.select("host_id", "status", "group_key").rows() == [("h1", "firing", "h1/f-1")]
    assert alerts_from_lake(tmp_path / "empty").height == 0


def test_a_repair_that_did_not_cure_opens_a_new_incident_and_a_re_page_does_not() -> None:
    """Incidents are the fleet's: ``h1`` came back still faulty at 100 and was found again, so its page after
    that is a new incident's; ``h2`` was paged twice with no failed repair between, one incident; ``s1``'s
    relapse at 50 was never found again, so its later page counts against its first incident."""
    alerts = pl.DataFrame(
        [
            {**alert("a1", "h1"), "ts": 10},
            {**alert("a2", "h1", group="h1/g2", name="RepeatAfterRepair"), "ts": 120},
            {**alert("a3", "h2"), "ts": 10},
            {**alert("a4", "h2", group="h2/g2"), "ts": 30},
            {**alert("a5", "s1", name="SlowHost"), "ts": 10},
            {**alert("a6", "s1", group="s1/g2", name="SlowHost"), "ts": 60},
        ],
        schema=ALERT_COLUMNS,
    )
    findings = pl.DataFrame({"host_id": ["h1", "h1", "h2", "h2", "s1", "s1"], "ts": [5, 110, 5, 25, 5, 35]})
    relapses = {"h1": [100], "s1": [50], "h9": [60]}
    p = score_pages(alerts, report(), findings=findings, relapses=relapses)
    assert (p.hosts, p.incidents, p.relapses, p.relapses_found, p.pages_on_incidents) == (3, 4, 2, 1, 6)
    assert p.pages_per_incident == 6 / 4 and p.pages_per_host == 6 / 3 and p.max_pages_per_incident == 2
    without = score_pages(alerts, report(), findings=findings)  # the figure before: one incident a host
    assert (without.incidents, without.pages_per_incident) == (3, 2.0)
