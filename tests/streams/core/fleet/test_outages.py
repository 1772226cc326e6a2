"""Hosts out for incidents and operators' steps: the fold, measured repair times, idempotence."""

from __future__ import annotations

from typing import Any

from schemas import Codec, IncidentReported, OperatorEventRecorded
from streams.core.fleet.lifecycle import LOG_EVENT_TYPES, FleetState, apply_logged
from streams.core.fleet.outages import Outages
from streams.core.fleet.retention import forget
from streams.tailer import LogTailer

T0 = 1_700_000_000_000
HOUR = 3_600_000


def incident(eid: str, host: str, start: int, end: int | None, cause: str = "hbm3") -> dict[str, Any]:
    payload = {
        "cause": cause,
        "source_class": "GPU/DBE",
        "source_text": "",
        "component": None,
        "component_kind": None,
        "start_ts": start,
        "end_ts": end,
    }
    return IncidentReported(event_id=eid, host_id=host, cluster="c", ts=start, payload=payload).to_record()


def step(
    host: str, kind: str, ts: int, ticket: str | None = "T1", cause: str | None = None
) -> dict[str, Any]:
    payload = {"kind": kind, "actor": "ops", "reason": "", "ticket_id": ticket, "cause": cause}
    eid = f"ops-{host}-{kind}-{ticket}-{ts}"
    return OperatorEventRecorded(event_id=eid, host_id=host, cluster="c", ts=ts, payload=payload).to_record()


def test_an_incident_keeps_its_host_out_from_start_to_end() -> None:
    o = Outages()
    o.apply(incident("i1", "h1", T0, T0 + HOUR))
    assert not o.out_at("h1", T0 - 1)
    assert o.out_at("h1", T0) and o.out_at("h1", T0 + HOUR - 1)
    assert not o.out_at("h1", T0 + HOUR)
    o.apply(incident("i2", "h2", T0, None))
    assert o.out_at("h2", T0 + 1000 * HOUR)  # open: out until someone returns it


def test_operator_steps_open_and_close_by_ticket_and_returned_closes_everything() -> None:
    o = Outages()
    o.apply(incident("i1", "h1", T0, None, cause="psu"))
    o.apply(step("h1", "repair_started", T0 + HOUR, cause="psu"))
    o.apply(step("h1", "repair_finished", T0 + 3 * HOUR))
    assert o.out_at("h1", T0 + 4 * HOUR)  # the incident is still open
    o.apply(step("h1", "returned_to_service", T0 + 5 * HOUR, ticket=None))
    assert not o.out_at("h1", T0 + 5 * HOUR)
    assert o.durations["psu"] == [2 * HOUR, 5 * HOUR]


def test_measured_repair_time_is_the_median_once_there_are_enough() -> None:
    o = Outages()
    for i, hours in enumerate([1, 9, 4]):
        o.apply(incident(f"i{i}", f"h{i}", T0, T0 + hours * HOUR))
    assert o.repair_time_ms("hbm3", min_samples=4) is None
    assert o.repair_time_ms("hbm3", min_samples=3) == 4 * HOUR
    assert o.repair_time_ms("psu", min_samples=1) is None
    (stat,) = o.repair_stats(reset_within=HOUR)
    assert (stat.cause, stat.samples, stat.median_ms) == ("hbm3", 3, 4 * HOUR)
    assert stat.p90_ms == 8 * HOUR  # numpy's linear interpolation: 4 + 0.8 * (9 - 4)


def test_the_fleet_state_folds_them_once_next_to_actions() -> None:
    state = FleetState()
    rec = incident("i1", "h1", T0, T0 + HOUR)
    apply_logged(state, rec)
    apply_logged(state, rec)
    apply_logged(state, step("h2", "out_of_service", T0 + 2 * HOUR))
    assert state.count == 2 and state.clock == T0 + 2 * HOUR
    assert state.outages.durations == {"hbm3": [HOUR]}
    assert state.outages.out_at("h2", T0 + 3 * HOUR)


def test_the_log_tailer_folds_incidents_and_steps_instead_of_skipping_them() -> None:
    state = FleetState()
    codec = Codec()
    tailer = LogTailer("actions", {}, lambda r: apply_logged(state, r), codec, event_type=LOG_EVENT_TYPES)
    tailer.feed(codec.encode(incident("i1", "h1", T0, None)))
    tailer.feed(codec.encode(step("h2", "rma_shipped", T0)))
    assert (tailer.records, tailer.foreign, tailer.rejected) == (2, 0, 0)
    assert state.outages.out_at("h1", T0) and state.outages.out_at("h2", T0)
    only_actions = LogTailer("actions", {}, lambda r: None, codec, event_type="MaintenanceActionRecorded")
    only_actions.feed(codec.encode(incident("i1", "h1", T0, None)))
    assert only_actions.foreign == 1


