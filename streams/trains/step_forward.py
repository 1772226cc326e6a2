"""Step time forwarded from the live worker's cluster stage to the rollout safety test (pure).

A change that slows its hosts shows in their step time before any finding. Each window the cluster
stage closes scores every host against its job's median (``streams.core.peers``); for each open
campaign comparing hosts of the cluster, this turns the window into one ``steps_counted`` action on
``fleet.actions``: the hosts on the new version against those not on it yet, as a ``StepWindow``
(``streams.trains.step_time``), which every worker folds (``Trains.on_action``) into the campaign's
step-time SPRT. Its id is (campaign, cluster, window): a window scored again adds nothing the log holds.

Live the reference is the host's job median of the same window, not the host's own baseline as in the
twin: a host's lasting offset from its job does not cancel, so the canaries' offsets weigh until more
hosts are changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from schemas import FLEET
from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState
from streams.core.ids import action_id
from streams.core.peers.scores import Verdict
from streams.trains.campaign import CHANGE, STEPS_COUNTED, STEPS_RULE, Campaign
from streams.trains.step_time import StepWindow


class StepForward:
    """Turns a cluster's window verdicts into ``steps_counted`` actions (the caller publishes them)."""

    def __init__(self, domain_of: Callable[[str], str]) -> None:
        self.domain_of = domain_of

    def observe(self, state: FleetState, cluster: str, verdicts: Sequence[Verdict]) -> list[Action]:
        """One action per open campaign and window with at least two hosts on each side, else none."""
        campaigns = [c for c in state.trains.campaigns.values() if c.comparing]
        if not campaigns or not verdicts:
            return []
        windows: dict[int, list[tuple[str, str, str, float]]] = {}
        for v in verdicts:
            if v.reference == "peers" and v.median_step_ms > 0 and v.step_ms > 0:  # alone in its job: none
                rel = v.step_ms / v.median_step_ms
                windows.setdefault(v.window_start, []).append(
                    (v.host_id, cluster, self.domain_of(v.host_id), rel)
                )
        out = []
        for start, hosts in sorted(windows.items()):
            for camp in sorted(campaigns, key=lambda c: c.campaign_id):
                found = camp.compare_steps(start, hosts)
                if found is not None:
                    out.append(steps_action(camp, cluster, start, found))
        return out


def steps_action(camp: Campaign, cluster: str, start: int, w: StepWindow) -> Action:
    return Action(
        action_id=action_id(camp.campaign_id, STEPS_COUNTED, cluster, str(start)),
        kind=STEPS_COUNTED,
        host_id=FLEET,
        cluster=cluster,
        domain=FLEET,
        operation=CHANGE,
        ts=w.ts,
        finding_id=camp.campaign_id,
        rule=f"{STEPS_RULE}{w.upgraded},{w.control},{w.diff!r},{w.se!r}",
        reason=(
            f"step time {w.upgraded} hosts on {camp.version} vs {w.control} not yet: "
            f"{100 * w.diff:+.2f} % (log) ± {100 * w.se:.2f}"
        ),
    )
