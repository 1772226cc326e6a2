"""The planner's policy: domain buffers, repair times, escalation and retirement (``[planner]``)."""

from __future__ import annotations

from pydantic import Field, field_validator

from schemas.taxonomy import KIND_CAUSE, IncidentCause, Operation
from streams.core.policy_fields import DurationMs, PolicyModel, packaged, parse_duration_ms

# The incident cause of each error class, so a repair takes the time measured for its cause: a class named
# after a fault kind has that kind's cause (``schemas.taxonomy``; the NIC kind's class is nic_lost), and the
# packaged ``[planner.causes]`` names the others' (and may name a kind's class too). A file naming some
# classes' causes keeps these for the others.
DEFAULT_CLASS_CAUSES: dict[str, IncidentCause] = {
    **{kind: cause for kind, cause in KIND_CAUSE.items() if kind != "nic"},
    **packaged("planner", "causes"),
}


# the packaged repair time of each operation (a file naming some keeps the others)
PACKAGED_REPAIR_TIME: dict[Operation, int] = {
    op: parse_duration_ms(t) for op, t in packaged("planner", "repair_time").items()
}


class PlannerPolicy(PolicyModel):
    """Domain buffers (per cent of a maintenance domain's hosts) and repair times.

    A repair takes a time drawn from those hosts were out for its cause and kind (resets for a
    reboot, repairs or RMAs otherwise), measured from the incidents and operators' steps on
    ``fleet.actions``, once ``min_repair_samples`` are known; ``repair_time`` per operation until
    then (or always, with ``measured_repair_times = false``).
    """

    capacity_buffer_pct: float = Field(packaged("planner", "capacity_buffer_pct"), gt=0, le=100)
    failure_buffer_pct: float = Field(packaged("planner", "failure_buffer_pct"), gt=0, le=100)
    auto_resume: bool = packaged("planner", "auto_resume")
    repair_time: dict[Operation, DurationMs] = packaged("planner", "repair_time")
    measured_repair_times: bool = packaged("planner", "measured_repair_times")
    min_repair_samples: int = Field(packaged("planner", "min_repair_samples"), ge=1)
    # A time out shorter than this was a reset, not a repair: reboots draw from those, repairs from the rest.
    reset_within: DurationMs = packaged("planner", "reset_within")
    repair_time_seed: int = packaged("planner", "repair_time_seed")  # seeds each repair time's draw
    causes: dict[str, IncidentCause] = dict(DEFAULT_CLASS_CAUSES)
    # A host flagged again within this long of returning from a repair is escalated: its new work
    # becomes an RMA and a person is paged (0 turns escalation off).
    escalate_within: DurationMs = packaged("planner", "escalate_within")
    # A host whose repairs failed (it was escalated) retire_after times within retire_within is
    # retired: out of service for good, and a person is paged (0 turns retirement off).
    retire_after: int = Field(packaged("planner", "retire_after"), ge=0)
    retire_within: DurationMs = packaged("planner", "retire_within")
    # ... and one flagged again within this long of a repair in its history (an RMA or a part replaced).
    escalate_after_repair_within: DurationMs = packaged("planner", "escalate_after_repair_within")

    @field_validator("causes", mode="after")
    @classmethod
    def _keep_unnamed_causes(cls, value: dict[str, IncidentCause]) -> dict[str, IncidentCause]:
        """A file naming one class's cause changes that one; the others keep the packaged causes."""
        return {**DEFAULT_CLASS_CAUSES, **value}

    @field_validator("repair_time", mode="after")
    @classmethod
    def _keep_unnamed_times(cls, value: dict[Operation, int]) -> dict[Operation, int]:
        """A file naming one operation's time changes that one; the others keep the packaged times."""
        return {**PACKAGED_REPAIR_TIME, **value}
