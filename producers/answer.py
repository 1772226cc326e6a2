"""A fleet that answers: what the agents ask before each tick when the simulation runs closed loop.

Open loop (the default) the fault schedule plays out whatever is done to the hosts. Closed loop, an
``Answer`` (built by the caller from the fleet: the producers know nothing of the planner) says which
hosts are out of service and which persistent faults a repair cured; the agents then send no fault
of those hosts, and the truth lists only the faults that were sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from producers.fleet import Fleet
from producers.schedule import Schedule


class Answer(Protocol):
    """The fleet's side of the loop, asked by the agents."""

    def until(self, ts: int) -> None:
        """Take in what was done to the fleet up to event time ``ts`` (may wait for the pipeline)."""
        ...

    def faults_off(self, host: int, ts: int, lemon: bool) -> bool:
        """No fault of ``host`` at ``ts`` is sent: it is out of service, or (``lemon``) its bad part was cured."""
        ...

    def report(self, sent: Schedule) -> dict[str, Any]:
        """What the fleet did in answer (cures, retirements, the jobs' goodput…), for the run's manifest.

        ``sent``: the faults the agents sent (those the answer held back left out).
        """
        ...


AnswerFactory = Callable[[Fleet], Answer]
