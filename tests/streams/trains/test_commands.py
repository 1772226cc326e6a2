"""A person's steps on campaigns: checked against the fold, same ids for the CLI and the HTTP API."""

from __future__ import annotations

import pytest

from schemas import Codec
from streams.alerts import alerts_for
from streams.core.actions import Action
from streams.core.errors import CampaignError
from streams.core.fleet.lifecycle import FleetState, apply, apply_logged
from streams.trains.commands import (
    CampaignSpec,
    change_applied_record,
    parse_change,
    rollback_records,
    start_record,
    step_record,
)

T0 = 1_798_761_600_000


def started(state: FleetState) -> str:
    record = start_record(CampaignSpec(change="driver=560.35", actor="ana", canary=2), T0)
    assert Codec().decode(Codec().encode(record)).record == record
    apply_logged(state, record)
    return str(record["payload"]["campaign_id"])


def test_parse_change_names_the_components() -> None:
    assert parse_change("driver=560.35") == ("driver", "560.35")
    for bad in ("driver", "bios=1", "driver="):
        with pytest.raises(ValueError, match="COMPONENT=VERSION"):
            parse_change(bad)


def test_steps_follow_the_status() -> None:
    state = FleetState()
    cid = started(state)
    with pytest.raises(CampaignError, match="cannot be resumed"):
        step_record(state.trains, cid, "resumed", actor="ana", now_ms=T0 + 1)
    apply_logged(state, step_record(state.trains, cid, "paused", actor="ana", now_ms=T0 + 1))
    assert state.trains.campaigns[cid].status == "paused"
    with pytest.raises(CampaignError, match="unknown campaign"):
        step_record(state.trains, "trn-nope", "paused", actor="ana", now_ms=T0 + 2)


def test_rollback_aborts_and_takes_changed_hosts_back_to_their_version() -> None:
    state = FleetState()
    cid = started(state)
    for host in ("h1", "h2"):
        for kind in ("suspected", "drain_requested", "drained", "change_requested", "change_applied"):
            apply(
                state,
                Action(
                    action_id=f"{host}-{kind}",
                    kind=kind,
                    host_id=host,
                    cluster="c",
                    domain="d",
                    operation="change",
                    ts=T0 + 10,
                    finding_id=cid,
                    rule="550.54.15",
                ),
            )
    records = rollback_records(state.trains, cid, actor="ana", now_ms=T0 + 20)
    assert [r["payload"]["kind"] for r in records] == ["aborted", "started"]
    back = records[1]["payload"]
    assert (back["version"], back["hosts"], back["rollback_of"]) == ("550.54.15", ["h1", "h2"], cid)
    for r in records:
        apply_logged(state, r)
    assert state.trains.campaigns[cid].status == "aborted"


def test_change_applied_is_a_version_report_on_the_actions_log() -> None:
    record = change_applied_record("h1", "driver", "560.35", actor="ops", cluster="c", now_ms=T0)
    assert record["event_type"] == "HostVersionsReported" and record["payload"]["driver"] == "560.35"
    state = FleetState()
    apply_logged(state, Codec().decode(Codec().encode(record)).record)
    assert state.trains.reported["h1"]["driver"] == ("560.35", T0)
    with pytest.raises(CampaignError):
        change_applied_record("h1", "bios", "1", actor="ops", cluster="c", now_ms=T0)


def test_a_campaign_halt_pages_with_its_evidence() -> None:
    halt = Action(
        action_id="a1",
        kind="campaign_halted",
        host_id="-",
        cluster="-",
        domain="d",
        operation="change",
        ts=T0,
        finding_id="trn-1",
        rule="driver=560.35",
        reason="xid: 9 faults ... rate ratio 3.1 [95 % 1.5, 6.4]. Roll back: fleetpulse train abort trn-1 --rollback",
    )
    [alert] = alerts_for(halt)
    assert alert["payload"]["alertname"] == "CampaignHalted" and alert["payload"]["severity"] == "critical"
    assert "--rollback" in alert["payload"]["annotations"]["summary"]
    assert alert["payload"]["labels"]["campaign_id"] == "trn-1"
