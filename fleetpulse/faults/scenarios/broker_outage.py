"""broker-outage: the broker is stopped for five minutes mid-production, then started again.

Not a quick restart: for that long every client is refused — the simulator's producer fills its
buffer and blocks (its ``delivery_timeout_ms`` and ``max_block_ms`` are 10 minutes), the detect
worker's consumers and producer retry, its consumer group's session expires. The same run as
broker-restart (``broker_restart.run``) with one long stop instead of three restarts.
"""

from __future__ import annotations

from fleetpulse.faults.context import FaultContext
from fleetpulse.faults.results import ScenarioResult
from fleetpulse.faults.scenarios import broker_restart

NAME = "broker-outage"


def run(ctx: FaultContext, down_s: float = 300.0, produce_s: float = 90.0) -> ScenarioResult:
    return broker_restart.run(ctx, restarts=1, produce_s=produce_s, down_s=down_s, name=NAME)
