"""Maintenance planner: domain capacity, serialised work, deferral/release, train halt, idempotence."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from streams.alerts import alerts_for
from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState, replay
from streams.core.planning.budget import budget
from streams.core.planning.planner import Planner
from streams.core.policy import Policy, load_policy
from streams.testing import START_TS
from tests.streams import factories as f

HOUR = 3_600_000
DAY = 24 * HOUR


def kinds(actions: list[Action], host: str | None = None) -> list[str]:
    return [a.kind for a in actions if host is None or a.host_id == host]


def test_budget_never_below_one() -> None:
    assert budget(8, 10) == 1 and budget(100, 10) == 10 and budget(30, 25) == 7


def test_first_finding_drains_and_opens_rma(policy: Policy) -> None:
    actions = Planner(policy).on_finding(FleetState(), f.finding("h1"), "d0", 20)
    assert kinds(actions) == ["suspected", "drain_requested", "drained", "rma_opened"]
    assert len({a.action_id for a in actions}) == 4
    assert all(a.domain == "d0" and a.ts == START_TS for a in actions)
    assert [a.caused_by for a in actions[1:]] == [a.action_id for a in actions[:-1]]
    assert [x["payload"]["alertname"] for a in actions for x in alerts_for(a)] == ["NewRMA"]


def test_capacity_defers_then_releases_when_a_host_returns(policy: Policy) -> None:
    planner, state = Planner(policy), FleetState()
    planner.on_finding(state, f.finding("h1", action="reboot"), "d0", 10)  # capacity 1 of 10
    second = planner.on_finding(state, f.finding("h2", ts=START_TS + 1), "d0", 10)
    assert kinds(second) == ["suspected", "deferred"]
    assert planner.reconcile(state, "d0", 10, START_TS + HOUR - 1) == []  # reboot takes 1 h
    later = planner.reconcile(state, "d0", 10, START_TS + HOUR)
    assert kinds(later, "h1") == ["repaired", "verified", "returned"]
    assert kinds(later, "h2") == ["released", "drain_requested", "drained", "rma_opened"]
    assert all(a.ts == START_TS + HOUR for a in later)  # completions at the due time, not the tick


def test_one_operation_per_host_handed_over_without_returning(policy: Policy) -> None:
    planner, state = Planner(policy), FleetState()
    planner.on_finding(state, f.finding("h1", action="reboot"), "d0", 40)
    queued = planner.on_finding(state, f.finding("h1", ts=START_TS + 5, action="rma"), "d0", 40)
    assert kinds(queued) == ["suspected"]  # waits: the host is in a reboot
    done = planner.reconcile(state, "d0", 40, START_TS + HOUR)
    assert kinds(done) == ["repaired", "verified", "rma_opened"]  # no 'returned' in between
    assert state.hosts["h1"].current is not None and state.hosts["h1"].current.operation == "rma"


def test_same_operation_on_a_busy_host_is_absorbed(policy: Policy) -> None:
    planner, state = Planner(policy), FleetState()
    planner.on_finding(state, f.finding("h1"), "d0", 40)
    absorbed = planner.on_finding(state, f.finding("h1", ts=START_TS + 9), "d0", 40)
    assert kinds(absorbed) == ["absorbed"] and alerts_for(absorbed[0]) == []
    assert "rma for f-h1-" in absorbed[0].reason and absorbed[0].caused_by is None


def test_an_absorbed_finding_delivered_again_after_the_host_returned_opens_no_new_work(
    policy: Policy,
) -> None:
    planner, state = Planner(policy), FleetState()
    log = planner.on_finding(state, f.finding("h1", action="reboot"), "d0", 40)
    again = f.finding("h1", ts=START_TS + 9, action="reboot")
    log += planner.on_finding(state, again, "d0", 40)
    log += planner.reconcile(state, "d0", 40, START_TS + DAY)
    assert kinds(log)[-1] == "returned"
    # a replay upstream sends the absorbed finding again: neither the live state nor one rebuilt
    # from the log (a restarted worker) opens a second reboot for evidence already handled
    assert planner.on_finding(state, again, "d0", 40) == []
    assert Planner(policy).on_finding(replay(log), again, "d0", 40) == []


def test_redelivered_finding_emits_nothing(policy: Policy) -> None:
    planner, state = Planner(policy), FleetState()
    fnd = f.finding("h1")
    first = planner.on_finding(state, fnd, "d0", 20)
    assert planner.on_finding(state, fnd, "d0", 20) == []
    # a restarted worker rebuilds the state from the log and also emits nothing new
    assert Planner(policy).on_finding(replay(first), fnd, "d0", 20) == []


def test_failure_buffer_exhausted_halts_the_train_and_resumes(policy: Policy) -> None:
    planner, state = Planner(policy), FleetState()  # 8 hosts: capacity 1, failure buffer 2
    out: list[Action] = []
    for n in range(3):
        out += planner.on_finding(state, f.finding(f"h{n}", ts=START_TS + n, action="reboot"), "d0", 8)
    assert kinds(out).count("train_halted") == 1 and state.domains["d0"].halted
    halted = next(a for a in out if a.kind == "train_halted")
    assert [x["payload"]["alertname"] for x in alerts_for(halted)] == ["TrainHalted"]
    assert kinds(out).count("drain_requested") == 1
    more = planner.on_finding(state, f.finding("h5", ts=START_TS + 10, action="reboot"), "d0", 8)
    assert kinds(more) == ["suspected", "deferred"]  # halted: no drain, no second halt
    # the reboot returns h0, but 3 hosts still fail (> 2): the train stays halted for a person
    later = planner.reconcile(state, "d0", 8, START_TS + 3 * HOUR)
    assert kinds(later) == ["repaired", "verified", "returned"] and state.domains["d0"].halted
    resumed = planner.resume(state, "d0", START_TS + 4 * HOUR, "manual")
    assert kinds(resumed) == ["train_resumed"] and resumed[0].caused_by == halted.action_id
    drained = planner.reconcile(state, "d0", 8, START_TS + 4 * HOUR)
    assert kinds(drained) == [
        "released",
        "drain_requested",
        "drained",
        "reboot_requested",
    ]  # within capacity 1


def test_train_resumes_by_itself_when_failures_fit_again(policy: Policy) -> None:
    planner, state = Planner(policy), FleetState()  # 8 hosts: capacity 1, failure buffer 2
    planner.on_finding(state, f.finding("h0", action="reboot"), "d0", 8)
    planner.on_finding(state, f.finding("h1", ts=START_TS + 1, action="reboot"), "d0", 8)
    halt = planner.on_finding(state, f.finding("h2", ts=START_TS + 2, action="rma"), "d0", 8)
    assert "train_halted" in kinds(halt)
    # h1 and h2 are absorbed onto h0? no: different hosts; h0's reboot returns, h1 was deferred
    out = planner.reconcile(state, "d0", 8, START_TS + HOUR)
    assert kinds(out)[:3] == ["repaired", "verified", "returned"] and "train_resumed" in kinds(out)
    assert kinds(out, "h1")[:2] == ["released", "drain_requested"]


def test_ids_are_deterministic(policy: Policy) -> None:
    a = Planner(policy).on_finding(FleetState(), f.finding("h1"), "d0", 20)
    b = Planner(policy).on_finding(FleetState(), f.finding("h1"), "d0", 20)
    assert [x.action_id for x in a] == [x.action_id for x in b]


# -- property: random findings and ticks never overdraw a domain; halts when failures overflow --

OPS = ["rma", "reboot", "cable_replacement", "diagnostics"]
step = st.one_of(
    st.tuples(st.just("finding"), st.integers(0, 11), st.sampled_from(OPS), st.integers(0, 6 * HOUR)),
    st.tuples(st.just("tick"), st.just(0), st.just(""), st.integers(0, 3 * DAY)),
)


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(step, min_size=1, max_size=30),
    size=st.integers(4, 12),
    cap=st.sampled_from([10.0, 25.0, 50.0]),
)
def test_property_buffers_hold(steps: list[tuple[str, int, str, int]], size: int, cap: float) -> None:
    base = load_policy()
    policy = Policy.model_validate(
        {
            **base.model_dump(),
            "planner": {**base.planner.model_dump(), "capacity_buffer_pct": cap, "failure_buffer_pct": 25.0},
        }
    )
    planner, state = Planner(policy), FleetState()
    capacity, failure_budget = budget(size, cap), budget(size, 25.0)
    now = START_TS
    log: list[Action] = []
    for n, (what, host, op, dt) in enumerate(steps):
        now += dt
        was_halted = state.peek_domain("d0").halted
        if what == "finding":
            new = planner.on_finding(
                state, f.finding(f"h{host % size}", ts=now, action=op, fid=f"f{n}"), "d0", size
            )
        else:
            new = planner.reconcile(state, "d0", size, now)
        log += new
        assert len(state.out_hosts("d0")) <= capacity  # never more of the domain out than the buffer
        if len(state.failing_hosts("d0")) > failure_budget:
            assert state.peek_domain("d0").halted  # failures past the buffer: the train has stopped
        if was_halted and state.peek_domain("d0").halted:
            assert "drain_requested" not in kinds(new)  # a halted train drains nobody
        for host_state in state.hosts.values():  # one operation at a time per host
            assert host_state.current is None or host_state.current not in host_state.waiting
    assert len({a.action_id for a in log}) == len(log)
    assert replay(log) == state


def test_a_chain_a_crash_cut_short_is_finished_after_the_replay(policy: Policy) -> None:
    """The steps of a decision are published one by one: a worker dying between two must not strand the host.

    For every prefix of a reboot's whole log (drain, repair, return), the state rebuilt from that
    prefix, given the finding again (Faust re-delivers it) and a later tick, ends with the host back.
    """
    planner = Planner(policy)
    finding = f.finding("h1", action="reboot")
    live = FleetState()
    log = planner.on_finding(live, finding, "d0", 10) + planner.reconcile(live, "d0", 10, START_TS + HOUR)
    assert kinds(log)[-1] == "returned"
    for cut in range(1, len(log)):
        state = replay(log[:cut])
        again = Planner(policy)
        resumed = again.on_finding(state, finding, "d0", 10) + again.reconcile(
            state, "d0", 10, START_TS + 2 * HOUR
        )
        assert state.hosts["h1"].status == "in_service", kinds(log[:cut])
        assert kinds(log[:cut]) + kinds(resumed) == kinds(log)  # nothing twice, nothing new
        assert {a.action_id for a in log[:cut] + resumed} == {a.action_id for a in log}


def test_work_handed_over_and_due_by_a_finding_completes_before_the_halt_decision(policy: Policy) -> None:
    """The decision depends on event time only: the same with or without ticks in between."""

    def run(ticks: list[int]) -> tuple[list[str], dict[str, str]]:
        planner, state = Planner(policy), FleetState()
        planner.on_finding(state, f.finding("h0", action="reboot", fid="a"), "d0", 8)
        planner.on_finding(state, f.finding("h0", ts=START_TS + 1, action="diagnostics", fid="b"), "d0", 8)
        planner.on_finding(state, f.finding("h1", ts=START_TS + 2, action="rma", fid="c"), "d0", 8)
        for tick in ticks:
            planner.reconcile(state, "d0", 8, tick)
        last = f.finding("h2", ts=START_TS + 6 * HOUR, action="reboot", fid="d")
        out = planner.on_finding(state, last, "d0", 8)
        return kinds(out), {h: s.status for h, s in state.hosts.items()}

    untimed, ticked = run([]), run([START_TS + HOUR, START_TS + 6 * HOUR])
    assert "train_halted" not in untimed[0]
    assert untimed[1] == ticked[1]  # the same hosts out, back and waiting


def test_work_signature_asks_for_a_tick_only_when_reconcile_has_work(policy: Policy) -> None:
    planner, state = Planner(policy), FleetState()
    assert planner.work_signature(state, "d0", 10, START_TS) is None  # nothing in the domain
    planner.on_finding(state, f.finding("h1", action="reboot"), "d0", 10)  # capacity 1 of 10
    planner.on_finding(state, f.finding("h2", ts=START_TS + 1), "d0", 10)  # deferred
    assert planner.work_signature(state, "d0", 10, START_TS + HOUR - 1) is None  # the reboot is not due
    due = planner.work_signature(state, "d0", 10, START_TS + HOUR)
    assert due is not None
    assert planner.reconcile(state, "d0", 10, START_TS + HOUR)  # and reconcile does act on it
    assert planner.work_signature(state, "d0", 10, START_TS + HOUR) != due


def _repaired_once(planner: Planner, state: FleetState) -> int:
    """h1 goes through one RMA and returns; the return's event time."""
    planner.on_finding(state, f.finding("h1", fid="f-first"), "d0", 20)
    returned = planner.reconcile(state, "d0", 20, START_TS + 5 * DAY)
    assert kinds(returned, "h1")[-1] == "returned"
    return START_TS + 5 * DAY


