"""Live mode: sim time follows the wall clock, ``speed`` sim seconds per wall second."""

from __future__ import annotations

import threading
from collections.abc import Callable


def pace(
    started: float,
    due_s: float,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    stop: threading.Event,
) -> tuple[float, float]:
    """Wait until ``due_s`` after ``started``; returns (time waited, how late we already were)."""
    waited = 0.0
    late = clock() - (started + due_s)
    while not stop.is_set():
        wait = started + due_s - clock()
        if wait <= 0:
            break
        step = min(wait, 0.2)
        sleep(step)
        waited += step
    return waited, max(late, 0.0)
