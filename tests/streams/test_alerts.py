"""Alerts derived from actions, DLQ surges, dead-letter records."""

from __future__ import annotations

from schemas import Codec, FramingError
from streams.alerts import DlqSurge, alerts_for
from streams.core.actions import Action
from streams.core.errors import InvalidRecordError
from streams.deadletter import dead_letter, reason_label
from webhooks.payload import alertmanager_body


def action(kind: str, rule: str = "dram_uce_repeat_gpu") -> Action:
    return Action(
        action_id=f"a-{kind}",
        kind=kind,
        host_id="h1",
        cluster="c0",
        domain="d0",
        operation="rma",
        ts=5,
        finding_id="f1",
        rule=rule,
    )


def test_alerts_for_actions() -> None:
    rma = alerts_for(action("rma_opened"))
    assert [a["payload"]["alertname"] for a in rma] == ["NewRMA"]
    p = rma[0]["payload"]
    assert p["labels"] == {
        "alertname": "NewRMA",
        "host_id": "h1",
        "cluster": "c0",
        "domain": "d0",
        "rule": "dram_uce_repeat_gpu",
        "group_key": "h1/f1",
    }
    assert "h1" in p["annotations"]["summary"] and rma[0]["event_id"] == p["alert_id"]
    assert alerts_for(action("rma_opened")) == rma  # deterministic id
    assert [a["payload"]["alertname"] for a in alerts_for(action("suspected", "slow_host"))] == ["SlowHost"]
    assert alerts_for(action("suspected")) == [] and alerts_for(action("drained")) == []
    Codec().encode(rma[0])  # valid AlertRaised


def test_a_return_to_service_resolves_what_paged_for_the_operation_with_the_same_labels() -> None:
    fired = alerts_for(action("rma_opened"))
    resolved = alerts_for(action("returned"))
    assert [a["payload"]["status"] for a in resolved] == ["resolved"]
    assert resolved[0]["payload"]["labels"] == fired[0]["payload"]["labels"]  # same group and fingerprint
    assert resolved[0]["payload"]["severity"] == fired[0]["payload"]["severity"]
    assert resolved[0]["payload"]["alert_id"] != fired[0]["payload"]["alert_id"]  # a notification of its own
    assert alerts_for(action("returned")) == resolved  # deterministic
    body = alertmanager_body(resolved[0])
    assert body["status"] == "resolved" and body["groupLabels"]["group_key"] == "h1/f1"
    assert body["alerts"][0]["fingerprint"] == alertmanager_body(fired[0])["alerts"][0]["fingerprint"]
    slow = Action(
        action_id="a-ret",
        kind="returned",
        host_id="h1",
        cluster="c0",
        domain="d0",
        operation="drain_and_diagnose",
        ts=9,
        finding_id="f2",
        rule="slow_host",
    )
    assert [(a["payload"]["alertname"], a["payload"]["status"]) for a in alerts_for(slow)] == [
        ("SlowHost", "resolved")
    ]
    reboot = Action(
        action_id="a-rb",
        kind="returned",
        host_id="h1",
        cluster="c0",
        domain="d0",
        operation="reboot",
        ts=9,
        finding_id="f3",
        rule="fell_off_bus_once",
    )
    assert alerts_for(reboot) == []  # nothing paged for a reboot: nothing to resolve
    Codec().encode(resolved[0])


def test_dlq_surge_fires_once_per_burst() -> None:
    surge = DlqSurge(count=3, window_ms=1000)
    fired = [surge.observe(t, "fleet.errors", 0, t) for t in (0, 100, 200, 300, 400, 5000)]
    assert [x is not None for x in fired] == [False, False, True, False, False, False]


def test_dead_letter_record_is_valid_and_deterministic() -> None:
    exc = InvalidRecordError("gpu_out_of_range: gpu=99", host_id="h7", event_type="XidRaised")
    rec = dead_letter(
        exc, topic="fleet.errors", partition=2, offset=41, key=b"h7", value=b"\x00abc", timestamp_ms=9
    )
    again = dead_letter(
        exc, topic="fleet.errors", partition=2, offset=41, key=b"h7", value=b"\x00abc", timestamp_ms=9
    )
    assert rec == again and rec["host_id"] == "h7"
    decoded = Codec().decode(Codec().encode(rec)).record["payload"]
    assert decoded["source_offset"] == 41 and decoded["original_value"] == b"\x00abc"
    assert reason_label(exc) == "gpu_out_of_range" and reason_label(FramingError("x")) == "FramingError"


def test_cable_and_nic_work_pages_someone_and_resolves_on_return() -> None:
    """A cable or a NIC to replace is hands-on work like an RMA: it pages, and its return resolves it."""
    for kind, operation, name in (
        ("nic_replacement_requested", "nic_replacement", "NicReplacement"),
        ("cable_replacement_requested", "cable_replacement", "CableReplacement"),
    ):
        work = Action(
            action_id=f"a-{kind}",
            kind=kind,
            host_id="h1",
            cluster="c0",
            domain="d0",
            operation=operation,
            ts=5,
            finding_id="f1",
            rule="nic_repeat_host",
        )
        (fired,) = alerts_for(work)
        p = fired["payload"]
        assert (p["alertname"], p["severity"], p["status"]) == (name, "warning", "firing")
        assert "h1" in p["annotations"]["summary"] and p["labels"]["group_key"] == "h1/f1"
        back = Action(
            action_id=f"r-{kind}",
            kind="returned",
            host_id="h1",
            cluster="c0",
            domain="d0",
            operation=operation,
            ts=9,
            finding_id="f1",
            rule="nic_repeat_host",
        )
        (resolved,) = alerts_for(back)
        assert (resolved["payload"]["alertname"], resolved["payload"]["status"]) == (name, "resolved")
        assert resolved["payload"]["labels"] == p["labels"]
        Codec().encode(fired)
