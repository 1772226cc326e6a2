"""Detection: validation, repeat-offender and slow-host detectors, event-sourced host lifecycle,
maintenance planner, and the Faust worker (``fleetpulse detect``) that runs them.

The pure pipeline is the package ``streams.core`` (it imports no Kafka client; a contract says so);
the modules beside it are the worker shell: the Faust app in ``streams.app``, its agents, and the
process that runs it in ``streams.worker``. The shell is not imported here, so importing a rule
does not load Faust.
"""

from streams.core.actions import Action
from streams.core.classify import Signal, classify
from streams.core.errors import InvalidRecordError, PolicyError, StreamsError, WorkerError
from streams.core.findings import Finding
from streams.core.fleet.lifecycle import FleetState, HostState, apply, fold, replay
from streams.core.peers.scores import robust_z
from streams.core.peers.stage import ClusterStage
from streams.core.planning.budget import DomainBudget, budget
from streams.core.planning.planner import Planner
from streams.core.policy import DEFAULT_POLICY_FILE, Policy, load_policy, parse_policy
from streams.core.repeat import observe
from streams.core.samples.windows import HostStage
from streams.core.validate import check

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
    "apply",
    "budget",
    "check",
    "classify",
    "fold",
    "load_policy",
    "observe",
    "parse_policy",
    "replay",
    "robust_z",
]
