"""Repeat-offender rule: sliding event-time windows per scope, one finding per episode."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from streams.core.classify import classify
from streams.core.findings import Finding
from streams.core.policy import Policy
from streams.core.repeat import HostState, fold_host, observe
from streams.testing import START_TS
from tests.streams import factories as f

DAY = 86_400_000


def run(records: list[dict[str, Any]], policy: Policy) -> list[Finding]:
    """Feed error records through classify + observe with a dict as the state table (every window, as
    ``fold_host`` passes a host's)."""
    table: dict[str, Any] = {}
    found: list[Finding] = []
    for record in records:
        signal = classify(record, policy)
        if signal is None:
            continue
        new_states, finding = observe(signal, table, policy)
        table.update(new_states)
        if finding:
            found.append(finding)
    return found


def dram_fault(ts: int, gpu: int = 2, host: str = "h1") -> list[dict[str, Any]]:
    """One DRAM UCE fault = an ECC event AND an XID 48 at the same time."""
    return [f.ecc(gpu=gpu, host=host, ts=ts), f.xid(48, gpu=gpu, host=host, ts=ts)]


def test_two_dram_uce_on_one_gpu_within_7_days_is_an_rma(policy: Policy) -> None:
    found = run(dram_fault(START_TS) + dram_fault(START_TS + 3 * DAY), policy)
    assert len(found) == 1
    fnd = found[0]
    assert (fnd.detector, fnd.rule, fnd.scope, fnd.scope_key) == (
        "repeat_offender",
        "dram_uce_repeat_gpu",
        "gpu",
        "h1/2",
    )
    assert fnd.recommended_action == "rma" and fnd.count == 2
    assert (fnd.window_start, fnd.window_end, fnd.ts) == (START_TS, START_TS + 3 * DAY, START_TS + 3 * DAY)


def test_one_fault_with_two_signals_counts_once(policy: Policy) -> None:
    assert run(dram_fault(START_TS), policy) == []


def test_outside_the_window_no_finding(policy: Policy) -> None:
    assert run(dram_fault(START_TS) + dram_fault(START_TS + 8 * DAY), policy) == []


def test_replayed_event_is_not_recounted(policy: Policy) -> None:
    first = dram_fault(START_TS)
    assert run(first + first, policy) == []  # same event ids twice (an at-least-once replay)


def test_host_scope_lemon_and_gpu_rule_preferred(policy: Policy) -> None:
    assert run(dram_fault(START_TS, gpu=1) + dram_fault(START_TS + DAY, gpu=4), policy) == []
    host_lemon = run(
        dram_fault(START_TS, gpu=1)
        + dram_fault(START_TS + DAY, gpu=4)
        + dram_fault(START_TS + 2 * DAY, gpu=6),
        policy,
    )
    assert [(x.rule, x.scope_key) for x in host_lemon] == [("dram_uce_repeat_host", "h1")]
    gpu_lemon = run(dram_fault(START_TS, gpu=1) + dram_fault(START_TS + DAY, gpu=1), policy)
    assert [(x.rule, x.scope_key) for x in gpu_lemon] == [("dram_uce_repeat_gpu", "h1/1")]


def test_events_are_consumed_by_a_finding(policy: Policy) -> None:
    events = dram_fault(START_TS) + dram_fault(START_TS + DAY) + dram_fault(START_TS + 2 * DAY)
    assert len(run(events, policy)) == 1  # the third needs a partner of its own
    assert len(run(events + dram_fault(START_TS + 3 * DAY), policy)) == 2


def test_flaps_on_one_port_vs_single_flaps(policy: Policy) -> None:
    scattered = [f.link(port=p, ts=START_TS + p * 60_000) for p in range(6)]
    assert run(scattered, policy) == []
    repeated = [f.link(port=1, ts=START_TS + k * 600_000) for k in range(3)]  # a burst of 3 in 30 min
    found = run(repeated, policy)
    assert [(x.rule, x.scope_key, x.recommended_action) for x in found] == [
        ("link_flap_repeat_port", "h1/1", "cable_replacement")
    ]
    # a single report carrying several flaps counts by its count field
    assert len(run([f.link(port=2, count=3)], policy)) == 1
    # noise flaps on one port a day apart never add up
    assert run([f.link(port=4, ts=START_TS + k * DAY) for k in range(5)], policy) == []


def test_noise_never_fires(policy: Policy) -> None:
    noise = [f.xid(x, ts=START_TS + k) for k, x in enumerate([13, 31, 43, 45, 63, 68, 92] * 5)]
    noise += [f.ecc(correctable=True, ts=START_TS + k) for k in range(10)]
    noise += [f.aer("correctable", ts=START_TS + k) for k in range(10)]
    assert run(noise, policy) == []


def test_finding_id_is_deterministic(policy: Policy) -> None:
    events = dram_fault(START_TS) + dram_fault(START_TS + DAY)
    assert run(events, policy)[0].finding_id == run(events, policy)[0].finding_id


def test_row_remap_failure_acts_at_once(policy: Policy) -> None:
    found = run([f.ecc(row_remap="remap_failure"), f.xid(64)], policy)
    assert [(x.rule, x.detector) for x in found] == [("row_remap_failure", "critical_fault")]


def host_history() -> list[dict[str, Any]]:
    """One host's errors in partition order: three findings (two GPU rules, one port) among noise."""
    records = dram_fault(START_TS, gpu=1) + [f.xid(13, ts=START_TS + 1)] + dram_fault(START_TS + DAY, gpu=1)
    records += [f.link(port=1, ts=START_TS + 2 * DAY + k * 600_000) for k in range(3)]
    records += dram_fault(START_TS + 3 * DAY, gpu=5) + dram_fault(START_TS + 4 * DAY, gpu=5)
    return records


def fold_from(
    state: HostState | None, records: list[dict[str, Any]], start: int, policy: Policy
) -> tuple[HostState | None, list[tuple[int, str]]]:
    """Fold records[start:] at offsets start.. of partition 0; (state, [(offset, finding id) sent])."""
    sent = []
    for offset in range(start, len(records)):
        signal = classify(records[offset], policy)
        if signal is None:
            continue
        step = fold_host(state, signal, (0, offset), policy)
        state = step.state if step.state is not None else state
        if step.finding is not None:
            sent.append((offset, step.finding.finding_id))
    return state, sent


def test_resuming_from_any_commit_with_any_stored_state_sends_the_same_findings(policy: Policy) -> None:
    """A crash leaves the state of some offset k (the last write that landed) and a commit c <= k + 1.

    Whatever k and c, what was sent before c plus what the replay sends is exactly what one
    uninterrupted run sends: the same ids, none missing, none new.
    """
    records = host_history()
    _, reference = fold_from(None, records, 0, policy)
    assert len({fid for _, fid in reference}) == 3
    for k in range(-1, len(records)):
        stored = fold_from(None, records[: k + 1], 0, policy)[0]
        for commit in range(0, k + 2):
            before = {fid for offset, fid in reference if offset < commit}
            _, replayed = fold_from(stored, records, commit, policy)
            assert before | {fid for _, fid in replayed} == {fid for _, fid in reference}, (k, commit)


def test_a_replayed_record_that_raised_a_finding_sends_it_again_and_changes_nothing(policy: Policy) -> None:
    records = dram_fault(START_TS) + dram_fault(START_TS + DAY)
    state, sent = fold_from(None, records, 0, policy)
    ((offset, fid),) = sent
    again = fold_host(state, classify(records[offset], policy), (0, offset), policy)  # type: ignore[arg-type]
    assert again.state is None and again.finding is not None and again.finding.finding_id == fid


def test_a_duplicate_record_at_a_later_offset_counts_once(policy: Policy) -> None:
    first = dram_fault(START_TS)
    assert fold_from(None, first + first, 0, policy)[1] == []  # the producer retried: same event ids


def test_a_late_record_moves_the_offset_but_counts_nothing(policy: Policy) -> None:
    records = [f.link(port=0, ts=START_TS + 10 * DAY), *dram_fault(START_TS), *dram_fault(START_TS + DAY)]
    state, sent = fold_from(None, records, 0, policy)
    assert (
        sent == [] and state is not None and state.pos is not None and state.pos[1] >= 2
    )  # late DRAM records read
    assert list(state.rules) == ["link_flap_repeat_port|h1/0"]  # and not counted


def test_events_a_finding_used_are_consumed_by_the_windows_of_every_other_rule(policy: Policy) -> None:
    hour = DAY // 24
    gsp = [f.xid(119, gpu=0, ts=START_TS + n * hour) for n in range(2)]  # gsp_repeat_gpu: 2 of 3
    nvlink = [f.xid(74, gpu=1, ts=START_TS + (2 + n) * hour) for n in range(2)]
    burst = run([*gsp, *nvlink, *dram_fault(START_TS + 4 * hour, gpu=3)], policy)
    assert [(x.rule, x.count) for x in burst] == [("fatal_xid_burst", 5)]
    # a third GSP error on GPU 0: the two before it went into the RMA, so no reboot on the same evidence
    after = run(
        [*gsp, *nvlink, *dram_fault(START_TS + 4 * hour, gpu=3), f.xid(119, gpu=0, ts=START_TS + 5 * hour)],
        policy,
    )
    assert [x.rule for x in after] == ["fatal_xid_burst"]
    # without the burst the same three GSP errors are a reboot: the rule itself still fires
    alone = run([*gsp, f.xid(119, gpu=0, ts=START_TS + 5 * hour)], policy)
    assert [x.rule for x in alone] == ["gsp_repeat_gpu"]


def test_five_fatal_xids_in_a_day_are_an_rma_even_when_a_gpu_reboot_rule_fires_on_the_same_event(
    policy: Policy,
) -> None:
    """The strongest remedy wins: the fifth fatal XID also completes a GPU's three GSP errors."""
    hour = DAY // 24
    records = [
        f.xid(79, gpu=1, ts=START_TS),
        f.xid(79, gpu=2, ts=START_TS + hour),
        *(f.xid(xid, gpu=0, ts=START_TS + (2 + n) * hour) for n, xid in enumerate((119, 119, 120))),
    ]
    found = run(records, policy)
    assert [(x.rule, x.recommended_action, x.count) for x in found] == [("fatal_xid_burst", "rma", 5)]
    # of two rules with the same remedy, the more specific scope still wins
    gpu_lemon = run(dram_fault(START_TS, gpu=1) + dram_fault(START_TS + DAY, gpu=1), policy)
    assert [x.rule for x in gpu_lemon] == ["dram_uce_repeat_gpu"]


def test_host_state_round_trips_through_the_tables_json_and_reads_unversioned_records(policy: Policy) -> None:
    records = dram_fault(START_TS) + dram_fault(START_TS + DAY)
    state, sent = fold_from(None, records, 0, policy)
    assert state is not None and len(sent) == 1
    stored = json.loads(json.dumps(state.stored()))  # what the Faust table's JSON serializer keeps
    assert HostState.from_stored(stored) == state
    legacy = {k: v for k, v in stored.items() if k != "v"}  # written before the state had a version
    assert HostState.from_stored(legacy) == state
    with pytest.raises(msgspec.ValidationError):
        HostState.from_stored({**stored, "pos": "not a position"})


def test_link_downs_spread_over_weeks_meet_the_long_window_rule(policy: Policy) -> None:
    """3 link downs on one port in 28 days (10 days apart: never 2 within the 7-day rule) is a bad cable."""
    downs = [f.link("down", port=3, ts=START_TS + k * 10 * DAY) for k in range(3)]
    found = run(downs, policy)
    assert [(x.rule, x.scope_key, x.recommended_action) for x in found] == [
        ("link_down_repeat_port_long", "h1/3", "cable_replacement")
    ]
    assert run(downs[:2], policy) == []
    assert run([f.link("down", port=3, ts=START_TS + k * 15 * DAY) for k in range(3)], policy) == []  # 30 d


def test_one_gpu_with_several_symptoms_is_an_rma(policy: Policy) -> None:
    """An SRAM error, NVLink errors, then it falls off the bus: one class each, no per-class rule fires."""
    symptoms = [
        f.ecc(memory="sram", gpu=5, ts=START_TS),
        f.xid(74, gpu=5, ts=START_TS + DAY),
        f.xid(79, gpu=5, ts=START_TS + 3 * DAY),
    ]
    found = run(symptoms, policy)
    assert [(x.rule, x.scope_key, x.recommended_action) for x in found] == [
        ("gpu_any_symptom", "h1/5", "rma")
    ]
    spread = [{**e, "payload": {**e["payload"], "gpu": g}} for e, g in zip(symptoms, (1, 2, 5), strict=True)]
    assert run(spread, policy) == []  # three GPUs of one host: not one sick GPU
    assert run([{**symptoms[2], "ts": START_TS + 6 * DAY}, *symptoms[:2]], policy) == []


def test_a_nic_lost_twice_is_a_nic_replacement_not_a_cable(policy: Policy) -> None:
    """A NIC that fell off twice in a month needs a new NIC; a link going down twice keeps the cable rule."""
    lost = [f.link("nic_lost", port=2, ts=START_TS + k * 12 * DAY) for k in range(2)]
    found = run(lost, policy)
    assert [(x.rule, x.scope_key, x.recommended_action) for x in found] == [
        ("nic_lost_repeat_port", "h1/2", "nic_replacement")
    ]
    assert run(lost[:1], policy) == []
    downs = [f.link("down", port=2, ts=START_TS + k * 3 * DAY) for k in range(2)]
    assert [(x.rule, x.recommended_action) for x in run(downs, policy)] == [
        ("link_down_repeat_port", "cable_replacement")
    ]


def _event(error_class: str, ts: int, part: int | None) -> dict[str, Any]:
    """One event of an error class on a host; ``part`` is its GPU or port (None: the record names neither)."""
    if error_class in ("link_down", "nic_lost", "link_flap"):
        kind = {"link_down": "down", "link_flap": "flap"}.get(error_class, error_class)
        return f.link(kind, port=part, ts=ts)  # type: ignore[arg-type]
    if error_class == "row_remap_failure":
        return f.ecc(gpu=part, row_remap="remap_failure", ts=ts)  # type: ignore[arg-type]
    if error_class in ("dram_uce", "sram_uce"):
        return f.ecc(memory=error_class[:4], gpu=part, ts=ts)  # type: ignore[arg-type]
    return f.xid({"fell_off_bus": 79}[error_class], gpu=part, ts=ts)  # type: ignore[arg-type]


HOST_ONLY_RULES = (
    "dram_uce_repeat_host_unknown",
    "sram_uce_repeat_host_unknown",
    "fell_off_bus_repeat_host_unknown",
    "link_down_repeat_host_unknown",
    "nic_lost_repeat_host_unknown",
    "link_flap_repeat_host_unknown",
    "row_remap_failure_host_unknown",
)


def test_every_per_component_class_has_its_host_only_rule(policy: Policy) -> None:
    # multi-symptom rules (distinct_classes > 1) also count only host-only records, but stand in for no part's rule
    stand_ins = [r.name for r in policy.rules if r.component == "unknown" and r.distinct_classes == 1]
    assert sorted(stand_ins) == sorted(HOST_ONLY_RULES)


@pytest.mark.parametrize("name", HOST_ONLY_RULES)
def test_events_naming_only_the_host_meet_the_host_level_rule(policy: Policy, name: str) -> None:
    """Events without a GPU or port reach no per-component rule: the host-level rule for them fires."""
    rule = next(r for r in policy.rules if r.name == name)
    (error_class,) = rule.classes
    step = rule.window // rule.count
    host_only = [_event(error_class, START_TS + k * step, None) for k in range(rule.count)]
    found = run(host_only, policy)
    assert [(x.rule, x.scope_key, x.recommended_action) for x in found] == [(name, "h1", rule.action)]
    assert run(host_only[:-1], policy) == []
    # the same faults naming their part (one each) are left to that part's rules
    named = [_event(error_class, START_TS + k * step, k) for k in range(rule.count)]
    assert name not in {x.rule for x in run(named, policy)}
    if rule.count > 1:  # too far apart for the window (a count-1 rule acts on each occurrence)
        spread = [_event(error_class, START_TS + k * (rule.window + DAY), None) for k in range(rule.count)]
        assert run(spread, policy) == []


def test_a_host_only_rule_must_have_host_scope() -> None:
    from streams.core.errors import PolicyError
    from streams.core.policy import parse_policy

    bad = {
        "classes": [{"name": "x", "event_type": "XidRaised", "xids": [79]}],
        "rules": [
            {
                "name": "r",
                "classes": ["x"],
                "scope": "gpu",
                "component": "unknown",
                "count": 2,
                "window": "1d",
                "action": "rma",
            }
        ],
    }
    with pytest.raises(PolicyError, match="its scope is .host."):
        parse_policy(bad)
