"""The simulated fleet's answer to the planner's actions, as a pure fold over ``fleet.actions``.

A drain takes a host out of service (it runs no job and sends no fault, only health telemetry); a
repair request draws, as the in-process twin does (``repairs``), whether it cures the host's
persistent fault; ``returned`` puts the host back; ``retired`` takes it out for good. Operators' steps
on the same topic (``fleetpulse ops record``) count too: a host an operator took out (out_of_service,
repair_started, rma_shipped) sends no fault until its steps are closed (returned_to_service closes all),
whatever the planner does meanwhile. The state is a fold of the log (a record read twice counts once),
so a later segment of the same run rebuilds it by reading the topic from its start.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fleetpulse.twin.repairs import draw_repair
from fleetpulse.twin.settings import TwinSettings
from producers.fleet import Fleet
from schemas import MaintenanceActionRecorded, OperatorEventRecorded
from schemas.taxonomy import CLOSING_KINDS, OPENING_KINDS, RETURNED, STEP_GROUP
from streams.core.actions import REQUEST_KINDS, RETIRED, Action

# What takes a host out of service: a drain, and every hands-on repair request (a host may be sent
# straight to repair without a drain first).
LEAVES = frozenset({"drain_requested", "drained", *REQUEST_KINDS}) - {"change_requested"}


@dataclass
class FleetResponse:
    """Hosts out of service, cured parts and retirements, from the actions read so far."""

    fleet: Fleet
    settings: TwinSettings
    seed: int
    index: dict[str, int] = field(init=False)
    out_since: dict[int, int] = field(default_factory=dict)  # host -> when it left service
    retired: set[int] = field(default_factory=set)
    lemon_cured: dict[int, int] = field(default_factory=dict)  # host -> when its bad part was cured
    slow_cured: dict[int, int] = field(default_factory=dict)
    repairs: Counter[int] = field(default_factory=Counter)
    failed_repairs: Counter[int] = field(default_factory=Counter)
    # host -> when it came back to service from a repair that did not cure its fault (a new incident then:
    # fleetpulse.evaluation.incidents); ``failing``: hosts out now after such a repair, not yet back
    relapses: dict[int, list[int]] = field(default_factory=dict)
    failing: set[int] = field(default_factory=set)
    cause: dict[int, str] = field(
        default_factory=dict
    )  # host out -> why: drains, repairs, retired, operators
    held: dict[int, set[str]] = field(
        default_factory=dict
    )  # host -> operators' open step groups (service, rma…)
    steps_waiting: list[Mapping[str, Any]] = field(
        default_factory=list
    )  # operators' steps after the fleet's time
    lost_gpu_h: dict[tuple[str, str], float] = field(default_factory=dict)  # (cause, domain) -> GPU-hours out
    spans: list[tuple[int, int, int, str]] = field(default_factory=list)  # (host, since, until, cause) out
    now: int = 0  # the newest event time the fleet has reached
    history: list[tuple[int, int, str]] = field(
        default_factory=list
    )  # (ts, host, what): an action's kind, or "out" / "back" as the host left or rejoined service
    seen: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.index = {host_id: h for h, host_id in enumerate(self.fleet.host_id)}

    def apply_logged(self, records: Iterable[Mapping[str, Any]], until: int) -> None:
        """Decoded records of ``fleet.actions``: the planner's actions, and operators' steps up to ``until``.

        An operator's step is taken when the fleet reaches its event time (one recorded ahead waits);
        any other record (incidents, campaigns, a record this fleet cannot read) is not the fleet's to answer.
        """
        actions: list[Action] = []
        for r in records:
            if r.get("event_type") == OperatorEventRecorded.EVENT_TYPE:
                self.steps_waiting.append(r)
            elif r.get("event_type") == MaintenanceActionRecorded.EVENT_TYPE:
                try:
                    actions.append(Action.from_record(r))
                except (ValueError, KeyError, TypeError):
                    continue
        self.apply(sorted(actions, key=lambda a: a.ts))
        due = sorted((r for r in self.steps_waiting if _ts(r) <= until), key=_ts)
        self.steps_waiting = [r for r in self.steps_waiting if _ts(r) > until]
        for r in due:
            self._step(r)

    def _step(self, record: Mapping[str, Any]) -> None:
        """An operator's step: opening ones hold the host out, closing ones release their group."""
        h = self.index.get(str(record.get("host_id")))
        payload = record.get("payload") or {}
        kind, event_id, ts = payload.get("kind"), str(record.get("event_id")), _ts(record)
        if h is None or event_id in self.seen or h in self.retired or kind not in STEP_GROUP:
            return
        self.seen.add(event_id)
        self.now = max(self.now, ts)
        groups = self.held.setdefault(h, set())
        if kind in OPENING_KINDS:
            groups.add(STEP_GROUP[kind])
            if h not in self.out_since:
                self._out(h, ts, "operators")
        elif kind in CLOSING_KINDS:
            if kind == RETURNED:  # closes every step open on the host
                groups.clear()
            else:
                groups.discard(STEP_GROUP[kind])
            if not groups and self.cause.get(h) == "operators":
                self._back(h, ts)

    def _back(self, h: int, ts: int) -> None:
        """The host returns, unless an operator still holds it (then it stays out, for the operators)."""
        self._count(h, ts)
        if self.held.get(h):
            self.out_since[h], self.cause[h] = max(ts, self.out_since[h]), "operators"
        else:
            del self.out_since[h], self.cause[h]
            self.history.append((ts, h, "back"))
            if h in self.failing:  # back, and still faulty: operators must hear the repair failed
                self.failing.discard(h)
                self.relapses.setdefault(h, []).append(ts)

    def apply(self, actions: Iterable[Action]) -> None:
        for a in actions:
            h = self.index.get(a.host_id)
            if h is None or a.action_id in self.seen or h in self.retired:
                continue
            self.seen.add(a.action_id)
            self.now = max(self.now, a.ts)
            self.history.append((a.ts, h, a.kind))
            if a.kind in LEAVES:
                self._out(h, a.ts, "drains" if a.kind in ("drain_requested", "drained") else "repairs")
            if a.kind in REQUEST_KINDS and a.kind != "change_requested":
                self._repair(h, a)
            elif a.kind == "returned" and h in self.out_since:
                self._back(h, a.ts)
            elif a.kind == RETIRED:
                self.retired.add(h)
                self._out(h, a.ts, "retired")

    def _out(self, h: int, ts: int, cause: str) -> None:
        """The host is out from ``ts`` (already out: its time so far goes to the cause it had)."""
        if h in self.out_since:
            self._count(h, ts)
            ts = max(ts, self.out_since[h])
        else:
            self.history.append((ts, h, "out"))
        self.out_since[h], self.cause[h] = ts, cause

    def _count(self, h: int, ts: int) -> None:
        since = self.out_since[h]
        gpus = self.fleet.config.gpus_per_host
        key = (self.cause[h], self.fleet.domain[h])
        self.lost_gpu_h[key] = self.lost_gpu_h.get(key, 0.0) + max(0, ts - since) / 3_600_000 * gpus
        self.spans.append((h, since, ts, self.cause[h]))

    def _repair(self, h: int, a: Action) -> None:
        f = self.fleet
        lemon = f.lemon_kind[h] is not None and h not in self.lemon_cured and 0 <= f.lemon_onset_ts[h] <= a.ts
        slow = bool(f.slow_factor[h] > 0) and h not in self.slow_cured
        fault = f.lemon_kind[h] if lemon else (f.slow_cause[h] if slow else None)
        self.repairs[h] += 1
        draw = draw_repair(self.settings, self.seed, h, self.repairs[h], a.operation, fault)
        if fault is None:
            return
        if not draw.cured:
            self.failed_repairs[h] += 1
            self.failing.add(h)
            return
        self.failing.discard(h)  # a later repair in the same stay out cured it
        if lemon:
            self.lemon_cured[h] = a.ts
        else:
            self.slow_cured[h] = a.ts
            f.slow_factor[h] = 0.0  # its samples are no longer slow

    def faults_off(self, host: int, ts: int, lemon: bool) -> bool:
        since = self.out_since.get(host)
        if since is not None and since <= ts:
            return True
        cured = self.lemon_cured.get(host)
        return lemon and cured is not None and cured <= ts

    def out_gpu_h(self, end_ts: int | None = None) -> dict[tuple[str, str], float]:
        """GPU-hours out of service per (cause, domain), the hosts still out counted up to ``end_ts``."""
        lost = dict(self.lost_gpu_h)
        end = max(self.now, end_ts or 0)
        gpus = self.fleet.config.gpus_per_host
        for h, since in self.out_since.items():
            key = (self.cause[h], self.fleet.domain[h])
            lost[key] = lost.get(key, 0.0) + max(0, end - since) / 3_600_000 * gpus
        return lost

    def report(self, end_ts: int | None = None) -> dict[str, Any]:
        """What the fleet did in answer, by host id (for the run's truth and the demo summary).

        GPU-hours out of service by cause count the hosts still out up to ``end_ts`` (default: the newest action).
        """
        ids = self.fleet.host_id
        lost = self.out_gpu_h(end_ts)
        by_cause: dict[str, float] = {}
        for (cause, _), v in lost.items():
            by_cause[cause] = by_cause.get(cause, 0.0) + v
        return {
            "actions_read": len(self.seen),
            "repairs": sum(self.repairs.values()),
            "failed_repairs": sum(self.failed_repairs.values()),
            "lemons_cured": {ids[h]: ts for h, ts in sorted(self.lemon_cured.items())},
            "slow_hosts_cured": {ids[h]: ts for h, ts in sorted(self.slow_cured.items())},
            "relapses": {ids[h]: list(ts) for h, ts in sorted(self.relapses.items())},
            "retired": sorted(ids[h] for h in self.retired),
            "out_of_service_at_end": sorted(ids[h] for h in self.out_since),
            "held_by_operators_at_end": sorted(ids[h] for h, groups in self.held.items() if groups),
            "gpu_h_out_of_service": {c: round(v, 1) for c, v in sorted(by_cause.items())},
            "gpu_h_out_by_domain": {f"{c}/{d}": round(v, 1) for (c, d), v in sorted(lost.items())},
        }


def _ts(record: Mapping[str, Any]) -> int:
    ts = record.get("ts")
    return ts if isinstance(ts, int) else 0
