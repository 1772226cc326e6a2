"""Hosts out for reasons the planner did not decide: incidents a fleet recorded and operators' steps.

Folded from ``fleet.actions`` next to the planner's own actions (``IncidentReported``,
``OperatorEventRecorded``): an incident keeps its host out from ``start_ts`` to ``end_ts``; an
operator's opening step (out of service, repair started, RMA shipped) until its closing step of
the same ticket, and ``returned_to_service`` closes everything open on the host, as
``schemas.spans`` pairs them (a closing step folded just before its opening step of the same time
still closes it). Every closed outage with a cause is a measured repair time for that cause.
Applying a record twice is a no-op.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from schemas import IncidentReported, OperatorEventRecorded
from schemas.spans import step_closes, step_key
from schemas.taxonomy import CLOSING_KINDS, OPENING_KINDS, RETURNED, STEP_GROUP

# measured times out kept per cause: at a million operations a day every one would grow without end, and
# halving a sorted list keeps its quantiles (the median is what the planner uses) within a rank
MAX_DURATIONS = 4096
OUTAGE_EVENT_TYPES = frozenset({IncidentReported.EVENT_TYPE, OperatorEventRecorded.EVENT_TYPE})


@dataclass(slots=True)
class Outage:
    key: str  # the incident's event id, or ``<group>:<ticket>`` for an operator's step
    source: Literal["incident", "operator"]
    cause: str | None
    start_ts: int
    end_ts: int | None = None

    def out_at(self, now: int) -> bool:
        return self.start_ts <= now and (self.end_ts is None or now < self.end_ts)


@dataclass(frozen=True, slots=True)
class RepairStat:
    cause: str
    samples: int
    median_ms: float
    p90_ms: float
    # per operation kind (``reboot``: resets; ``rma``; ``repair``: every other operation), what its draws pick from
    by_operation: dict[str, dict[str, float]] = field(default_factory=dict)


# the operation kinds a repair time is drawn for: a reboot (a reset), an RMA, and any other operation
DRAWN_FOR = ("reboot", "rma", "repair")


@dataclass(slots=True)
class Outages:
    by_host: dict[str, dict[str, Outage]] = field(default_factory=dict)
    durations: dict[str, list[int]] = field(default_factory=dict)  # cause -> sorted ms
    # cause -> how it was out (an incident, or an operator's ``service``, ``repair`` or ``rma`` spell) -> sorted ms
    by_kind: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    applied: dict[str, None] = field(default_factory=dict)  # event ids in the order applied (an ordered set)
    # per host, closing steps that found nothing open: (kind, key, ts, cause), kept for a start of their time
    early_ends: dict[str, list[tuple[str, str, int, str | None]]] = field(default_factory=dict)
    clock: int = 0  # newest event time folded
    newest_change: int = 0  # newest time an outage starts or ends (an incident's end may follow its record)
    changes: list[tuple[int, str]] = field(
        default_factory=list
    )  # (time an outage starts or ends, host), sorted
    measured: int = 0  # times out measured so far: a reader's draws from them hold while it is unchanged
    # the index of ``domain_changes``: domain -> (its hosts, their change times sorted), and host -> its domains
    by_domain: dict[str, tuple[frozenset[str], list[int]]] = field(default_factory=dict)
    domains_of: dict[str, set[str]] = field(default_factory=dict)

    def apply(self, record: Mapping[str, Any]) -> None:
        """Fold one IncidentReported or OperatorEventRecorded (ValueError for anything else)."""
        if record["event_id"] in self.applied:
            return
        if record["event_type"] == IncidentReported.EVENT_TYPE:
            self._incident(record)
        elif record["event_type"] == OperatorEventRecorded.EVENT_TYPE:
            self._operator(record)
        else:
            raise ValueError(f"not an outage record: {record['event_type']!r}")
        self.applied[record["event_id"]] = None
        self.clock = max(self.clock, record["ts"])
        p = record["payload"]
        times = [record["ts"]]
        if record["event_type"] == IncidentReported.EVENT_TYPE:
            times = [t for t in (p.get("start_ts"), p.get("end_ts")) if t is not None]
        for t in times:
            bisect.insort(self.changes, (t, record["host_id"]))
            for domain in self.domains_of.get(record["host_id"], ()):
                bisect.insort(self.by_domain[domain][1], t)
        self.newest_change = max(self.newest_change, record["ts"], *times)

    def _incident(self, record: Mapping[str, Any]) -> None:
        p = record["payload"]
        end = p.get("end_ts")
        outage = Outage(record["event_id"], "incident", p["cause"], p["start_ts"], end)
        self.by_host.setdefault(record["host_id"], {})[outage.key] = outage
        if end is not None:
            self._measured(outage)

    def _operator(self, record: Mapping[str, Any]) -> None:
        p, ts = record["payload"], record["ts"]
        kind = p["kind"]
        if kind not in STEP_GROUP:
            raise ValueError(f"unknown operator step {kind!r}")
        host_id = record["host_id"]
        host = self.by_host.setdefault(host_id, {})
        key = step_key(kind, p.get("ticket_id"))
        if kind in OPENING_KINDS:
            current = host.get(key)
            if current is None or current.end_ts is not None:  # a step repeated while open changes nothing
                host[key] = Outage(key, "operator", p.get("cause"), ts)
                self._closed_early(host_id, host[key])
            return
        assert kind in CLOSING_KINDS
        targets = [o for o in host.values() if o.out_at(ts)]
        if kind != RETURNED:
            # its own ticket first, else the oldest of its group (``schemas.spans``)
            same = [o for o in targets if o.source == "operator" and step_closes(o.key, kind, key)]
            targets = sorted(same, key=lambda o: (o.key != key, o.start_ts))[:1]
        if not targets:  # its start may come next at the same time: a start sorts before an end
            kept = [e for e in self.early_ends.get(host_id, []) if e[2] >= ts]  # only its own time matters
            self.early_ends[host_id] = [*kept, (kind, key, ts, p.get("cause"))]
        self._close(targets, ts, p.get("cause"))

    def _close(self, targets: Iterable[Outage], ts: int, cause: str | None) -> None:
        for outage in targets:
            if outage.cause is None:
                outage.cause = cause
            if outage.end_ts is None:
                outage.end_ts = ts
                self._measured(outage)
            else:  # an incident whose recorded end is later: the host was back earlier
                outage.end_ts = ts

    def _closed_early(self, host_id: str, outage: Outage) -> None:
        """A closing step folded before its opening step of the same time closes it (zero length)."""
        ends = [e for e in self.early_ends.pop(host_id, []) if e[2] >= outage.start_ts]
        hit = next((e for e in ends if e[2] == outage.start_ts and step_closes(outage.key, e[0], e[1])), None)
        if hit is not None:
            ends.remove(hit)
            self._close([outage], hit[2], hit[3])
        if ends:
            self.early_ends[host_id] = ends

    def _measured(self, outage: Outage) -> None:
        if outage.cause and outage.end_ts is not None:
            self.measured += 1
            how = "incident" if outage.source == "incident" else outage.key.split(":", 1)[0]
            for found in (
                self.durations.setdefault(outage.cause, []),
                self.by_kind.setdefault(outage.cause, {}).setdefault(how, []),
            ):
                bisect.insort(found, outage.end_ts - outage.start_ts)
                if len(found) >= 2 * MAX_DURATIONS:  # every other one: same quantiles within a rank, bounded
                    found[:] = found[::2]

    # -- reading ---------------------------------------------------------------------------------

    def out_at(self, host_id: str, now: int) -> bool:
        return any(o.out_at(now) for o in self.by_host.get(host_id, {}).values())

    def repairs_of(self, host_id: str) -> list[tuple[int, str]]:
        """(end, ``rma`` or ``repair``) of the operators' RMA and repair spells that ended on the host."""
        return [
            (o.end_ts, o.key.split(":", 1)[0])
            for o in self.by_host.get(host_id, {}).values()
            if o.source == "operator" and o.end_ts is not None and o.key.split(":", 1)[0] in ("rma", "repair")
        ]

    def hosts_changed(self, after: int, until: int) -> set[str]:
        """Hosts with an outage starting or ending in (``after``, ``until``]."""
        lo = bisect.bisect_right(self.changes, (after, "\uffff"))
        hi = bisect.bisect_right(self.changes, (until, "\uffff"))
        return {host for _, host in self.changes[lo:hi]}

    def changes_after(self, hosts: Iterable[str], after: int) -> list[int]:
        """The times after ``after`` at which an outage of one of ``hosts`` starts or ends, sorted
        (a caller stepping through them bisects this one list rather than asking again each step)."""
        return sorted(
            t
            for host_id in hosts
            for o in self.by_host.get(host_id, {}).values()
            for t in (o.start_ts, o.end_ts)
            if t is not None and t > after
        )

    def domain_changes(self, domain: str, hosts: Iterable[str]) -> list[int]:
        """Every time an outage of one of the domain's ``hosts`` starts or ends, sorted: an index kept
        as records are folded, so a planner stepping through a domain's wakes bisects it instead of
        scanning the hosts' outages again. Built anew when the domain's hosts change; read-only to callers.
        Retention drops it (``forget_index``) with the outages it forgets."""
        members = frozenset(hosts)
        found = self.by_domain.get(domain)
        if found is not None and found[0] == members:
            return found[1]
        if found is not None:
            for host_id in found[0] - members:
                self.domains_of[host_id].discard(domain)
        for host_id in members:
            self.domains_of.setdefault(host_id, set()).add(domain)
        times = self.changes_after(members, -1)
        self.by_domain[domain] = (members, times)
        return times

    def forget_index(self) -> None:
        """Drop the per-domain index (retention forgot outages it holds): each domain rebuilds at its next read."""
        self.by_domain.clear()
        self.domains_of.clear()

    def open_at(self, host_id: str, now: int) -> list[Outage]:
        return [o for o in self.by_host.get(host_id, {}).values() if o.out_at(now)]

    def repair_time_ms(self, cause: str | None, min_samples: int) -> int | None:
        """Median measured time out for ``cause``; None with fewer than ``min_samples`` measurements."""
        found = self.durations.get(cause or "")
        if not found or len(found) < min_samples:
            return None
        return round(_quantile(found, 0.5))

    def measured_for(self, cause: str | None, operation: str, reset_within: int) -> list[int]:
        """The measured times out that stand for ``operation`` on ``cause``, sorted.

        A time out shorter than ``reset_within`` was a reset (a reboot cleared it), not a repair: a
        reboot draws from those, any other operation from the longer ones, and an RMA from the RMAs
        operators recorded when there are any (``rma`` spells), else from every repair of the cause.
        """
        kinds = self.by_kind.get(cause or "", {})
        if operation == "reboot":
            return sorted(t for how, ts in kinds.items() if how != "rma" for t in ts if t < reset_within)
        repairs = {how: [t for t in ts if t >= reset_within] for how, ts in kinds.items()}
        if operation == "rma" and repairs.get("rma"):
            return repairs["rma"]
        return sorted(t for how, ts in repairs.items() if operation == "rma" or how != "rma" for t in ts)

    def repair_draw_ms(
        self, cause: str | None, operation: str, *, reset_within: int, min_samples: int, unit: float
    ) -> int | None:
        """One time out drawn from those measured for ``operation`` on ``cause`` (``unit`` in [0, 1)
        picks it: the same unit, the same draw); None with fewer than ``min_samples``."""
        found = self.measured_for(cause, operation, reset_within)
        if len(found) < min_samples:
            return None
        return found[min(int(unit * len(found)), len(found) - 1)]

    def repair_stats(self, reset_within: int) -> list[RepairStat]:
        """Per cause: measured outages, median and p90 time out (ms), and the same per operation kind
        from the times its draws pick from (``measured_for``; a reset is no repair), most measured first."""
        stats = []
        for cause, d in self.durations.items():
            kinds = {op: self.measured_for(cause, op, reset_within) for op in DRAWN_FOR}
            by_operation = {
                op: {"samples": len(ts), "median_ms": _quantile(ts, 0.5), "p90_ms": _quantile(ts, 0.9)}
                for op, ts in kinds.items()
                if ts
            }
            stats.append(RepairStat(cause, len(d), _quantile(d, 0.5), _quantile(d, 0.9), by_operation))
        return sorted(stats, key=lambda s: (-s.samples, s.cause))


def _quantile(ordered: list[int], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), on a sorted list."""
    pos = (len(ordered) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def change_times(records: Iterable[Mapping[str, Any]]) -> Iterator[int]:
    """The times outage records change who is out other than their own time: incidents' recorded start and end."""
    for record in records:
        if record["event_type"] == IncidentReported.EVENT_TYPE:
            p = record["payload"]
            yield from (t for t in (p.get("start_ts"), p.get("end_ts")) if t is not None)
