"""Event-sourced host lifecycle: the fleet's maintenance state is a fold over ``fleet.actions``.

The log holds the planner's actions and what the fleet recorded beyond them (incidents,
operators' steps: ``streams.core.fleet.outages``); ``apply_logged`` folds any of them.

``fold(state, action) -> state`` is pure (``apply`` is its in-place twin for hot paths);
``replay(actions)`` rebuilds the whole state from the log, and applying an action twice is
a no-op (dedup by ``action_id``), so a replay or a retried worker changes nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from schemas import CampaignRecorded, HostVersionsReported, MaintenanceActionRecorded
from streams.core.actions import ABSORBED, DOMAIN_KINDS, ESCALATED, REQUEST_KINDS, RETIRED, Action
from streams.core.fleet.outages import OUTAGE_EVENT_TYPES, Outages
from streams.trains.campaign import CHANGE, TRAINS_KINDS, Trains

REPAIR_HISTORY = 16  # operations a host's repair history keeps (escalation looks back over them)

Phase = Literal["waiting", "deferred", "draining", "drained", "in_repair", "repaired", "verified"]


@dataclass(slots=True)
class Operation:
    """One maintenance operation on one host, from suspicion to return."""

    op_id: str
    operation: str
    finding_id: str
    rule: str | None
    suspected_ts: int
    phase: Phase = "waiting"
    started_ts: int | None = None  # when the repair itself began (the <op>_requested action)
    last_action_id: str | None = None


@dataclass(slots=True)
class HostState:
    host_id: str
    cluster: str
    domain: str
    current: Operation | None = None  # the host is out of service while this is set
    waiting: list[Operation] = field(default_factory=list)  # serialised: one operation at a time
    completed: int = 0
    last_ts: int = 0
    returned_ts: int | None = None  # when it last returned to service (escalation looks back from here)
    returned_from: str | None = None  # the operation it returned from
    # its repair history: (returned ts, operation) of the last REPAIR_HISTORY operations it returned from
    repairs: list[tuple[int, str]] = field(default_factory=list)
    escalated: list[int] = field(default_factory=list)  # event times of its last REPAIR_HISTORY escalations
    retired: bool = False  # out of service for good (``streams.core.planning.retirement``): its domain no longer counts it

    @property
    def status(self) -> str:
        if self.retired:
            return "retired"
        if self.current is not None:
            return self.current.phase
        if self.waiting:
            return "deferred" if self.waiting[0].phase == "deferred" else "suspected"
        return "in_service"

    @property
    def is_out(self) -> bool:
        return self.current is not None

    @property
    def has_failure(self) -> bool:
        """Out or waiting for a repair (a campaign's planned change is not a failure, nor a verified repair a
        host is kept out after, until its campaign's change has its turn)."""
        current = [self.current] if self.current and self.current.phase != "verified" else []
        return any(op.operation != CHANGE for op in current + self.waiting)


@dataclass(slots=True)
class DomainState:
    domain: str
    halted: bool = False
    halt_action_id: str | None = None
    halts: int = 0
    resumed_ts: int | None = None  # when the train last resumed (a halt needs a failure newer than that)
    last_ts: int = -1  # its newest halt or resume
    queue: list[str] = field(default_factory=list)  # op ids waiting to start, FIFO
    hosts: set[str] = field(default_factory=set)


@dataclass(slots=True)
class FleetState:
    hosts: dict[str, HostState] = field(default_factory=dict)
    domains: dict[str, DomainState] = field(default_factory=dict)
    # ids of the actions and findings applied, in the order applied (dicts as ordered sets): a
    # re-delivered one is a no-op; ``streams.core.fleet.retention`` forgets the oldest
    applied: dict[str, None] = field(default_factory=dict)
    findings: dict[str, None] = field(default_factory=dict)
    op_hosts: dict[str, str] = field(default_factory=dict)  # op_id -> host_id of open operations
    count: int = 0
    outages: Outages = field(default_factory=Outages)
    clock: int = 0  # newest event time folded (actions and outages)
    trains: Trains = field(default_factory=Trains)  # change campaigns (streams.trains)

    def domain(self, name: str) -> DomainState:
        dom = self.domains.get(name)
        if dom is None:
            dom = self.domains[name] = DomainState(name)
        return dom

    def host(self, host_id: str, cluster: str, domain: str) -> HostState:
        host = self.hosts.get(host_id)
        if host is None:
            host = self.hosts[host_id] = HostState(host_id, cluster, domain)
            self.domain(domain).hosts.add(host_id)
        return host

    def peek_domain(self, name: str) -> DomainState:
        """The domain's state without creating it (readers must not change the fold)."""
        return self.domains.get(name) or DomainState(name)

    def out_hosts(self, domain: str) -> list[str]:
        return sorted(h for h in self.peek_domain(domain).hosts if self.hosts[h].is_out)

    def failing_hosts(self, domain: str) -> list[str]:
        return sorted(h for h in self.peek_domain(domain).hosts if self.hosts[h].has_failure)

    def operation(self, host_id: str, op_id: str) -> Operation | None:
        host = self.hosts.get(host_id)
        if host is None:
            return None
        if host.current is not None and host.current.op_id == op_id:
            return host.current
        return next((op for op in host.waiting if op.op_id == op_id), None)


def _start(state: FleetState, host: HostState, op: Operation) -> None:
    """Make a waiting operation current (drain or hand-over from a verified one)."""
    if op in host.waiting:
        host.waiting.remove(op)
        queue = state.domain(host.domain).queue
        if op.op_id in queue:
            queue.remove(op.op_id)
    if host.current is not None and host.current is not op:
        host.completed += 1  # handed over without returning to service in between
    host.current = op


def apply(state: FleetState, action: Action) -> FleetState:
    """Apply one action in place (idempotent); returns ``state`` for chaining."""
    if action.action_id in state.applied:
        return state
    state.applied[action.action_id] = None
    state.count += 1
    state.clock = max(state.clock, action.ts)
    if action.kind in DOMAIN_KINDS:
        dom = state.domain(action.domain)
        dom.halted = action.kind == "train_halted"
        dom.halts += int(dom.halted)
        dom.halt_action_id = action.action_id if dom.halted else None
        if not dom.halted:
            dom.resumed_ts = action.ts
        dom.last_ts = max(dom.last_ts, action.ts)
        return state
    if action.kind in TRAINS_KINDS:
        state.trains.on_action(action)
        return state
    host = state.host(action.host_id, action.cluster, action.domain)
    host.last_ts = max(host.last_ts, action.ts)
    if action.kind == "suspected" or action.operation == CHANGE:
        state.trains.on_action(action)  # a campaign's visit, or a finding its safety test counts
    if action.kind == RETIRED:
        host.retired = True
        return state
    if action.kind in (ABSORBED, ESCALATED):
        if action.finding_id:
            state.findings[action.finding_id] = None
        if action.kind == ESCALATED:  # a repair that did not hold: retirement counts them
            host.escalated = [*host.escalated, action.ts][-REPAIR_HISTORY:]
        return state
    op_id = action.op_id
    if action.kind == "suspected":
        if action.finding_id:
            state.findings[action.finding_id] = None
        if op_id is not None and state.operation(host.host_id, op_id) is None:
            op = Operation(op_id, action.operation, action.finding_id or "", action.rule, action.ts)
            op.last_action_id = action.action_id
            host.waiting.append(op)
            state.op_hosts[op_id] = host.host_id
            state.domain(host.domain).queue.append(op_id)
        return state
    found = state.operation(host.host_id, op_id) if op_id else None
    if found is None:
        return state  # an action for an operation this state never saw suspected: nothing to move
    op = found
    op.last_action_id = action.action_id
    if action.kind == "deferred":
        op.phase = "deferred"
    elif action.kind == "released":
        op.phase = "waiting"
    elif action.kind == "drain_requested":
        _start(state, host, op)
        op.phase = "draining"
    elif action.kind == "drained":
        op.phase = "drained"
    elif action.kind in REQUEST_KINDS:
        _start(state, host, op)
        op.phase = "in_repair"
        op.started_ts = action.ts
    elif action.kind in ("repaired", "change_applied"):
        op.phase = "repaired"
    elif action.kind == "withdrawn" and op in host.waiting:  # a queued change its campaign no longer wants
        host.waiting.remove(op)
        queue = state.domain(host.domain).queue
        if op.op_id in queue:
            queue.remove(op.op_id)
        state.op_hosts.pop(op.op_id, None)
    elif action.kind == "verified":
        op.phase = "verified"
    elif action.kind == "returned" and host.current is op:
        host.current = None
        host.completed += 1
        host.returned_ts, host.returned_from = action.ts, op.operation
        host.repairs = [*host.repairs, (action.ts, op.operation)][-REPAIR_HISTORY:]
    return state


LOG_EVENT_TYPES = frozenset(
    {
        MaintenanceActionRecorded.EVENT_TYPE,
        CampaignRecorded.EVENT_TYPE,
        HostVersionsReported.EVENT_TYPE,
        *OUTAGE_EVENT_TYPES,
    }
)


def apply_logged(state: FleetState, record: Mapping[str, Any]) -> FleetState:
    """Apply one decoded record of ``fleet.actions``, whichever of ``LOG_EVENT_TYPES`` it is."""
    if record.get("event_type") in OUTAGE_EVENT_TYPES:
        before = len(state.outages.applied)
        state.outages.apply(record)
        if len(state.outages.applied) != before:
            state.count += 1
            state.clock = max(state.clock, record["ts"])
        return state
    if record.get("event_type") in (CampaignRecorded.EVENT_TYPE, HostVersionsReported.EVENT_TYPE):
        if record["event_id"] in state.applied:
            return state
        state.applied[record["event_id"]] = None
        if record["event_type"] == CampaignRecorded.EVENT_TYPE:
            state.trains.apply_campaign(record)
        else:
            state.trains.apply_versions(record)
        state.count += 1
        state.clock = max(state.clock, record["ts"])
        return state
    return apply(state, Action.from_record(record))


def fold(state: FleetState, action: Action) -> FleetState:
    """Pure fold step: a new state with ``action`` applied; ``state`` is untouched."""
    return apply(copy.deepcopy(state), action)


def replay(actions: Iterable[Action], state: FleetState | None = None) -> FleetState:
    """Rebuild the state from a sequence of actions (e.g. fleet.actions from the start)."""
    state = state if state is not None else FleetState()
    for action in actions:
        apply(state, action)
    return state
