"""The detect worker's Faust agents, timers and tasks, kept thin: they decode, call a pure rule, send.

Each group sees only the parts it uses, built once by ``streams.app``: the errors agent
(``ErrorsParts``), the cluster agent and the samples stage (``ClusterParts``), the planner agent
with its tick and progress timers (``PlannerParts``), and the log tailers (``LogParts``).
"""

from __future__ import annotations

from typing import Any

import faust

from streams.agents.cluster import ClusterParts, register_cluster, register_samples
from streams.agents.errors import ErrorsParts, register_errors
from streams.agents.logs import LogParts, register_tailers
from streams.agents.planner import PROGRESS_INTERVAL_S, PlannerParts, register_planner, send_progress

__all__ = [
    "PROGRESS_INTERVAL_S",
    "ClusterParts",
    "ErrorsParts",
    "LogParts",
    "PlannerParts",
    "register_agents",
    "send_progress",
]


def register_agents(
    app: faust.App, *, errors: ErrorsParts, cluster: ClusterParts, planner: PlannerParts, logs: LogParts
) -> dict[str, Any]:
    """The worker's agents, timers, rebalance handler and background tasks, on ``app``; returns the
    agents by name (tests drive them with ``test_context``)."""
    agents = {
        "errors": register_errors(app, errors),
        "cluster": register_cluster(app, cluster),
        "planner": register_planner(app, planner),
    }

    async def on_revoked(sender: Any, revoked: set[Any], *args: Any, **kwargs: Any) -> None:
        cluster.cache.drop()  # the table is the truth again after a rebalance
        planner.plans.revoked(revoked)
        for tp in revoked:  # handled by another worker meanwhile: caught up is judged by the commit again
            planner.intake.forget(tp.topic, tp.partition)

    app.on_partitions_revoked.connect(on_revoked)  # type: ignore[arg-type]
    register_tailers(app, logs)
    register_samples(app, cluster)
    return agents