def test_a_host_flagged_again_soon_after_a_repair_is_escalated_to_an_rma_and_pages(policy: Policy) -> None:
    planner, state = Planner(policy), FleetState()
    back = _repaired_once(planner, state)
    again = planner.on_finding(
        state, f.finding("h1", ts=back + 10 * DAY, action="reboot", fid="f-again"), "d0", 20
    )
    assert kinds(again, "h1")[:2] == ["suspected", "escalated"]
    assert {a.operation for a in again} == {"rma"} and "rma_opened" in kinds(again, "h1")
    escalated = again[1]
    assert escalated.caused_by == again[0].action_id and "10.0 d after returning from rma" in escalated.reason
    assert [x["payload"]["alertname"] for x in alerts_for(escalated)] == ["RepeatAfterRepair"]
    assert replay(again, replay([])) is not None  # the log folds


def test_a_finding_long_after_the_repair_is_not_escalated(policy: Policy) -> None:
    planner, state = Planner(policy), FleetState()
    back = _repaired_once(planner, state)
    # beyond the repair history's window too (an RMA 31 d before escalates now: see test_planner_wakes)
    later = planner.on_finding(
        state, f.finding("h1", ts=back + 181 * DAY, action="reboot", fid="f-late"), "d0", 20
    )
    assert "escalated" not in kinds(later) and {a.operation for a in later} == {"reboot"}
    off = policy.model_copy(update={"planner": policy.planner.model_copy(update={"escalate_within": 0})})
    planner2, state2 = Planner(off), FleetState()
    back2 = _repaired_once(planner2, state2)
    soon = planner2.on_finding(
        state2, f.finding("h1", ts=back2 + DAY, action="reboot", fid="f-soon"), "d0", 20
    )
    assert "escalated" not in kinds(soon)
