"""receiver-slow: the webhook receiver stays up but answers every request 30 s late for two minutes.

A receiver that answers slowly is worse for the sender than one that is down: each request holds
one of the dispatcher's in-flight slots until its timeout, and the alert is stored although the
answer never arrived, so every retry is a delivery the receiver has already seen. The same run
as receiver-down (``receiver_down.run``), with the outage replaced by the slow answers.
"""

from __future__ import annotations

from fleetpulse.faults.context import FaultContext
from fleetpulse.faults.results import ScenarioResult
from fleetpulse.faults.scenarios import receiver_down

NAME = "receiver-slow"


def run(
    ctx: FaultContext, answer_s: float = 30.0, slow_s: float = 120.0, alerts: int = 300
) -> ScenarioResult:
    return receiver_down.run(ctx, alerts=alerts, outage_s=slow_s, answer_s=answer_s, name=NAME)
