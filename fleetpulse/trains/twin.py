"""A fleet under change campaigns, in process: the planner's real fold and decisions, a simulated host side.

The host side applies a requested change after ``apply_minutes`` (its agent reports the version);
error events arrive per host and fault class at ``rates`` (per host-day), times the factor the
running version has (``producers.changes``); findings at ``finding_rate`` become the planner's
repairs (reboots), which take hosts out and fill the failure buffer as they do live. Every step
records, per domain, how many hosts are out for a change and for anything, so the capacity
guarantee is checked at every step, not sampled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from producers.changes import DEFAULT_BASELINE, VersionsSpec, rate_factor, slowdown
from schemas import HostInventoried, HostVersionsReported
from streams.core.actions import Action
from streams.core.findings import Finding
from streams.core.fleet.lifecycle import FleetState, apply_logged
from streams.core.inventory import Inventory
from streams.core.planning.planner import Planner
from streams.core.policy import Policy
from streams.trains.campaign import CHANGE

MINUTE = 60_000
DAY = 86_400_000
CLASS_RULE = {"xid": "fatal_xid_burst", "ecc": "dram_uce_repeat_host", "link": "link_flap_repeat_port"}


@dataclass(frozen=True)
class TwinConfig:
    clusters: int = 2
    domains_per_cluster: int = 16
    hosts_per_domain: int = 16
    rates: dict[str, float] = field(default_factory=lambda: {"xid": 0.2, "ecc": 0.4, "link": 0.1})
    finding_rate: float = 0.004  # findings (repairs) per host-day, Llama 3's interruptions
    slow_rate: float = 0.01  # slow-host findings per host-day on the old version
    apply_minutes: int = 30
    step_minutes: int = 10
    step_window_minutes: int = 60  # a step-time window of the hosts in service every this long (0: none)
    step_noise: float = 0.02  # a host's hourly step time around its baseline (log sd)
    start_ts: int = 1_798_761_600_000  # 2027-01-01


@dataclass
class TwinReport:
    steps: int = 0
    max_change_out: dict[str, int] = field(
        default_factory=dict
    )  # domain -> most hosts out for a change at once
    max_domains_changing: int = 0  # most domains with a host out for a change at one step
    over_capacity: int = 0  # steps at which a domain had more hosts out than its buffer (changes and repairs)
    timeline: list[tuple[int, int, int]] = field(default_factory=list)  # (ts, hosts on the new version, out)


class Twin:
    def __init__(self, policy: Policy, config: TwinConfig, versions: VersionsSpec, seed: int) -> None:
        self.policy, self.config, self.versions = policy, config, versions
        self.rng = np.random.default_rng(seed)
        self.step_rng = np.random.default_rng(
            [seed, 1]
        )  # its own stream: the faults' draws stay as they were
        self.inventory = Inventory()
        self.state = FleetState()
        self.planner = Planner(policy, members=self.inventory.hosts_in, view=self.inventory)
        self.now = config.start_ts
        self.hosts: list[tuple[str, str, str]] = []  # (host, cluster, domain)
        for c in range(config.clusters):
            for d in range(config.domains_per_cluster):
                for h in range(config.hosts_per_domain):
                    self.hosts.append((f"c{c}-d{d:03d}-h{h:02d}", f"c{c}", f"c{c}-md{d:03d}"))
        self.running: dict[str, dict[str, tuple[str, int]]] = {}  # host -> component -> (version, since)
        self.report = TwinReport()
        self.actions: list[
            Action
        ] = []  # every action the planner took, in order (what fleet.actions would hold)
        self.index = {h: i for i, (h, _, _) in enumerate(self.hosts)}
        self.changed: set[int] = set()  # hosts that ran a version a change lists (the only ones with factors)
        self._seq = 0
        for host, cluster, domain in self.hosts:
            self._send(
                HostInventoried.EVENT_TYPE,
                host,
                cluster,
                {
                    "rack": f"{domain}-r",
                    "fabric": "infiniband",
                    "maintenance_domain": domain,
                    "sku": "H100",
                    "install_ts": 0,
                    "gpu_count": 8,
                    "nic_ports": 8,
                },
            )
            self._report(host, cluster, dict(DEFAULT_BASELINE))

    def _send(self, event_type: str, host: str, cluster: str, payload: dict[str, Any]) -> None:
        self._seq += 1
        self.inventory.apply(
            {
                "event_id": f"twin-{self._seq}",
                "event_type": event_type,
                "host_id": host,
                "cluster": cluster,
                "ts": self.now,
                "payload": payload,
            }
        )

    def _report(self, host: str, cluster: str, versions: dict[str, str]) -> None:
        for component, version in versions.items():
            self.running.setdefault(host, {})[component] = (version, self.now)
        if self.versions.changes and versions != DEFAULT_BASELINE:
            self.changed.add(self.index[host])
        self._send(
            HostVersionsReported.EVENT_TYPE, host, cluster, {**versions, "reason": "change", "actor": "agent"}
        )

    def record(self, record: dict[str, Any]) -> None:
        """A person's step (``streams.trains.commands``) reaching the log."""
        apply_logged(self.state, record)

    def run(self, until_ms: int, stop: Callable[[Twin], bool] = lambda twin: False) -> TwinReport:
        while self.now < until_ms and not stop(self):
            self.now += self.config.step_minutes * MINUTE
            self._host_side()
            self._faults()
            self._step_times()
            for domain in self._busy():
                self.actions += self.planner.reconcile(
                    self.state, domain, self.inventory.domain_size(domain), self.now
                )
            self._measure()
        return self.report

    def _busy(self) -> list[str]:
        """The domains a step reconciles: those with open work, and those whose turn it is in a campaign (a live
        worker ticks only the domains whose work signature changed; reconciling the others changes nothing)."""
        busy = {self.state.hosts[h].domain for h in self.state.op_hosts.values()}
        busy |= {h.domain for h in self.state.hosts.values() if h.current is not None}
        if self.planner.trains is not None:
            busy |= self.planner.trains.due_domains(self.state)
        return sorted(busy)

    def _host_side(self) -> None:
        """Hosts out for a change apply it after ``apply_minutes`` and report the new version."""
        for host_id, host in self.state.hosts.items():
            op = host.current
            if op is None or op.operation != CHANGE or op.phase != "in_repair" or op.started_ts is None:
                continue
            if self.now - op.started_ts >= self.config.apply_minutes * MINUTE:
                camp = self.state.trains.campaigns[op.finding_id]
                if self.running[host_id].get(camp.component, ("", 0))[0] != camp.version:
                    self._report(host_id, host.cluster, {camp.component: camp.version})

    def _factor(self, host: str, fault_class: str) -> float:
        f = 1.0
        for component, (version, since) in self.running[host].items():
            f *= rate_factor(self.versions, component, version, fault_class, self.now - since)
        return f

    def _faults(self) -> None:
        dt = self.config.step_minutes * MINUTE / DAY
        trains = self.state.trains
        n = len(self.hosts)
        for cls, rate in self.config.rates.items():
            factors = np.ones(n)
            for i in self.changed:
                factors[i] = self._factor(self.hosts[i][0], cls)
            for i in np.flatnonzero(self.rng.poisson(rate * dt * factors)).tolist():
                host, cluster, domain = self.hosts[i]
                trains.observe_fault(self.now, host, cluster, domain, CLASS_RULE[cls])
        slow = np.zeros(n)
        for i in self.changed:
            running = self.running[self.hosts[i][0]].items()
            slow[i] = max(slowdown(self.versions, c, v, self.now - s) for c, (v, s) in running)
        # a slowed host is flagged within hours
        slow_rate = np.where(slow >= 0.02, 6.0, self.config.slow_rate)
        for i in np.flatnonzero(self.rng.poisson(slow_rate * dt)).tolist():
            host, cluster, domain = self.hosts[i]
            trains.observe_fault(self.now, host, cluster, domain, "slow_host")
        for i in np.flatnonzero(self.rng.poisson(np.full(n, self.config.finding_rate * dt))).tolist():
            self._finding(*self.hosts[i])

    def _step_times(self) -> None:
        """Every host in service's step time relative to its baseline, slowed by the versions it runs."""
        every = self.config.step_window_minutes * MINUTE
        if not every or self.now % every >= self.config.step_minutes * MINUTE:
            return
        rel = np.exp(self.config.step_noise * self.step_rng.standard_normal(len(self.hosts)))
        for i in self.changed:
            running = self.running[self.hosts[i][0]].items()
            rel[i] *= 1 + max(slowdown(self.versions, c, v, self.now - s) for c, (v, s) in running)
        out = {h for h, st in self.state.hosts.items() if st.is_out}
        window = [(h, c, d, float(rel[i])) for i, (h, c, d) in enumerate(self.hosts) if h not in out]
        self.state.trains.observe_steps(self.now, window)

    def _finding(self, host: str, cluster: str, domain: str, action: str = "reboot") -> None:
        """A finding on a host: the planner opens its repair (``action``) as it does live."""
        self._seq += 1
        finding = Finding(
            finding_id=f"twin-fnd-{self._seq}",
            detector="repeat_offender",
            rule="fatal_xid_burst",
            scope="host",
            scope_key=host,
            host_id=host,
            cluster=cluster,
            ts=self.now,
            error_class="fell_off_bus",
            count=5,
            window_start=self.now - DAY,
            window_end=self.now,
            recommended_action=action,
        )
        self.actions += self.planner.on_finding(
            self.state, finding, domain, self.inventory.domain_size(domain)
        )

    def _measure(self) -> None:
        r = self.report
        r.steps += 1
        changing = 0
        for domain in self.inventory.domains():
            members = self.inventory.hosts_in(domain)
            hosts = [self.state.hosts[h] for h in members if h in self.state.hosts]
            out = sum(h.is_out for h in hosts)
            change = sum(h.is_out and h.current is not None and h.current.operation == CHANGE for h in hosts)
            r.max_change_out[domain] = max(r.max_change_out.get(domain, 0), change)
            changing += change > 0
            r.over_capacity += (
                out > self.planner.buffers.capacity(self.state, domain, len(members)) and change > 0
            )
        r.max_domains_changing = max(r.max_domains_changing, changing)
        if r.steps % 6 == 0:
            upgraded = sum(c.upgraded for c in self.state.trains.campaigns.values() if c.rollback_of is None)
            r.timeline.append((self.now, upgraded, sum(h.is_out for h in self.state.hosts.values())))

    def version_counts(self, component: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        for versions in self.running.values():
            v = versions[component][0]
            counts[v] = counts.get(v, 0) + 1
        return counts
