"""What the scenarios assert: of the detection against their clean reference, of a webhook receiver's alerts."""

from __future__ import annotations

from fleetpulse.faults.results import ScenarioResult


def assert_alerts_delivered_once(r: ScenarioResult) -> None:
    assert r.alerts_lost == 0
    assert r.alerts_accepted_twice == 0
    assert r.details["outbox"]["pending"] == 0 and r.details["outbox"]["dead"] == 0, r.details["outbox"]


def assert_detection_kept(r: ScenarioResult) -> None:
    assert r.findings_lost == 0, r.details["findings"]
    assert r.actions_broken == 0, r.details["actions"]["log_check"]
    assert r.actions_lost == 0 and r.details["actions"]["extra"] == 0, r.details["actions"]
    assert r.details["actions"]["rmas_from_new_findings"] == []
    assert r.action_replays is not None
    for detector, ref in r.reference_precision.items():
        assert ref is None or (r.precision[detector] or 0) >= ref, (detector, r.details["score"])
    for detector, ref in r.reference_recall.items():
        assert ref is None or (r.recall[detector] or 0) >= ref, (detector, r.details["score"])
