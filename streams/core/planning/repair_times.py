"""How long a repair takes: drawn from the times measured for its cause and kind, else the policy's.

The draw is seeded by the operation's id, so every worker and replay gives an operation the same
time; the draws are kept until new measurements arrive (then drawn again).
"""

from __future__ import annotations

from streams.core.fleet.lifecycle import FleetState, Operation
from streams.core.fleet.outages import Outages
from streams.core.ids import stable_unit
from streams.core.policy import Policy


class RepairTimes:
    """Each operation's repair time, drawn once per state of the measurements."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self._draws: dict[str, int] = {}  # op id -> time drawn from the measurements below
        self._drawn_from: tuple[Outages | None, int] = (None, -1)

    def of(self, state: FleetState, op: Operation) -> int:
        """A time drawn from those measured for the operation's cause and kind (a reset is no repair),
        else the policy's time for the operation."""
        if self.policy.planner.measured_repair_times:
            outages, seen = self._drawn_from
            if outages is not state.outages or seen != state.outages.measured:  # new measurements: draw again
                self._draws, self._drawn_from = {}, (state.outages, state.outages.measured)
            if op.op_id not in self._draws:
                self._draws[op.op_id] = self._draw(state, op)
            return self._draws[op.op_id]
        return self.policy.repair_time_ms(op.operation)

    def _draw(self, state: FleetState, op: Operation) -> int:
        """The operation's time from the measurements as they are now."""
        p = self.policy.planner
        measured = state.outages.repair_draw_ms(
            self.policy.cause_of_rule(op.rule),
            op.operation,
            reset_within=p.reset_within,
            min_samples=p.min_repair_samples,
            unit=stable_unit(p.repair_time_seed, op.op_id),
        )
        return self.policy.repair_time_ms(op.operation) if measured is None else measured
