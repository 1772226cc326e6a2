"""A change campaign's state, folded from ``fleet.actions``: the person's steps and the change operations.

People start, pause, resume and abort a campaign (``CampaignRecorded``); the planner moves its hosts
through change operations (``MaintenanceActionRecorded`` of operation ``change``, whose ``finding_id``
is the campaign's id and whose ``rule`` is the version being replaced) and halts or completes it
(``campaign_halted``, ``campaign_completed``). Every hardware finding on a host in a running campaign's
scope is kept with whether the host ran the new version then, for the rollout safety test.
Nothing here imports the host lifecycle: it folds this state as one part of ``FleetState``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from streams.core.actions import Action
from streams.trains.safety import DAY_MS, ERRORS_RULE
from streams.trains.step_time import StepWindow, window
from streams.trains.visits import Visit, VisitTallies

Status = Literal["running", "paused", "halted", "aborted", "completed"]
CHANGE = "change"  # the operation of a campaign's host visit
# the planner's campaign-level actions (host '-'): the safety test halted it or opened its gate, or it is done
CAMPAIGN_KINDS = frozenset({"campaign_halted", "campaign_completed", "gate_opened"})
# a host's hardware error counted for the safety test (streams.trains.error_days); its rule: ERRORS_RULE + class
ERRORS_COUNTED = "errors_counted"
# a window of step time, hosts on the new version against the others (streams.trains.step_forward); its rule:
# STEPS_RULE + "upgraded,control,diff,se" (a StepWindow)
STEPS_COUNTED = "steps_counted"
STEPS_RULE = "steps/"
TRAINS_KINDS = CAMPAIGN_KINDS | {ERRORS_COUNTED, STEPS_COUNTED}  # folded here alone, not as a host's step
# what a person's step does to a campaign's status
STATUS_OF: dict[str, Status] = {
    "started": "running",
    "resumed": "running",
    "paused": "paused",
    "aborted": "aborted",
}


ERROR_DAYS_KEPT = 100_000  # host-day keys held before the days past are forgotten


def day_key(host_id: str, fault_class: str, day: int) -> str:
    """A host's fault class on a UTC day (days since the epoch), as a key a snapshot can hold."""
    return f"{host_id}|{fault_class}|{day}"


@dataclass(slots=True)
class Fault:
    """A finding on a host in scope while the campaign ran: the input of ``streams.trains.safety``."""

    ts: int
    host_id: str
    rule: str
    upgraded: bool  # the host had the new version applied then
    n_upgraded: int  # hosts with the new version applied then


