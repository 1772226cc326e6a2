"""A closed-loop fleet twin: the simulated fleet answers the real planner's actions; policies judged by goodput."""

from fleetpulse.twin.clock import JobClock, JobSpec, Ledger
from fleetpulse.twin.engine import TwinRun, run_twin
from fleetpulse.twin.settings import TwinSettings, twin_settings
from fleetpulse.twin.theory import ettr_first_order

__all__ = [
    "JobClock",
    "JobSpec",
    "Ledger",
    "TwinRun",
    "TwinSettings",
    "ettr_first_order",
    "run_twin",
    "twin_settings",
]
