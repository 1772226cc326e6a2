"""What the worker's HTTP API and console read: the folded fleet, the inventory, the findings raised
and the planner's budgets, in one read-only object that ``streams.app`` wires once."""

from __future__ import annotations

from dataclasses import dataclass

from streams.core.fleet.lifecycle import FleetState
from streams.core.inventory import Inventory
from streams.core.planning.planner import Planner
from streams.findings_log import FindingsLog
from streams.fleet_fold import FleetFold


@dataclass(frozen=True)
class FleetReads:
    """The worker's read model; ``reset_within`` is the policy's bound under which a time out was a reset."""

    fold: FleetFold
    inventory: Inventory
    planner: Planner
    findings_log: FindingsLog
    reset_within: int

    @property
    def fleet(self) -> FleetState:
        """The fleet state now (read through the fold: a rewind makes a new one)."""
        return self.fold.fleet