@dataclass(slots=True)
class Campaign:
    campaign_id: str
    component: str
    version: str
    started_ts: int
    scope: list[str] = field(default_factory=list)  # clusters or domains; empty: the whole fleet
    hosts: list[str] = field(default_factory=list)  # only these (a rollback); empty: every host in scope
    canary: int = 0
    max_parallel_domains: int = 1
    rollback_of: str | None = None
    actor: str = ""
    status: Status = "running"
    visits: dict[str, Visit] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    steps: list[StepWindow] = field(
        default_factory=list
    )  # step time, upgraded vs not (streams.trains.step_time)
    upgraded: int = 0
    halts: int = 0
    halted_reason: str = ""
    accepted: bool = False  # the safety test accepted the new version as no worse (the gate is open)
    history: list[tuple[int, str, str]] = field(default_factory=list)  # (ts, step, reason)
    kept: VisitTallies | None = None  # the visits' tallies (None: counted again from the visits at first use)

    def in_scope(self, host_id: str, cluster: str, domain: str) -> bool:
        if self.hosts and host_id not in self.hosts:
            return False
        return not self.scope or cluster in self.scope or domain in self.scope

    @property
    def comparing(self) -> bool:
        """Its safety test is counting (it is open, and not a rollback)."""
        return self.status in ("running", "paused") and self.rollback_of is None

    def compares(self, host_id: str, cluster: str, domain: str) -> bool:
        """Its safety test counts faults on this host (it is comparing, and the host is in scope)."""
        return self.comparing and self.in_scope(host_id, cluster, domain)

    def compare_steps(self, ts: int, hosts: Sequence[tuple[str, str, str, float]]) -> StepWindow | None:
        """A window's step times (host, cluster, domain, relative step time) of the hosts in scope: those whose
        change was applied by ``ts`` against those not asked to change yet (a host mid-change is in neither)."""
        up, control = [], []
        for host_id, cluster, domain, rel in hosts:
            if self.compares(host_id, cluster, domain):
                visit = self.visits.get(host_id)
                if visit is None or visit.requested_ts is None:
                    control.append(rel)
                elif visit.applied_ts is not None and visit.applied_ts <= ts:
                    up.append(rel)
        return window(ts, up, control)

    def tallies(self) -> VisitTallies:
        if self.kept is None:  # a new campaign, or one from a snapshot written before the tallies
            self.kept = VisitTallies.of(self.visits.values())
        return self.kept

    def previous_version(self) -> str | None:
        """The version most of the changed hosts ran before (what ``abort --rollback`` goes back to)."""
        seen = Counter(v.previous for v in self.visits.values() if v.previous and v.requested_ts is not None)
        return seen.most_common(1)[0][0] if seen else None

    def changed_hosts(self) -> list[str]:
        return sorted(h for h, v in self.visits.items() if v.requested_ts is not None)


