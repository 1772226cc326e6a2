"""The detection policy: rules as data, validated at start-up.

A TOML file (``ground/policy.toml`` is the default) declares how raw error events map to
error classes, the repeat-offender rules, the slow-host test, the planner's buffers and the
validation limits. Any mistake fails at load time with a ``PolicyError`` naming the key.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    ValidationError,
    model_validator,
)

from ground.slow_evidence import SequentialTest
from schemas.taxonomy import IncidentCause, Operation
from streams.core.degraded_policy import DegradedPolicy
from streams.core.errors import PolicyError
from streams.core.planning.policy import PlannerPolicy
from streams.core.policy_fields import PACKAGED_FILE, DurationMs, PolicyModel, packaged, parse_duration_ms

DEFAULT_POLICY_FILE = PACKAGED_FILE

Scope = Literal["gpu", "host", "port"]
Weight = Literal["events", "count"]
# Which events a rule counts: all of its classes', or only those naming no GPU or port (real incident
# records often name just the host, and a per-GPU or per-port rule never sees them).
Component = Literal["any", "unknown"]

SCOPE_SPECIFICITY = {"gpu": 0, "port": 0, "host": 1}  # lower is more specific
# When rules fire together, the strongest remedy wins (an RMA makes a reboot moot); lower is stronger.
ACTION_STRENGTH = {"rma": 0, "nic_replacement": 1, "cable_replacement": 2, "diagnostics": 3, "reboot": 4}


class ErrorClass(PolicyModel):
    """Maps error events to one class; the first matching class wins, unmatched events are not counted."""

    name: str
    event_type: Literal[
        "XidRaised", "EccErrorObserved", "PcieAerReported", "LinkEventObserved", "ComponentFaultObserved"
    ]
    xids: list[int] | None = None
    memory: Literal["dram", "sram"] | None = None
    correctable: bool | None = None
    row_remap: list[str] | None = None
    severity: list[str] | None = None
    link_kinds: list[str] | None = None
    causes: list[IncidentCause] | None = None  # ComponentFaultObserved: the causes this class takes
    weight: Weight = "events"


class RepeatRule(PolicyModel):
    """``count`` occurrences of ``classes`` on one ``scope`` within ``window`` -> a finding."""

    name: str
    classes: list[str] = Field(min_length=1)
    scope: Scope
    count: int = Field(ge=1)
    window: DurationMs
    action: Operation
    severity: Literal["critical", "warning", "info"] = "critical"
    detector: str = "repeat_offender"
    component: Component = "any"
    # Multi-symptom rules: the window must also hold this many different classes (1: any mix).
    distinct_classes: int = Field(1, ge=1)

    def counts(self, gpu: int | None, port: int | None) -> bool:
        """Whether an event naming this GPU and port (None: not named) counts toward the rule."""
        return self.component == "any" or (gpu is None and port is None)

    @model_validator(mode="after")
    def _unknown_component_is_host_scope(self) -> RepeatRule:
        if self.component == "unknown" and self.scope != "host":
            raise ValueError("component = 'unknown' counts events naming no GPU or port: its scope is 'host'")
        return self

    @model_validator(mode="after")
    def _distinct_classes_are_listed(self) -> RepeatRule:
        if self.distinct_classes > min(len(self.classes), self.count):
            raise ValueError("distinct_classes cannot exceed the rule's classes nor its count")
        return self

    @model_validator(mode="after")
    def _single_shot_is_not_repeat(self) -> RepeatRule:
        # A count-1 rule acts on the first occurrence: it is not a repeat offender.
        if self.count == 1 and self.detector == "repeat_offender":
            object.__setattr__(self, "detector", "critical_fault")
        return self


class ValidationLimits(PolicyModel):
    """Semantic checks; a record failing one goes to the dead-letter topic."""

    max_future: DurationMs = packaged("validation", "max_future")
    min_ts_ms: int = packaged("validation", "min_ts_ms")  # 2000-01-01
    max_gpu_index: int = Field(packaged("validation", "max_gpu_index"), ge=0)
    max_port_index: int = Field(packaged("validation", "max_port_index"), ge=0)
    max_count: int = Field(packaged("validation", "max_count"), ge=1)
    max_step_time_ms: float = Field(packaged("validation", "max_step_time_ms"), gt=0)
    max_bus_bw_gbps: float = Field(packaged("validation", "max_bus_bw_gbps"), gt=0)
    max_temp_c: float = Field(packaged("validation", "max_temp_c"), gt=0)
    max_power_w: float = Field(packaged("validation", "max_power_w"), gt=0)
    max_interval_s: int = Field(packaged("validation", "max_interval_s"), ge=1)


class SlowHostPolicy(PolicyModel):
    """Peer comparison per cluster per window (robust z-score), then evidence over windows (a CUSUM).

    The peer test itself (``ground.slow_peers``) is shared with the batch view (``PeerRule.of`` this table).
    """

    window: DurationMs = packaged("slow_host", "window")
    host_grace: DurationMs = packaged("slow_host", "host_grace")
    cluster_grace: DurationMs = packaged("slow_host", "cluster_grace")
    idle_partition_timeout: DurationMs = packaged("slow_host", "idle_partition_timeout")
    z_step: float = Field(packaged("slow_host", "z_step"), gt=0)
    z_bus_bw: float = Field(packaged("slow_host", "z_bus_bw"), gt=0)
    min_mad_rel: float = Field(packaged("slow_host", "min_mad_rel"), ge=0)
    # ... and at least this far from the peer median (relative): the robust z alone flags healthy
    # hosts whose persistent offset sits in the tail of a large fleet (~3 sd is 1 % here).
    min_slowdown: float = Field(packaged("slow_host", "min_slowdown"), ge=0, lt=1)
    min_peers: int = Field(packaged("slow_host", "min_peers"), ge=3)
    # Hosts are compared relative to their job's median when the job has this many hosts in the window
    # (jobs run at different paces); hosts of smaller jobs are not judged by peers.
    min_job_peers: int = Field(packaged("slow_host", "min_job_peers"), ge=2)
    k: int = Field(packaged("slow_host", "k"), ge=1)
    n: int = Field(packaged("slow_host", "n"), ge=1)
    # The finding: a CUSUM over the host's slow windows (ground.slow_evidence), "slow in slow_share of its
    # windows" against "in healthy_share", flagged at `evidence` nats; an episode ends after clear_after
    # without a slow window once its evidence is back to zero (ground.slow_evidence.episode_over), or when
    # the host is away n windows.
    slow_share: float = Field(packaged("slow_host", "slow_share"), gt=0, lt=1)
    healthy_share: float = Field(packaged("slow_host", "healthy_share"), gt=0, lt=1)
    evidence: float = Field(packaged("slow_host", "evidence"), gt=0)
    clear_after: DurationMs = packaged("slow_host", "clear_after")
    action: Operation = packaged("slow_host", "action")

    @model_validator(mode="after")
    def _k_le_n(self) -> SlowHostPolicy:
        if self.k > self.n:
            raise ValueError(f"k ({self.k}) must not exceed n ({self.n})")
        if self.window <= 0:
            raise ValueError("window must be positive")
        if self.healthy_share >= self.slow_share:
            raise ValueError(
                f"healthy_share ({self.healthy_share}) must be under slow_share ({self.slow_share})"
            )
        return self

    @property
    def sequential(self) -> SequentialTest:
        """The CUSUM the verdict history runs (``streams.core.peers.scores.update_history``)."""
        return SequentialTest(self.healthy_share, self.slow_share, self.evidence)


class TrainsPolicy(PolicyModel):
    """Change campaigns: burn-in, the safety test (``streams.trains.safety``) and its gate, fault classes."""

    burn_in: DurationMs = packaged("trains", "burn_in")
    # hosts changed before the safety test accepts the change, or before they ran gate_soak with no class worse
    gate_pct: float = Field(packaged("trains", "gate_pct"), gt=0, le=100)
    gate_soak: DurationMs = packaged("trains", "gate_soak")
    rate_ratio: float = Field(packaged("trains", "rate_ratio"), gt=1)
    alpha: float = Field(packaged("trains", "alpha"), gt=0, lt=0.5)
    beta: float = Field(packaged("trains", "beta"), gt=0, lt=0.5)
    classes: dict[str, list[str]] = {}  # fault class -> error classes (a finding's class: its rule's first)
    # the step-time test's H1: the new version this much slower
    step_slowdown: float = Field(packaged("trains", "step_slowdown"), gt=0, lt=1)
    # a host's errors of one class a day the test counts, at most
    errors_per_host_day: int = Field(packaged("trains", "errors_per_host_day"), ge=1)


class AlertPolicy(PolicyModel):
    """When dead letters count as a surge (an alert)."""

    dlq_surge_count: int = Field(packaged("alerts", "dlq_surge_count"), ge=1)
    dlq_surge_window: DurationMs = packaged("alerts", "dlq_surge_window")


class Policy(PolicyModel):
    """The whole policy file (a file's own tables, classes and rules; its other keys as packaged)."""

    noise_xids: list[int] = packaged("", "noise_xids")
    error_grace: DurationMs = packaged("", "error_grace")
    validation: ValidationLimits = ValidationLimits()
    classes: list[ErrorClass] = []
    rules: list[RepeatRule] = []
    slow_host: SlowHostPolicy = SlowHostPolicy()
    planner: PlannerPolicy = PlannerPolicy()
    alerts: AlertPolicy = AlertPolicy()
    trains: TrainsPolicy = TrainsPolicy()
    degraded: DegradedPolicy = DegradedPolicy()

    def rules_for(self, error_class: str) -> list[RepeatRule]:
        return [r for r in self.rules if error_class in r.classes]

    def repair_time_ms(self, operation: str) -> int:
        return self.planner.repair_time.get(operation, parse_duration_ms("1d"))  # type: ignore[call-overload]

    def cause_of_rule(self, rule: str | None) -> str | None:
        """The incident cause of a rule's first error class that has one (None: no measured time applies)."""
        for r in self.rules:
            if r.name == rule:
                return next((self.planner.causes[c] for c in r.classes if c in self.planner.causes), None)
        return None


def _check_references(policy: Policy) -> None:
    """Cross-field checks pydantic cannot express; each names the offending key."""
    names = [c.name for c in policy.classes]
    for i, cls in enumerate(policy.classes):
        if names.count(cls.name) > 1:
            raise PolicyError(f"classes.{i}.name", f"duplicate class {cls.name!r}")
        noisy = sorted(set(cls.xids or ()) & set(policy.noise_xids))
        if noisy:
            raise PolicyError(
                f"classes.{i}.xids", f"XIDs {noisy} are declared noise (noise_xids) and cannot be counted"
            )
        if cls.event_type == "XidRaised" and not cls.xids:
            raise PolicyError(f"classes.{i}.xids", "an XidRaised class must list its xids")
    rule_names = [r.name for r in policy.rules]
    for i, rule in enumerate(policy.rules):
        if rule_names.count(rule.name) > 1:
            raise PolicyError(f"rules.{i}.name", f"duplicate rule {rule.name!r}")
        for cname in rule.classes:
            if cname not in names:
                raise PolicyError(
                    f"rules.{i}.classes", f"unknown error class {cname!r}; declared: {', '.join(names)}"
                )
        if "|" in rule.name:
            raise PolicyError(f"rules.{i}.name", "rule names may not contain '|'")


def parse_policy(data: dict[str, Any], path: str | None = None) -> Policy:
    """Validate a policy mapping; raise PolicyError naming the first bad key."""
    try:
        policy = Policy.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise PolicyError(key, err["msg"], path) from exc
    try:
        _check_references(policy)
    except PolicyError as exc:
        raise PolicyError(exc.key, str(exc).split(": ", 2)[-1], path) from None
    return policy


def load_policy(path: Path | str | None = None) -> Policy:
    """Load and validate a policy file (the packaged default when ``path`` is None).

    Commands pass ``--policy`` or else ``settings.detect.policy_file``, so that ``detect``,
    ``detect-policy``, ``detect-resume`` and ``score`` all read the policy the workers run.
    """
    file = Path(path) if path is not None else DEFAULT_POLICY_FILE
    try:
        data = tomllib.loads(file.read_text())
    except FileNotFoundError:
        raise PolicyError("(file)", "file not found", str(file)) from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError("(syntax)", str(exc), str(file)) from exc
    return parse_policy(data, str(file))
