"""The planner's decisions for change campaigns in one maintenance domain at an event time (pure).

A campaign visits its domains in name order, at most ``max_parallel_domains`` at once (a domain is
passed once each host in it has the version, or waits behind a repair for it), its canary hosts
first. A visit is a planner operation, ``change``: it is queued only while the domain's capacity
buffer has room (counting every host out, whatever took it out) so repairs keep their place, and a
host in repair has the change queued behind its repair: handed over when the repair is verified,
never drained while in it, never visited twice. The host side completes the change (its agent
reports the version, or ``fleetpulse ops record HOST change_applied``); a burn-in with no hardware
finding verifies it, then it returns. Past the gate (``trains.gate_pct`` of the scope) the train
waits until the safety test accepts the change, and halts by itself when it finds it worse.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol

from schemas import FLEET
from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState, HostState
from streams.core.ids import action_id
from streams.core.planning.budget import DomainBuffers
from streams.core.planning.emit import emit, hand_over_or_return, op_action
from streams.core.policy import Policy
from streams.trains.campaign import CHANGE, Campaign
from streams.trains.safety import DAY_MS, ClassVerdict, SequentialTest, SprtSettings, classifier

Reported = Mapping[str, tuple[str, int]]  # component -> (version, event time)


class FleetView(Protocol):
    """What a campaign needs of the inventory (``streams.core.inventory.Inventory`` is one)."""

    changes: int  # bumped by every record applied (the conductor's memo of scopes and turns keys on it)

    def domains(self) -> dict[str, int]: ...
    def hosts_in(self, domain: str) -> frozenset[str]: ...
    def cluster_of(self, host_id: str) -> str: ...
    def domain_cluster(self, domain: str) -> str: ...
    def versions_of(self, host_id: str) -> Reported: ...


class Conductor:
    def __init__(self, policy: Policy, view: FleetView, buffers: DomainBuffers) -> None:
        self.policy, self.view, self.buffers = policy, view, buffers
        t = policy.trains
        self.sprt = SprtSettings(t.rate_ratio, t.alpha, t.beta, classes=max(1, len(t.classes) + 1))  # + slow
        self.classify = classifier(t.classes, {r.name: r.classes for r in policy.rules})
        self._tests: dict[tuple[int, str, int], SequentialTest] = {}  # (fold, campaign, scope) -> its test
        self._passed: dict[tuple[int, str], set[str]] = {}  # (fold, campaign) -> domains passed
        self._domains: dict[str, tuple[int, list[str]]] = {}  # campaign -> (view.changes, its domains)
        self._todo: dict[
            str, tuple[tuple[int, int], list[str]]
        ] = {}  # campaign -> (stamp, domains not passed)

    # -- the campaign's shape -------------------------------------------------------------------

    def domains(self, camp: Campaign) -> list[str]:
        """The campaign's domains in visiting order."""
        memo = self._domains.get(camp.campaign_id)
        if memo is not None and memo[0] == self.view.changes:
            return memo[1]
        wanted = set(camp.hosts)
        found = [
            d
            for d in sorted(self.view.domains())
            if (not camp.scope or d in camp.scope or self.view.domain_cluster(d) in camp.scope)
            and (not wanted or wanted & self.view.hosts_in(d))
        ]
        self._domains[camp.campaign_id] = (self.view.changes, found)
        return found

    def targets(self, camp: Campaign, domain: str) -> list[str]:
        hosts = self.view.hosts_in(domain)
        return sorted(hosts & set(camp.hosts) if camp.hosts else hosts)

    def scope_size(self, camp: Campaign) -> int:
        return sum(len(self.targets(camp, d)) for d in self.domains(camp))

    def reported(self, state: FleetState, host_id: str, component: str) -> tuple[str, int] | None:
        """The host's newest report of ``component``: its agent's (inventory) or its side's record (actions)."""
        found = [r for r in (self.view.versions_of(host_id).get(component),
                             state.trains.reported.get(host_id, {}).get(component)) if r is not None]  # fmt: skip
        return max(found, key=lambda r: r[1]) if found else None

    def at_version(self, state: FleetState, camp: Campaign, host_id: str) -> bool:
        got = self.reported(state, host_id, camp.component)
        return got is not None and got[0] == camp.version

    def settled(self, state: FleetState, camp: Campaign, host_id: str) -> bool:
        """Passed: done, already at the version, or queued behind a repair (changed when it is repaired)."""
        visit = camp.visits.get(host_id)
        if visit is None:
            return self.at_version(state, camp, host_id)
        if visit.done_ts is not None:
            return True
        host = state.hosts.get(host_id)
        return visit.queued_ts is not None and host is not None and _behind_repair(host, camp.campaign_id)

    def domain_turn(self, state: FleetState, camp: Campaign, domain: str) -> bool:
        """Whether ``domain`` is among the first ``max_parallel_domains`` the campaign has not passed."""
        return domain in self.todo(state, camp, camp.max_parallel_domains)

    def todo(self, state: FleetState, camp: Campaign, limit: int | None = None) -> list[str]:
        """The campaign's domains not passed yet, in order (the first ``limit`` of them).

        A passed domain stays passed: its hosts are done or wait behind repairs, whose hand-over
        and completion do not depend on the domain's turn.
        """
        passed = self._passed.setdefault((id(state.trains), camp.campaign_id), set())
        out: list[str] = []
        for d in self.domains(camp):
            if d in passed:
                continue
            if all(self.settled(state, camp, h) for h in self.targets(camp, d)):
                passed.add(d)
                continue
            out.append(d)
            if limit is not None and len(out) >= limit:
                break
        return out

    # -- decisions ------------------------------------------------------------------------------

    def step(self, state: FleetState, domain: str, size: int, now: int) -> list[Action]:
        out: list[Action] = []
        for camp in sorted(state.trains.campaigns.values(), key=lambda c: (c.started_ts, c.campaign_id)):
            if camp.status == "completed":
                continue
            self._complete_visits(state, camp, domain, now, out)
            if camp.status == "aborted":
                self._withdraw(state, camp, domain, now, out)
            if camp.status != "running" or self._safety(state, camp, domain, now, out):
                continue
            self._queue(state, camp, domain, size, now, out)
            done = all(v.done_ts is not None for v in camp.visits.values() if v.queued_ts is not None)
            if done and not self.todo(state, camp, 1):
                emit(
                    state,
                    out,
                    _campaign_action(camp, "campaign_completed", domain, now, "every host has the version"),
                )
        return out

    def signature(self, state: FleetState, domain: str, now: int) -> tuple[Any, ...] | None:
        """What ``step`` would act on in ``domain`` (None: no campaign open), for the planner's ticks."""
        open_ = [c for c in state.trains.campaigns.values() if c.status != "completed"]
        if not open_:
            return None
        burn_in = self.policy.trains.burn_in
        return tuple(
            (c.campaign_id, c.status, c.accepted, len(c.visits), c.upgraded, len(c.faults),
             sum(v.done_ts is not None for v in c.visits.values()),
             sum(v.applied_ts is not None and v.done_ts is None and v.applied_ts + burn_in <= now for v in c.visits.values()),
             len(state.trains.reported))
            for c in open_
        ) + (self.view.changes,)  # fmt: skip

    def verdicts(self, state: FleetState, camp: Campaign, now: int) -> dict[str, ClassVerdict]:
        scope = self.scope_size(camp)
        key = (id(state.trains), camp.campaign_id, scope)
        test = self._tests.get(key)
        if test is None:
            test = self._tests[key] = SequentialTest(scope, self.classify, self.sprt)
        test.feed(camp.faults)
        up = (
            sum(max(0, now - v.applied_ts) for v in camp.visits.values() if v.applied_ts is not None) / DAY_MS
        )
        control = max(0.0, scope * max(0, now - camp.started_ts) / DAY_MS - up)
        return test.verdicts((up, control))

    def _safety(self, state: FleetState, camp: Campaign, domain: str, now: int, out: list[Action]) -> bool:
        """Halt the campaign when a fault class is worse on the new version (True), open the gate when accepted."""
        if camp.rollback_of is not None:
            return False  # going back to the version the fleet ran before
        verdicts = self.verdicts(state, camp, now)
        worse = [v for name, v in sorted(verdicts.items()) if name != "all" and v.state == "halt"]
        if worse:
            why = "; ".join(v.evidence() for v in worse)
            why += f". Roll back: fleetpulse train abort {camp.campaign_id} --rollback"
            emit(state, out, _campaign_action(camp, "campaign_halted", domain, now, why, n=camp.halts + 1))
            return True
        gate = [verdicts.get(name) for name in sorted(self.policy.trains.classes)]
        if camp.accepted:
            return False
        if gate and all(v is not None and v.state == "accepted" for v in gate):
            why = "; ".join(v.evidence() for v in gate if v is not None)
            emit(state, out, _campaign_action(camp, "gate_opened", domain, now, why))
        elif (filled := self._gate_filled(camp)) is not None and now - filled >= self.policy.trains.gate_soak:
            why = f"no fault class worse after {(now - filled) / DAY_MS:.1f} d at the gate: " + (
                "; ".join(v.evidence() for v in verdicts.values()) or "no faults"
            )
            emit(state, out, _campaign_action(camp, "gate_opened", domain, now, why))
        return False

    def _queue(
        self, state: FleetState, camp: Campaign, domain: str, size: int, now: int, out: list[Action]
    ) -> None:
        if state.peek_domain(domain).halted or not self.domain_turn(state, camp, domain):
            return  # the failure buffer halted the domain's train, or it is not this domain's turn
        budget = self._budget(state, camp)
        room = self.buffers.capacity(state, domain, size) - self.buffers.counts(state, domain, now)[0]
        for host_id in self.targets(camp, domain):
            visit = camp.visits.get(host_id)
            if (
                visit is not None and (visit.queued_ts is not None or visit.done_ts is not None)
            ) or self.at_version(state, camp, host_id):
                continue
            host = state.hosts.get(host_id)
            in_repair = host is not None and host.has_failure
            if not in_repair and (room <= 0 or budget <= 0):
                continue  # a host in repair waits there for its change; any other needs room and budget
            room -= not in_repair
            budget -= not in_repair
            previous = self.reported(state, host_id, camp.component)
            emit(
                state, out, self._visit_action(camp, host_id, domain, now, previous[0] if previous else None)
            )

    def _gate_filled(self, camp: Campaign) -> int | None:
        """When the gate's hosts were all verified (None: not yet)."""
        gate = max(camp.canary, math.ceil(self.scope_size(camp) * self.policy.trains.gate_pct / 100))
        done = sorted(v.done_ts for v in camp.visits.values() if v.done_ts is not None)
        return done[gate - 1] if gate and len(done) >= gate else None

    def _budget(self, state: FleetState, camp: Campaign) -> float:
        """How many more hosts may start their change now: the canaries are verified before anyone else,
        and past the gate the safety test must have accepted the change first. Hosts whose change waits
        behind a repair are not counted: they are skipped and revisited."""
        done = sum(v.done_ts is not None for v in camp.visits.values())
        active = sum(
            v.done_ts is None
            and (v.queued_ts is not None or v.requested_ts is not None)
            and not _behind_repair(state.hosts[h], camp.campaign_id)
            for h, v in camp.visits.items()
            if h in state.hosts
        )
        if done < camp.canary:
            return camp.canary - done - active
        if not camp.accepted and camp.rollback_of is None:
            gate = math.ceil(self.scope_size(camp) * self.policy.trains.gate_pct / 100)
            return max(camp.canary, gate) - done - active
        return math.inf

    def _visit_action(
        self, camp: Campaign, host_id: str, domain: str, now: int, previous: str | None
    ) -> Action:
        return Action(
            action_id=action_id(host_id, "suspected", CHANGE, camp.campaign_id),
            kind="suspected", host_id=host_id, cluster=self.view.cluster_of(host_id), domain=domain,
            operation=CHANGE, ts=now, finding_id=camp.campaign_id, rule=previous,
            reason=f"campaign {camp.campaign_id}: {camp.component} {previous or '?'} -> {camp.version}",
        )  # fmt: skip

    def _complete_visits(
        self, state: FleetState, camp: Campaign, domain: str, now: int, out: list[Action]
    ) -> None:
        burn_in = self.policy.trains.burn_in
        for host_id in sorted(state.peek_domain(domain).hosts):
            host = state.hosts[host_id]
            op = host.current
            if op is None or op.operation != CHANGE or op.finding_id != camp.campaign_id:
                continue
            visit = camp.visits[host_id]
            if op.phase == "in_repair":
                got = self.reported(state, host_id, camp.component)
                if got is not None and got[0] == camp.version and got[1] >= (op.started_ts or 0):
                    op_action(state, out, host, op, "change_applied", max(now, got[1]), caused_by=op.last_action_id,
                              reason=f"{camp.component} {got[0]} reported")  # fmt: skip
                continue
            if op.phase == "repaired" and visit.applied_ts is not None:
                failed = next((w for w in host.waiting if w.operation != CHANGE), None)
                if failed is None and now < visit.applied_ts + burn_in:
                    continue
                why = f"burn-in failed: {failed.operation} for {failed.rule}" if failed else "burn-in passed"
                prev = op_action(
                    state, out, host, op, "verified", now, caused_by=op.last_action_id, reason=why
                )
                hand_over_or_return(state, out, host, op, now, prev)
            elif op.phase == "verified":  # a crash cut the chain short
                hand_over_or_return(state, out, host, op, now, op.last_action_id)

    def _withdraw(self, state: FleetState, camp: Campaign, domain: str, now: int, out: list[Action]) -> None:
        """Take back an aborted campaign's visits that have not started (hosts changing finish their change)."""
        for host_id in sorted(state.peek_domain(domain).hosts):
            host = state.hosts[host_id]
            for op in list(host.waiting):
                if op.operation == CHANGE and op.finding_id == camp.campaign_id:
                    op_action(
                        state,
                        out,
                        host,
                        op,
                        "withdrawn",
                        now,
                        caused_by=op.last_action_id,
                        reason="campaign aborted",
                    )


def _behind_repair(host: HostState, campaign_id: str) -> bool:
    """The campaign's change waits on the host behind other work (a repair)."""
    mine = [op for op in host.waiting if op.operation == CHANGE and op.finding_id == campaign_id]
    return bool(mine) and (host.current is not None or host.waiting[0] is not mine[0])


def _campaign_action(camp: Campaign, kind: str, domain: str, now: int, reason: str, n: int = 1) -> Action:
    return Action(
        action_id=action_id(camp.campaign_id, kind, CHANGE, f"{n}"),
        kind=kind, host_id=FLEET, cluster=FLEET, domain=domain, operation=CHANGE, ts=now,
        finding_id=camp.campaign_id, rule=f"{camp.component}={camp.version}", reason=reason,
    )  # fmt: skip
