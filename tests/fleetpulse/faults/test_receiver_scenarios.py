"""The webhook receiver's fault scenarios, short variants (their long forms run in ``fleetpulse faults run``).

They fault only the receiver (the dispatcher, its outbox and the alerts topic are what is judged), never
the broker or the planner, so they run in the suite's parallel phase on the session's broker.
"""

from __future__ import annotations

import pytest

from fleetpulse.faults.context import FaultContext
from fleetpulse.faults.report import print_table
from fleetpulse.faults.scenarios import receiver_down, receiver_slow
from tests.fleetpulse.faults.judging import assert_alerts_delivered_once

pytestmark = pytest.mark.faults


def test_receiver_slow(shared_fault_context: FaultContext) -> None:
    """30 s answers for 2 minutes in ``fleetpulse faults run``; here 5 s answers for 30 s."""
    answer_s, slow_s = 5.0, 30.0
    r = receiver_slow.run(shared_fault_context, answer_s=answer_s, slow_s=slow_s, alerts=150)
    print_table([r])
    assert r.details["produced_during_outage"] > 50
    assert r.details["outage"]["seconds"] >= slow_s
    assert_alerts_delivered_once(r)
    assert r.alerts_wire_duplicates, (
        "the dispatcher's timeout is shorter than the answer: it must have retried"
    )


def test_receiver_down(shared_fault_context: FaultContext) -> None:
    """Down for 60 s in ``fleetpulse faults run``; here 30 s, 200 alerts over 40 s (about 150 during it)."""
    down_s = 30.0
    r = receiver_down.run(shared_fault_context, alerts=200, outage_s=down_s, before_s=5.0, after_s=5.0)
    print_table([r])
    assert r.details["produced_during_outage"] > 100
    assert r.details["outage"]["seconds"] >= down_s
    assert_alerts_delivered_once(r)
