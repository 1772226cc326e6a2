"""The host agent: one process per real GPU host emitting the simulator's events (``fleetpulse agent``).

See docs/AGENT.md for what each collector reads and which event field it fills.
"""

from producers.agent.agent import Agent
from producers.agent.client import report_step
from producers.agent.collector import Collector, Fact, Observation, Problems
from producers.agent.errors import AgentError, SpoolError
from producers.agent.service import once, serve

__all__ = [
    "Agent",
    "AgentError",
    "Collector",
    "Fact",
    "Observation",
    "Problems",
    "SpoolError",
    "once",
    "report_step",
    "serve",
]
