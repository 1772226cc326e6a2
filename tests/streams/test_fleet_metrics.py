"""Fleet-state gauges: what a scrape reads from the fold and the domains' buffers."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from streams.core.fleet.lifecycle import FleetState
from streams.core.planning.planner import Planner
from streams.core.policy import Policy
from streams.fleet_metrics import MAX_DOMAIN_LABELS, FleetCollector, FleetView, fleet_families
from streams.testing import START_TS
from tests.streams import factories as f

HOUR = 3_600_000


def halted_domain(policy: Policy) -> tuple[FleetState, FleetView]:
    """d0 of 8 hosts (capacity 1, failure buffer 2): one reboot out, two more failures halt the train."""
    planner, state = Planner(policy), FleetState()
    for n in range(3):
        planner.on_finding(state, f.finding(f"h{n}", ts=START_TS + n, action="reboot"), "d0", 8)
    state.clock = START_TS + 2 * HOUR  # two hours of event time later
    return state, FleetView(state, [planner.budgets(state, "d0", 8), planner.budgets(state, "d1", 16)])


def scrape(view: FleetView) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(FleetCollector(lambda: view))
    return registry


def test_hosts_out_deferred_work_and_the_halted_train(policy: Policy) -> None:
    state, view = halted_domain(policy)
    r = scrape(view)
    assert r.get_sample_value("fleetpulse_fleet_hosts_out", {"domain": "d0", "reason": "reboot"}) == 1
    assert r.get_sample_value("fleetpulse_fleet_trains_halted") == 1
    assert r.get_sample_value("fleetpulse_fleet_domain_train_halted", {"domain": "d0"}) == 1
    assert r.get_sample_value("fleetpulse_fleet_domain_train_halted", {"domain": "d1"}) == 0
    deferred = [op for h in state.hosts.values() for op in h.waiting if op.phase == "deferred"]
    assert deferred  # the halted train defers the others
    assert r.get_sample_value("fleetpulse_fleet_deferred_operations", {"domain": "d0"}) == len(deferred)
    oldest = (state.clock - min(op.suspected_ts for op in deferred)) / 1000
    assert r.get_sample_value("fleetpulse_fleet_deferred_oldest_age_seconds", {"domain": "d0"}) == oldest
    assert r.get_sample_value("fleetpulse_fleet_domain_capacity_left_hosts", {"domain": "d0"}) == 0
    assert r.get_sample_value("fleetpulse_fleet_domain_failure_budget_left_hosts", {"domain": "d0"}) == -1
    assert r.get_sample_value("fleetpulse_fleet_domain_size_hosts", {"domain": "d1"}) == 16
    total_open = sum(
        s.value for m in r.collect() if m.name == "fleetpulse_fleet_operations_open" for s in m.samples
    )
    assert total_open == 3


def test_an_operator_outage_counts_as_operator_and_a_host_once(policy: Policy) -> None:
    state, view = halted_domain(policy)
    for kind, ticket in (("out_of_service", "T1"), ("repair_started", "T2")):
        state.outages.apply(
            {
                "event_id": f"e-{ticket}",
                "event_type": "OperatorEventRecorded",
                "host_id": "h7",
                "ts": START_TS,
                "payload": {"kind": kind, "ticket_id": ticket, "cause": "psu"},
            }
        )
    state.host("h7", "c0", "d0")
    r = scrape(view)
    assert r.get_sample_value("fleetpulse_fleet_hosts_out", {"domain": "d0", "reason": "operator"}) == 1


def test_domains_beyond_the_label_bound_add_up_under_other(policy: Policy) -> None:
    planner, state = Planner(policy), FleetState()
    budgets = [planner.budgets(state, f"d{n:05d}", 4) for n in range(MAX_DOMAIN_LABELS + 10)]
    families = {m.name: m for m in fleet_families(FleetView(state, budgets))}
    sizes = {s.labels["domain"]: s.value for s in families["fleetpulse_fleet_domain_size_hosts"].samples}
    assert len(sizes) == MAX_DOMAIN_LABELS + 1 and sizes["other"] == 10 * 4


def test_registering_reads_no_fleet_and_the_names_carry_the_prefix(policy: Policy) -> None:
    calls: list[int] = []

    def source() -> FleetView:
        calls.append(1)
        return halted_domain(policy)[1]

    registry = CollectorRegistry()
    registry.register(FleetCollector(source))
    assert calls == []
    text = generate_latest(registry).decode()
    assert calls == [1] and "fleetpulse_fleet_hosts_out{" in text
    names = {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE")}
    assert all(n.startswith("fleetpulse_") for n in names)