def test_a_zero_length_spell_pairs_whichever_step_is_folded_first() -> None:
    """Start and end at one time: a start sorts before an end, so the host is never left out (item 2)."""
    o = Outages()
    o.apply(step("h1", "repair_finished", T0, cause="psu"))  # its start comes next, at the same time
    o.apply(step("h1", "repair_started", T0))
    assert not o.out_at("h1", T0) and not o.out_at("h1", T0 + 1000 * HOUR)
    assert o.durations["psu"] == [0]
    o.apply(incident("z", "h2", T0, T0))  # a zero-length incident keeps nobody out
    assert not o.out_at("h2", T0)


def test_the_domain_index_of_outage_changes_follows_later_records_and_new_members() -> None:
    o = Outages()
    o.apply(incident("i1", "h1", T0, T0 + HOUR))
    o.apply(incident("i2", "h9", T0 + 2 * HOUR, None))  # another domain's host
    assert o.domain_changes("d0", ["h1", "h2"]) == [T0, T0 + HOUR]
    o.apply(incident("i3", "h2", T0 + 30 * 60_000, T0 + 3 * HOUR))  # folded after the index was read
    o.apply(step("h1", "out_of_service", T0 + 4 * HOUR))
    expected = [T0, T0 + 30 * 60_000, T0 + HOUR, T0 + 3 * HOUR, T0 + 4 * HOUR]
    assert o.domain_changes("d0", ["h1", "h2"]) == expected
    assert o.domain_changes("d0", ["h1", "h2", "h9"]) == sorted([*expected, T0 + 2 * HOUR])  # a new member
    assert o.domain_changes("d0", ["h1"]) == [T0, T0 + HOUR, T0 + 4 * HOUR]  # a member gone
    o.apply(incident("i4", "h2", T0 + 5 * HOUR, None))
    assert o.domain_changes("d0", ["h1"]) == [T0, T0 + HOUR, T0 + 4 * HOUR]


def test_repair_stats_per_operation_kind_are_what_the_draws_pick_from_and_a_reset_is_no_repair() -> None:
    o = Outages()
    for i, minutes in enumerate([10, 12, 14, 600, 1200]):  # three resets, two repairs
        o.apply(incident(f"i{i}", f"h{i}", T0, T0 + minutes * 60_000))
    o.apply(step("h9", "rma_shipped", T0, ticket="R1", cause="hbm3"))
    o.apply(step("h9", "rma_replaced", T0 + 100 * HOUR, ticket="R1"))
    (stat,) = o.repair_stats(reset_within=HOUR)
    assert stat.samples == 6 and stat.median_ms == 307 * 60_000  # (14 + 600) / 2 min: the time out, all of it
    ops = stat.by_operation
    assert (ops["reboot"]["samples"], ops["reboot"]["median_ms"]) == (3, 12 * 60_000)
    assert (ops["repair"]["samples"], ops["repair"]["median_ms"]) == (2, 15 * HOUR)
    assert (ops["rma"]["samples"], ops["rma"]["median_ms"]) == (1, 100 * HOUR)
    for op, found in ops.items():  # the planner's draw for the operation picks among the same times
        draws = {
            o.repair_draw_ms("hbm3", op, reset_within=HOUR, min_samples=1, unit=u / 10) for u in range(10)
        }
        assert draws <= set(o.measured_for("hbm3", op, HOUR)) and len(draws) == found["samples"]


def test_retention_drops_the_domain_index_with_the_outages_it_forgets() -> None:
    state = FleetState()
    apply_logged(state, incident("i1", "h1", T0, T0 + HOUR))
    apply_logged(state, incident("i2", "h2", T0 + 100 * HOUR, None))
    assert state.outages.domain_changes("d0", ["h1", "h2"]) == [T0, T0 + HOUR, T0 + 100 * HOUR]
    forget(state, keep_ids=10, ended_horizon_ms=HOUR)
    assert state.outages.domain_changes("d0", ["h1", "h2"]) == [T0 + 100 * HOUR]
