"""What one repair does to a host's persistent fault: cured or not, and how long it takes.

Shared by the in-process twin (``engine``) and the fleet that answers the broker (``response``):
the draw is keyed by seed, host and the host's repair count, so both give a host's n-th repair the
same outcome whatever else happened in the fleet.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fleetpulse.twin.settings import TwinSettings

REPAIR_STREAM = 101  # the repairs' own random stream, apart from producers.randomness.Purpose


@dataclass(frozen=True, slots=True)
class RepairDraw:
    cured: bool  # the persistent fault (lemon kind or slow cause) is gone
    hours: float  # how long the repair physically takes


def draw_repair(
    settings: TwinSettings, seed: int, host: int, nth: int, operation: str | None, fault: str | None
) -> RepairDraw:
    """The ``nth`` repair (1, 2, …) of ``host`` by ``operation`` on a host whose fault is ``fault`` (None: none)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFF, REPAIR_STREAM, host, nth]))
    cure_u, time_z = rng.uniform(), rng.standard_normal()
    op = operation or ""
    cured = fault is not None and bool(cure_u < settings.cure_probability(op, fault))
    hours = settings.repair_median(op) * float(np.exp(settings.repair_sigma * time_z))
    return RepairDraw(cured, hours)