@dataclass(slots=True)
class Trains:
    """Every campaign, and the versions hosts' side recorded on ``fleet.actions`` (``change_applied``)."""

    campaigns: dict[str, Campaign] = field(default_factory=dict)
    reported: dict[str, dict[str, tuple[str, int]]] = field(
        default_factory=dict
    )  # host -> component -> (v, ts)
    error_days: dict[str, int] = field(default_factory=dict)  # day_key -> errors counted (the newest days)

    def running(self) -> list[Campaign]:
        return [c for c in self.campaigns.values() if c.status == "running"]

    def apply_campaign(self, record: Mapping[str, Any]) -> bool:
        """Fold a ``CampaignRecorded``; False when it changes nothing (unknown campaign, or a repeat)."""
        p, ts = record["payload"], record["ts"]
        cid, kind = p["campaign_id"], p["kind"]
        camp = self.campaigns.get(cid)
        if kind == "started":
            if camp is not None:
                return False
            camp = self.campaigns[cid] = Campaign(
                campaign_id=cid,
                component=p["component"],
                version=p["version"],
                started_ts=ts,
                scope=list(p.get("scope") or []),
                hosts=list(p.get("hosts") or []),
                canary=p.get("canary") or 0,
                max_parallel_domains=p.get("max_parallel_domains") or 1,
                rollback_of=p.get("rollback_of"),
                actor=p.get("actor") or "",
            )
        elif camp is None or kind not in STATUS_OF or camp.status in ("aborted", "completed"):
            return False
        else:
            camp.status = STATUS_OF[kind]
        camp.history.append((ts, kind, p.get("reason") or ""))
        return True

    def apply_versions(self, record: Mapping[str, Any]) -> None:
        """Fold a ``HostVersionsReported`` the host side recorded on ``fleet.actions``."""
        mine = self.reported.setdefault(record["host_id"], {})
        for component, version in record["payload"].items():
            fresh = component not in mine or mine[component][1] <= record["ts"]
            if component not in ("reason", "actor") and version is not None and fresh:
                mine[component] = (version, record["ts"])

    def on_action(self, action: Action) -> None:
        """Fold a planner action: a campaign's own step, a host visit's step, or a finding or error (a fault)."""
        if action.kind == ERRORS_COUNTED:
            self._count_error(action)
            return
        if action.kind == STEPS_COUNTED:
            self._count_steps(action)
            return
        if action.kind in CAMPAIGN_KINDS:
            camp = self.campaigns.get(action.finding_id or "")
            if camp is not None and action.kind == "gate_opened":
                camp.accepted = True
                camp.history.append((action.ts, action.kind, action.reason))
            elif camp is not None and camp.status == "running":
                camp.status = "halted" if action.kind == "campaign_halted" else "completed"
                camp.halts += action.kind == "campaign_halted"
                camp.halted_reason = action.reason if action.kind == "campaign_halted" else ""
                camp.history.append((action.ts, action.kind, action.reason))
            return
        if action.operation == CHANGE:
            self._visit_step(action)
        elif action.kind == "suspected":
            self.observe_fault(action.ts, action.host_id, action.cluster, action.domain, action.rule or "")

    def observe_fault(self, ts: int, host_id: str, cluster: str, domain: str, rule: str) -> None:
        """A fault on a host: each running campaign whose scope holds it counts it for its safety test."""
        for camp in self.campaigns.values():
            if camp.compares(host_id, cluster, domain):
                visit = camp.visits.get(host_id)
                upgraded = visit is not None and visit.applied_ts is not None
                camp.faults.append(Fault(ts, host_id, rule, upgraded, camp.upgraded))

    def observe_steps(self, ts: int, hosts: Sequence[tuple[str, str, str, float]]) -> None:
        """A window of step times, (host, cluster, domain, step time relative to the host's baseline):
        each comparing campaign keeps its hosts on the new version against those not on it yet."""
        for camp in self.campaigns.values():
            found = camp.compare_steps(ts, hosts)
            if found is not None:
                camp.steps.append(found)

    def _count_error(self, action: Action) -> None:
        """An error counted toward its host-day (``streams.trains.error_days``): one fault of its class."""
        day = action.ts // DAY_MS
        key = day_key(action.host_id, (action.rule or "").removeprefix(ERRORS_RULE), day)
        self.error_days[key] = self.error_days.get(key, 0) + 1
        if len(self.error_days) > ERROR_DAYS_KEPT:  # only today's and yesterday's are counted on
            self.error_days = {
                k: n for k, n in self.error_days.items() if int(k.rsplit("|", 1)[1]) >= day - 1
            }
        self.observe_fault(action.ts, action.host_id, action.cluster, action.domain, action.rule or "")

    def _count_steps(self, action: Action) -> None:
        """A window of step times the live worker compared for a campaign: one more for its SPRT."""
        camp = self.campaigns.get(action.finding_id or "")
        fields = (action.rule or "").removeprefix(STEPS_RULE).split(",")
        if camp is None or not camp.comparing or len(fields) != 4:
            return
        try:
            up, control, diff, se = int(fields[0]), int(fields[1]), float(fields[2]), float(fields[3])
        except ValueError:
            return  # not a window this fold can read: it weighs nothing
        camp.steps.append(StepWindow(action.ts, up, control, diff, se))

    def _visit_step(self, action: Action) -> None:
        camp = self.campaigns.get(action.finding_id or "")
        if camp is None:
            return
        tallies = camp.tallies()
        visit = camp.visits.get(action.host_id)
        if visit is None:
            visit = camp.visits[action.host_id] = Visit(action.host_id, action.domain, previous=action.rule)
        if action.kind == "suspected":
            visit.queued_ts = action.ts
        elif action.kind == "change_requested":
            visit.requested_ts = action.ts
        elif action.kind == "change_applied" and visit.applied_ts is None:
            visit.applied_ts = action.ts
            camp.upgraded += 1
            tallies.add_applied(action.ts)
        elif action.kind == "verified" and visit.done_ts is None:
            visit.done_ts = action.ts
            tallies.verified += 1
        elif action.kind == "withdrawn" and visit.requested_ts is None:
            visit.queued_ts = None  # taken back before it started (the campaign was aborted)
        tallies.place(visit)
