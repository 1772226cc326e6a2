"""What every scenario with a webhook receiver asserts of its alerts."""

from __future__ import annotations

from fleetpulse.faults.results import ScenarioResult


def assert_alerts_delivered_once(r: ScenarioResult) -> None:
    assert r.alerts_lost == 0
    assert r.alerts_accepted_twice == 0
    assert r.details["outbox"]["pending"] == 0 and r.details["outbox"]["dead"] == 0, r.details["outbox"]
