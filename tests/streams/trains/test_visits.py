"""The visits' tallies the fold keeps are what counting every visit again gives, whatever the steps' order."""

from __future__ import annotations

import random

from streams.core.actions import Action
from streams.core.fleet.lifecycle import FleetState, apply
from streams.trains.visits import DAY_MS, VisitTallies
from tests.streams.trains.test_error_days import T0, campaign

KINDS = ["suspected", "change_requested", "change_applied", "verified", "withdrawn"]


def test_the_folds_tallies_match_a_recount_of_the_visits() -> None:
    rng = random.Random(7)
    state = FleetState()
    cid = campaign(state)
    camp = state.trains.campaigns[cid]
    for n in range(400):
        host, kind = f"h{rng.randrange(30)}", rng.choice(KINDS)
        ts = T0 + rng.randrange(10 * DAY_MS)
        apply(state, Action(f"a{n}", kind, host, "c0", "md0", "change", ts, finding_id=cid, rule="550"))
        kept, recount = camp.tallies(), VisitTallies.of(camp.visits.values())
        assert kept == recount
        for now in (T0, T0 + 5 * DAY_MS, T0 + 11 * DAY_MS):  # before, among and after the applied times
            walked = sum(max(0, now - v.applied_ts) for v in camp.visits.values() if v.applied_ts is not None)
            assert kept.applied_days(now, camp.visits) == walked / DAY_MS
    assert camp.tallies().verified and camp.tallies().open  # the steps reached every state


def test_a_campaign_from_an_older_snapshot_counts_its_visits_at_first_use() -> None:
    state = FleetState()
    cid = campaign(state)
    camp = state.trains.campaigns[cid]
    for i, kind in enumerate(["suspected", "change_requested", "change_applied", "verified"]):
        apply(state, Action(f"a{i}", kind, "h1", "c0", "md0", "change", T0 + i, finding_id=cid, rule="550"))
    apply(state, Action("b", "suspected", "h2", "c0", "md0", "change", T0, finding_id=cid, rule="550"))
    camp.kept = None  # as decoded from a snapshot written before the tallies
    tallies = camp.tallies()
    assert (tallies.verified, tallies.applied, tallies.applied_sum, tallies.open) == (1, 1, T0 + 2, {"h2"})
