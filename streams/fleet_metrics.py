"""The fleet's maintenance state as Prometheus gauges, read from the fold at scrape time.

Nothing is counted twice: the collector reads ``FleetState`` and the domains' buffers when
Prometheus scrapes, so the gauges are what ``/domains`` and ``/findings`` answer at that moment.
Labels are bounded: operations by the policy's vocabulary, reasons by a fixed set, domains by
``MAX_DOMAIN_LABELS`` (the rest add up under ``other``: domain names come from events).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import get_args

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from streams.core.fleet.lifecycle import FleetState
from streams.core.inventory import Inventory
from streams.core.planning.budget import DomainBudget
from streams.core.planning.planner import Planner
from streams.core.policy import Operation

MAX_DOMAIN_LABELS = 1024
OTHER = "other"
OPERATIONS = frozenset(get_args(Operation))


@dataclass(frozen=True, slots=True)
class FleetView:
    """What one scrape reads: the fold and every domain's buffers at the fold's clock."""

    fleet: FleetState
    budgets: list[DomainBudget]


def fleet_view(fleet: FleetState, planner: Planner, inventory: Inventory) -> FleetView:
    """Every domain the inventory or the fold knows, with its buffers at the fold's clock."""
    domains = sorted(set(inventory.domains()) | set(fleet.domains))
    return FleetView(fleet, [planner.budgets(fleet, d, inventory.domain_size(d)) for d in domains])


def _operation(name: str) -> str:
    return name if name in OPERATIONS else OTHER


def _domain_names(budgets: Iterable[DomainBudget]) -> dict[str, str]:
    """Domain -> its label: the first ``MAX_DOMAIN_LABELS`` by name keep theirs, the rest share ``other``."""
    names = sorted({b.domain for b in budgets})
    return {d: (d if i < MAX_DOMAIN_LABELS else OTHER) for i, d in enumerate(names)}


def fleet_families(view: FleetView) -> list[GaugeMetricFamily]:
    """The fleet-state gauges of one view (pure: the collector's work, testable without a registry)."""
    fleet, label = view.fleet, _domain_names(view.budgets)
    now = fleet.clock
    out: Counter[tuple[str, str]] = Counter()
    open_ops: Counter[tuple[str, str]] = Counter()
    deferred: Counter[str] = Counter()
    oldest: dict[str, float] = {}
    for host in fleet.hosts.values():
        domain = label.get(host.domain, OTHER)
        if host.current is not None:
            out[(domain, _operation(host.current.operation))] += 1
            open_ops[(_operation(host.current.operation), host.current.phase)] += 1
        for op in host.waiting:
            open_ops[(_operation(op.operation), op.phase)] += 1
            if op.phase == "deferred":
                deferred[domain] += 1
                age = max(0.0, (now - op.suspected_ts) / 1000.0)
                oldest[domain] = max(oldest.get(domain, 0.0), age)
        if host.current is None:
            for outage in fleet.outages.open_at(host.host_id, now):
                out[(domain, outage.source)] += 1
                break  # a host out for several open outages is one host out
    hosts_out = GaugeMetricFamily(
        "fleetpulse_fleet_hosts_out",
        "Hosts out of service now, by domain and reason (a planned operation's name, incident, operator)",
        labels=["domain", "reason"],
    )
    for (domain, reason), n in sorted(out.items()):
        hosts_out.add_metric([domain, reason], n)
    ops = GaugeMetricFamily(
        "fleetpulse_fleet_operations_open",
        "Open maintenance operations by kind and phase",
        labels=["operation", "phase"],
    )
    for (operation, phase), n in sorted(open_ops.items()):
        ops.add_metric([operation, phase], n)
    deferred_n = GaugeMetricFamily(
        "fleetpulse_fleet_deferred_operations",
        "Operations deferred (domain at capacity or train halted)",
        labels=["domain"],
    )
    deferred_age = GaugeMetricFamily(
        "fleetpulse_fleet_deferred_oldest_age_seconds",
        "Event time since the oldest deferred operation of the domain was suspected",
        labels=["domain"],
    )
    for domain in sorted(deferred):
        deferred_n.add_metric([domain], deferred[domain])
        deferred_age.add_metric([domain], oldest[domain])
    return [hosts_out, ops, deferred_n, deferred_age, *_budget_families(view.budgets, label)]


def _budget_families(budgets: list[DomainBudget], label: dict[str, str]) -> list[GaugeMetricFamily]:
    def family(name: str, doc: str) -> GaugeMetricFamily:
        return GaugeMetricFamily(name, doc, labels=["domain"])

    size = family("fleetpulse_fleet_domain_size_hosts", "Hosts in the maintenance domain")
    left = family(
        "fleetpulse_fleet_domain_capacity_left_hosts",
        "Hosts the capacity buffer still lets out (negative: over the buffer)",
    )
    failing_left = family(
        "fleetpulse_fleet_domain_failure_budget_left_hosts",
        "Failing hosts the failure buffer still allows before the train halts (negative: over)",
    )
    halted = family(
        "fleetpulse_fleet_domain_train_halted", "1 while the domain's maintenance train is halted"
    )
    queued = family("fleetpulse_fleet_domain_queued_operations", "Operations waiting to start in the domain")
    rows: dict[str, list[float]] = {}
    for b in budgets:
        row = rows.setdefault(label.get(b.domain, OTHER), [0, 0, 0, 0, 0])
        for i, v in enumerate((b.size, b.capacity - b.out, b.failure_budget - b.failing, b.halted, b.queued)):
            row[i] += v
    for domain, (n, cap, fail, halt, queue) in sorted(rows.items()):
        size.add_metric([domain], n)
        left.add_metric([domain], cap)
        failing_left.add_metric([domain], fail)
        halted.add_metric([domain], halt)
        queued.add_metric([domain], queue)
    trains = GaugeMetricFamily("fleetpulse_fleet_trains_halted", "Maintenance domains whose train is halted")
    trains.add_metric([], sum(1 for b in budgets if b.halted))
    return [size, left, failing_left, halted, queued, trains]


class FleetCollector(Collector):
    """Collects ``fleet_families`` of the view ``source`` returns at each scrape."""

    def __init__(self, source: Callable[[], FleetView]) -> None:
        self.source = source

    def describe(self) -> Iterator[GaugeMetricFamily]:
        yield from fleet_families(FleetView(FleetState(), []))

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield from fleet_families(self.source())
