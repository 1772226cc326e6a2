"""The planner decides in event-time order: the same findings give the same actions in any arrival order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from streams.core.actions import Action
from streams.core.findings import Finding
from streams.core.fleet.lifecycle import FleetState
from streams.core.planning.order import Horizon, Mark, OrderedPlan
from streams.core.planning.planner import Planner
from streams.core.policy import Policy
from streams.testing import START_TS
from tests.streams import factories as f

HOUR = 3_600_000
SOURCES = ("errors/0", "errors/1", "cluster/0")
Step = tuple[str, Finding | Mark]


def ordered(policy: Policy, size: int = 10) -> OrderedPlan:
    return OrderedPlan(Planner(policy), frozenset(SOURCES), {}, size=lambda domain: size)


def run(
    plan: OrderedPlan, steps: list[tuple[str, Finding | Mark]], state: FleetState | None = None
) -> list[Action]:
    state = state if state is not None else FleetState()
    out: list[Action] = []
    for source, item in steps:
        if isinstance(item, Finding):
            out += plan.finding(state, item, "d0")
        else:
            out += plan.progress(state, [(source, item)])
        plan.settle()  # as the worker does once the actions are in the log
    return out


def drained(actions: list[Action]) -> list[str]:
    return [a.host_id for a in actions if a.kind == "drain_requested"]


def test_two_findings_for_the_last_slot_go_to_the_earlier_one_whichever_arrives_first(policy: Policy) -> None:
    early = f.finding("h1", ts=START_TS + 10)
    late = f.finding("h2", ts=START_TS + 20)
    idle = [(s, Mark(START_TS, idle=True)) for s in SOURCES if s != "errors/1"]
    past = ("errors/1", Mark(START_TS + HOUR))
    first_early = [*idle, ("errors/1", early), ("errors/1", late), past]
    first_late = [*idle, ("errors/1", late), ("errors/1", early), past]
    assert drained(run(ordered(policy), first_early)) == drained(run(ordered(policy), first_late)) == ["h1"]
    # deciding on arrival, the slot goes to whichever came first: what the order fixes
    arrival = Planner(policy)
    assert drained(arrival.on_finding(FleetState(), late, "d0", 10)) == ["h2"]


def test_a_finding_waits_for_every_source_and_a_quiet_one_holds_nothing_back(policy: Policy) -> None:
    plan, state = ordered(policy), FleetState()
    assert plan.finding(state, f.finding("h1", ts=START_TS + 10), "d0") == []
    assert plan.progress(state, [("errors/0", Mark(START_TS + HOUR))]) == []  # two sources unheard of
    assert plan.progress(state, [("errors/1", Mark(START_TS + HOUR))]) == []
    assert plan.progress(state, [("cluster/0", Mark(START_TS + 5))]) == []  # the slow-host source is behind
    released = plan.progress(state, [("cluster/0", Mark(None, idle=True))])  # caught up: holds nothing back
    plan.settle()
    assert drained(released) == ["h1"] and plan.held == {}


def test_a_finding_that_comes_while_every_source_is_idle_is_released_by_its_sources_next_progress(
    policy: Policy,
) -> None:
    plan, state = ordered(policy), FleetState()
    assert run(plan, [(s, Mark(START_TS, idle=True)) for s in SOURCES], state) == []
    assert plan.finding(state, f.finding("h1", ts=START_TS + 10), "d0") == []
    # its source, caught up again, has handled the record that raised it: nothing earlier is on its way
    released = plan.progress(state, [("errors/0", Mark(START_TS + 9, idle=True))])
    plan.settle()
    assert drained(released) == ["h1"] and plan.held == {}


def test_a_decided_finding_stays_held_until_its_actions_are_in_the_log(policy: Policy) -> None:
    """A worker killed after deciding but before publishing restarts with the finding still held."""
    held: dict[str, object] = {}
    idle = [(s, Mark(START_TS, idle=True)) for s in SOURCES]
    plan, state = OrderedPlan(Planner(policy), frozenset(SOURCES), held, size=lambda d: 10), FleetState()
    plan.finding(state, f.finding("h1", ts=START_TS + 10), "d0")
    assert drained(plan.progress(state, idle)) == ["h1"]
    assert len(held) == 1  # decided, not settled: the actions may not be in the log yet

    # killed before publishing: the log (so the folded state) never got the actions
    again = OrderedPlan(Planner(policy), frozenset(SOURCES), held, size=lambda d: 10)
    assert drained(again.progress(FleetState(), idle)) == ["h1"]

    # killed after publishing, before settling: the state folded from the log has them, nothing twice
    after = OrderedPlan(Planner(policy), frozenset(SOURCES), held, size=lambda d: 10)
    assert after.progress(state, idle) == []
    after.settle()
    assert held == {}


def test_a_finding_at_or_before_what_was_released_is_decided_at_once(policy: Policy) -> None:
    plan, state = ordered(policy), FleetState()
    run(plan, [(s, Mark(START_TS, idle=True)) for s in SOURCES], state)
    plan.finding(state, f.finding("h1", ts=START_TS + 10), "d0")
    plan.progress(state, [("errors/0", Mark(START_TS + 9, idle=True))])  # releases up to START_TS + 10
    plan.progress(state, [("errors/0", Mark(START_TS + 9))])  # busy again: the horizon is back at +9
    decided = plan.finding(state, f.finding("h2", ts=START_TS + 10), "d0")
    assert [a.kind for a in decided if a.host_id == "h2"][:1] == ["suspected"]
    plan.settle()
    assert plan.late == 1 and plan.held == {}


def test_a_finding_behind_the_horizon_is_decided_at_once_and_counted_late(policy: Policy) -> None:
    plan, state = ordered(policy), FleetState()
    run(plan, [(s, Mark(START_TS + HOUR)) for s in SOURCES], state)
    assert drained(plan.finding(state, f.finding("h1", ts=START_TS), "d0")) == ["h1"]
    assert plan.late == 1


def test_a_re_delivered_finding_is_decided_once(policy: Policy) -> None:
    plan, state = ordered(policy), FleetState()
    steps: list[Step] = [
        ("errors/0", f.finding("h1", ts=START_TS + 1)),
        *[(s, Mark(START_TS + 2)) for s in SOURCES],
    ]
    first = run(plan, steps, state)
    assert drained(first) == ["h1"]
    assert run(plan, steps, state) == []


def test_the_horizon_is_the_slowest_busy_source_and_every_time_only_moves_on() -> None:
    h = Horizon(frozenset(SOURCES))
    for s, ts in zip(SOURCES, (30, 10, 20), strict=True):
        h.note(s, Mark(ts))
    assert h.value() == 10
    h.note("errors/1", Mark(5))  # a replay after a crash reports an older time
    assert h.value() == 10
    h.note("errors/1", Mark(None, idle=True))
    assert h.value() == 20 and not h.all_idle()


# -- the property: any interleaving of the sources' messages gives the same actions -------------

DOMAIN_HOSTS = [f"h{i}" for i in range(6)]


@st.composite
def sources(draw: st.DrawFn) -> dict[str, list[Step]]:
    """Each source's messages in its own order: findings by time, a progress mark after each batch."""
    out: dict[str, list[Step]] = {}
    n = 0
    for source in SOURCES:
        steps: list[Step] = []
        t = START_TS
        for _ in range(draw(st.integers(1, 4))):
            for _ in range(draw(st.integers(0, 3))):
                t += draw(st.integers(1, 6 * HOUR))
                host = draw(st.sampled_from(DOMAIN_HOSTS))
                action = draw(st.sampled_from(["rma", "reboot", "diagnostics"]))
                n += 1
                steps.append((source, f.finding(host, ts=t, action=action, fid=f"f{n}")))
            t += draw(st.integers(0, HOUR))
            steps.append((source, Mark(t)))
        steps.append((source, Mark(t + 400 * 24 * HOUR, idle=True)))
        out[source] = steps
    return out


def interleave(per_source: dict[str, list[Step]], picks: list[int]) -> list[Step]:
    """One arrival order that keeps each source's own order (as one Kafka partition does)."""
    queues = {s: list(steps) for s, steps in per_source.items()}
    out: list[Step] = []
    i = 0
    while any(queues.values()):
        live = [s for s in SOURCES if queues[s]]
        source = live[picks[i % len(picks)] % len(live)] if picks else live[0]
        out.append(queues[source].pop(0))
        i += 1
    return out


@settings(max_examples=60, deadline=None)
@given(
    per_source=sources(),
    a=st.lists(st.integers(0, 2), max_size=40),
    b=st.lists(st.integers(0, 2), max_size=40),
)
def test_any_arrival_order_gives_the_same_actions(
    policy: Policy, per_source: dict[str, list[Step]], a: list[int], b: list[int]
) -> None:
    one = run(ordered(policy), interleave(per_source, a))
    other = run(ordered(policy), interleave(per_source, b))
    assert [x.action_id for x in one] == [x.action_id for x in other]
