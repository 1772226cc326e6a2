"""Events as explicit classes named as facts, one per Avro schema.

Each class carries its ``EVENT_TYPE``, ``SCHEMA_VERSION`` and the topic family it travels
on (``TOPIC``, a key of ``ground.kafka.topics.TopicSettings``). The payload stays a plain
mapping shaped by the ``.avsc`` (it is what the Avro codec reads and writes, and what hot
paths build directly without an object per event).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

TopicFamily = Literal["inventory", "samples", "errors", "findings", "actions", "alerts", "dlq"]
FLEET = "-"  # host_id / cluster of fleet-level events (alerts, planner halts, dead letters)

ENVELOPE_FIELDS = ("event_id", "event_type", "schema_version", "host_id", "cluster", "ts", "agent_seq")


# v2 writes a null step time for a host without a job and v1 wrote 0: one this low or lower means "no job"
NO_JOB_STEP_MS = 0.0


def job_step_time(step_time_ms: float | None) -> float | None:
    """A HostSampled step time when a job reported one (above ``NO_JOB_STEP_MS``), else ``None``, in either
    version (``analytics.jobs.source.step_time`` is the column form)."""
    return step_time_ms if step_time_ms is not None and step_time_ms > NO_JOB_STEP_MS else None


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """The common envelope plus a typed payload."""

    EVENT_TYPE: ClassVar[str]
    SCHEMA_VERSION: ClassVar[int] = 1
    TOPIC: ClassVar[TopicFamily]
    LAKE_TABLE: ClassVar[str | None] = None  # the lake table's name when not derived from EVENT_TYPE

    event_id: str
    host_id: str
    cluster: str
    ts: int
    agent_seq: int = 0
    payload: Mapping[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id,
            "event_type": self.EVENT_TYPE,
            "schema_version": self.SCHEMA_VERSION,
            "host_id": self.host_id,
            "cluster": self.cluster,
            "ts": self.ts,
            "agent_seq": self.agent_seq,
            "payload": dict(self.payload),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Event:
        klass = EVENT_CLASSES[record["event_type"]]
        return klass(
            event_id=record["event_id"],
            host_id=record["host_id"],
            cluster=record["cluster"],
            ts=record["ts"],
            agent_seq=record["agent_seq"],
            payload=record["payload"],
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class HostInventoried(Event):
    EVENT_TYPE: ClassVar[str] = "HostInventoried"
    TOPIC: ClassVar[TopicFamily] = "inventory"


@dataclass(frozen=True, slots=True, kw_only=True)
class HostSampled(Event):
    """v2: ``step_time_ms`` may be null (no job reports), GPUs carry throttle reasons and their PCIe maximum."""

    EVENT_TYPE: ClassVar[str] = "HostSampled"
    SCHEMA_VERSION: ClassVar[int] = 2
    TOPIC: ClassVar[TopicFamily] = "samples"


@dataclass(frozen=True, slots=True, kw_only=True)
class XidRaised(Event):
    """v2: ``gpu`` may be null, when the source names only the host."""

    EVENT_TYPE: ClassVar[str] = "XidRaised"
    SCHEMA_VERSION: ClassVar[int] = 2
    TOPIC: ClassVar[TopicFamily] = "errors"


@dataclass(frozen=True, slots=True, kw_only=True)
class EccErrorObserved(Event):
    """v2: ``gpu`` may be null, when the source names only the host."""

    EVENT_TYPE: ClassVar[str] = "EccErrorObserved"
    SCHEMA_VERSION: ClassVar[int] = 2
    TOPIC: ClassVar[TopicFamily] = "errors"


@dataclass(frozen=True, slots=True, kw_only=True)
class PcieAerReported(Event):
    EVENT_TYPE: ClassVar[str] = "PcieAerReported"
    TOPIC: ClassVar[TopicFamily] = "errors"


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkEventObserved(Event):
    """v2: ``port`` may be null, when the source names only the host."""

    EVENT_TYPE: ClassVar[str] = "LinkEventObserved"
    SCHEMA_VERSION: ClassVar[int] = 2
    TOPIC: ClassVar[TopicFamily] = "errors"


@dataclass(frozen=True, slots=True, kw_only=True)
class ComponentFaultObserved(Event):
    """A fault of a part with no raw signal of its own (PSU, fan, PCIe width, NIC GID table, link speed)."""

    EVENT_TYPE: ClassVar[str] = "ComponentFaultObserved"
    TOPIC: ClassVar[TopicFamily] = "errors"


@dataclass(frozen=True, slots=True, kw_only=True)
class JobInterrupted(Event):
    EVENT_TYPE: ClassVar[str] = "JobInterrupted"
    TOPIC: ClassVar[TopicFamily] = "errors"


@dataclass(frozen=True, slots=True, kw_only=True)
class FindingRaised(Event):
    EVENT_TYPE: ClassVar[str] = "FindingRaised"
    TOPIC: ClassVar[TopicFamily] = "findings"


@dataclass(frozen=True, slots=True, kw_only=True)
class MaintenanceActionRecorded(Event):
    EVENT_TYPE: ClassVar[str] = "MaintenanceActionRecorded"
    TOPIC: ClassVar[TopicFamily] = "actions"


@dataclass(frozen=True, slots=True, kw_only=True)
class AlertRaised(Event):
    EVENT_TYPE: ClassVar[str] = "AlertRaised"
    TOPIC: ClassVar[TopicFamily] = "alerts"


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordDeadLettered(Event):
    EVENT_TYPE: ClassVar[str] = "RecordDeadLettered"
    TOPIC: ClassVar[TopicFamily] = "dlq"


@dataclass(frozen=True, slots=True, kw_only=True)
class IncidentReported(Event):
    """An incident a fleet recorded beyond raw signals (imported history, tickets); see ``schemas.taxonomy``."""

    EVENT_TYPE: ClassVar[str] = "IncidentReported"
    TOPIC: ClassVar[TopicFamily] = "actions"  # every detect worker folds it into the hosts that are out
    LAKE_TABLE: ClassVar[str | None] = "incidents"


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatorEventRecorded(Event):
    """A step people or their systems took on a host (out of service, repair, RMA, return)."""

    EVENT_TYPE: ClassVar[str] = "OperatorEventRecorded"
    TOPIC: ClassVar[TopicFamily] = "actions"
    LAKE_TABLE: ClassVar[str | None] = "operator_events"


@dataclass(frozen=True, slots=True, kw_only=True)
class HostVersionsReported(Event):
    """A host's driver, CUDA driver, VBIOS, InfoROM, NIC firmware, kernel and OS image (null: not reported)."""

    EVENT_TYPE: ClassVar[str] = "HostVersionsReported"
    # telemetry beside the inventory (compacted: the newest report per host is kept, under its own key,
    # ``kafka_key``); the host side's change_applied goes to fleet.actions, which operators write
    TOPIC: ClassVar[TopicFamily] = "inventory"
    LAKE_TABLE: ClassVar[str | None] = "host_versions"


