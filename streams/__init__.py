"""Detection core: validation, repeat-offender and slow-host detectors, event-sourced host lifecycle,
maintenance planner, and the Faust worker (``fleetpulse detect``) that runs them.

The rules, the lifecycle fold and the planner are pure and import no Kafka client; the Faust
app lives in ``streams.app`` and is imported only by the worker.
"""

from streams.classify import Signal, classify
from streams.errors import InvalidRecordError, PolicyError, StreamsError, WorkerError
from streams.findings import Finding
from streams.lifecycle import Action, FleetState, HostState, apply, fold, replay
from streams.planner import DomainBudget, Planner, budget
from streams.policy import DEFAULT_POLICY_FILE, Policy, load_policy, parse_policy
from streams.repeat import observe
from streams.slow import ClusterStage, HostStage, robust_z
from streams.validate import check
from streams.worker import WorkerProcess, build_detect_app, run_worker, spawn_worker

__all__ = [
    "DEFAULT_POLICY_FILE",
    "Action",
    "ClusterStage",
    "DomainBudget",
    "Finding",
    "FleetState",
    "HostStage",
    "HostState",
    "InvalidRecordError",
    "Planner",
    "Policy",
    "PolicyError",
    "Signal",
    "StreamsError",
    "WorkerError",
    "WorkerProcess",
    "apply",
    "budget",
    "build_detect_app",
    "check",
    "classify",
    "fold",
    "load_policy",
    "observe",
    "parse_policy",
    "replay",
    "robust_z",
    "run_worker",
    "spawn_worker",
]
