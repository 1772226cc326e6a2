"""A campaign's safety gate: how many hosts may start now, and when the sequential test halts the train.

The canary hosts are verified before anyone else; past the gate (``trains.gate_pct`` of the scope)
the train waits until the safety test (``streams.trains.safety``) accepts the change, or until the
gate's hosts ran ``gate_soak`` with no class worse; it halts by itself, with the evidence, when a
fault class is worse on the new version.
"""

from __future__ import annotations

import math

from schemas import FLEET
from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState
from streams.core.ids import action_id
from streams.core.planning.emit import emit
from streams.core.policy import Policy
from streams.trains.campaign import CHANGE, Campaign
from streams.trains.route import Route, behind_repair
from streams.trains.safety import DAY_MS, ClassVerdict, SequentialTest, SprtSettings, classifier
from streams.trains.step_time import StepSettings, StepTest, StepVerdict


class Gate:
    def __init__(self, policy: Policy, route: Route) -> None:
        self.policy, self.route = policy, route
        t = policy.trains
        self.sprt = SprtSettings(t.rate_ratio, t.alpha, t.beta, classes=max(1, len(t.classes) + 1))  # + slow
        self.classify = classifier(t.classes, {r.name: r.classes for r in policy.rules})
        self.step_settings = StepSettings(t.step_slowdown, t.alpha, t.beta)
        self._tests: dict[tuple[int, str, int], SequentialTest] = {}  # (fold, campaign, scope) -> its test
        self._steps: dict[tuple[int, str], StepTest] = {}  # (fold, campaign) -> its step-time test

    def verdicts(self, state: FleetState, camp: Campaign, now: int) -> dict[str, ClassVerdict]:
        scope = self.route.scope_size(camp)
        key = (id(state.trains), camp.campaign_id, scope)
        test = self._tests.get(key)
        if test is None:
            test = self._tests[key] = SequentialTest(scope, self.classify, self.sprt)
        test.feed(camp.faults)
        up = camp.tallies().applied_days(now, camp.visits)
        control = max(0.0, scope * max(0, now - camp.started_ts) / DAY_MS - up)
        return test.verdicts((up, control))

    def step_verdict(self, state: FleetState, camp: Campaign) -> StepVerdict | None:
        test = self._steps.get((id(state.trains), camp.campaign_id))
        if test is None:
            test = self._steps[(id(state.trains), camp.campaign_id)] = StepTest(self.step_settings)
        test.feed(camp.steps)
        return test.verdict()

    def step_halts(self, state: FleetState, camp: Campaign) -> bool:
        """Whether the step-time test says halt: all that ``check`` reads of the step windows, so a window
        that leaves it unchanged moves nothing (the planner's ticks: ``Conductor.signature``)."""
        verdict = self.step_verdict(state, camp)
        return verdict is not None and verdict.state == "halt"

    def soak_passed(self, camp: Campaign, now: int) -> bool:
        """Whether ``check`` would open the gate by time alone (its hosts ran ``gate_soak`` verified)."""
        if camp.accepted:
            return False
        filled = self._gate_filled(camp)
        return filled is not None and now - filled >= self.policy.trains.gate_soak

    def check(self, state: FleetState, camp: Campaign, domain: str, now: int, out: list[Action]) -> bool:
        """Halt the campaign when a fault class or step time is worse on the new version (True), open
        the gate when accepted."""
        if camp.rollback_of is not None:
            return False  # going back to the version the fleet ran before
        verdicts = self.verdicts(state, camp, now)
        worse: list[ClassVerdict | StepVerdict] = [
            v for name, v in sorted(verdicts.items()) if name != "all" and v.state == "halt"
        ]
        steps = self.step_verdict(state, camp)
        if steps is not None and steps.state == "halt":
            worse.append(steps)
        if worse:
            why = "; ".join(v.evidence() for v in worse)
            why += f". Roll back: fleetpulse train abort {camp.campaign_id} --rollback"
            emit(state, out, campaign_action(camp, "campaign_halted", domain, now, why, n=camp.halts + 1))
            return True
        gate = [verdicts.get(name) for name in sorted(self.policy.trains.classes)]
        if camp.accepted:
            return False
        if gate and all(v is not None and v.state == "accepted" for v in gate):
            why = "; ".join(v.evidence() for v in gate if v is not None)
            emit(state, out, campaign_action(camp, "gate_opened", domain, now, why))
        elif (filled := self._gate_filled(camp)) is not None and now - filled >= self.policy.trains.gate_soak:
            why = f"no fault class worse after {(now - filled) / DAY_MS:.1f} d at the gate: " + (
                "; ".join(v.evidence() for v in verdicts.values()) or "no faults"
            )
            emit(state, out, campaign_action(camp, "gate_opened", domain, now, why))
        return False

    def budget(self, state: FleetState, camp: Campaign) -> float:
        """How many more hosts may start their change now: the canaries are verified before anyone else,
        and past the gate the safety test must have accepted the change first. Hosts whose change waits
        behind a repair are not counted: they are skipped and revisited."""
        tallies = camp.tallies()
        done = tallies.verified
        active = sum(  # only open visits can be active
            v.done_ts is None
            and (v.queued_ts is not None or v.requested_ts is not None)
            and not behind_repair(state.hosts[h], camp.campaign_id)
            for h, v in tallies.open_visits(camp.visits)
            if h in state.hosts
        )
        if done < camp.canary:
            return camp.canary - done - active
        if not camp.accepted and camp.rollback_of is None:
            gate = math.ceil(self.route.scope_size(camp) * self.policy.trains.gate_pct / 100)
            return max(camp.canary, gate) - done - active
        return math.inf

    def _gate_filled(self, camp: Campaign) -> int | None:
        """When the gate's hosts were all verified (None: not yet)."""
        gate = max(camp.canary, math.ceil(self.route.scope_size(camp) * self.policy.trains.gate_pct / 100))
        done = sorted(v.done_ts for v in camp.visits.values() if v.done_ts is not None)
        return done[gate - 1] if gate and len(done) >= gate else None


def campaign_action(camp: Campaign, kind: str, domain: str, now: int, reason: str, n: int = 1) -> Action:
    """A campaign's own step (host '-'): halted, gate opened, completed."""
    return Action(
        action_id=action_id(camp.campaign_id, kind, CHANGE, f"{n}"),
        kind=kind,
        host_id=FLEET,
        cluster=FLEET,
        domain=domain,
        operation=CHANGE,
        ts=now,
        finding_id=camp.campaign_id,
        rule=f"{camp.component}={camp.version}",
        reason=reason,
    )