@dataclass(frozen=True, slots=True, kw_only=True)
class CampaignRecorded(Event):
    """A change campaign's step (started, paused, resumed, halted, aborted, completed)."""

    EVENT_TYPE: ClassVar[str] = "CampaignRecorded"
    TOPIC: ClassVar[TopicFamily] = "actions"
    LAKE_TABLE: ClassVar[str | None] = "campaigns"


VERSION_COMPONENTS = ("driver", "cuda_driver", "vbios", "inforom", "nic_firmware", "kernel", "os_image")


EVENT_CLASSES: dict[str, type[Event]] = {
    cls.EVENT_TYPE: cls
    for cls in (
        HostInventoried,
        HostSampled,
        XidRaised,
        EccErrorObserved,
        PcieAerReported,
        LinkEventObserved,
        ComponentFaultObserved,
        JobInterrupted,
        FindingRaised,
        MaintenanceActionRecorded,
        AlertRaised,
        RecordDeadLettered,
        IncidentReported,
        OperatorEventRecorded,
        HostVersionsReported,
        CampaignRecorded,
    )
}

ERROR_EVENT_TYPES = tuple(name for name, cls in EVENT_CLASSES.items() if cls.TOPIC == "errors")


def kafka_key(event_type: str, host_id: str) -> bytes:
    """The Kafka key of an event: its host, but a host's version report has a key of its own, so the
    compacted ``fleet.inventory`` keeps its newest ``HostInventoried`` and its newest versions both."""
    return (
        f"{host_id}|versions".encode() if event_type == HostVersionsReported.EVENT_TYPE else host_id.encode()
    )


def topic_family(event_type: str) -> TopicFamily:
    """The topic family an event type travels on."""
    return EVENT_CLASSES[event_type].TOPIC
