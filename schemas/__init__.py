"""The event contract: Avro schemas, a file-based registry, the framed codec and event classes.

This package imports nothing else from fleetpulse; every other part imports it.
"""

from schemas.codec import Codec, DecodedEvent
from schemas.errors import (
    CompatibilityError,
    DecodeError,
    EncodeError,
    FramingError,
    PayloadError,
    RegistryError,
    SchemaError,
    UnknownSchemaError,
)
from schemas.events import (
    ENVELOPE_FIELDS,
    ERROR_EVENT_TYPES,
    EVENT_CLASSES,
    FLEET,
    AlertRaised,
    ComponentFaultObserved,
    EccErrorObserved,
    Event,
    FindingRaised,
    HostInventoried,
    HostSampled,
    IncidentReported,
    JobInterrupted,
    LinkEventObserved,
    MaintenanceActionRecorded,
    OperatorEventRecorded,
    PcieAerReported,
    RecordDeadLettered,
    XidRaised,
    topic_family,
)
from schemas.registry import SchemaRegistry, SchemaVersion

__all__ = [
    "ENVELOPE_FIELDS",
    "ERROR_EVENT_TYPES",
    "EVENT_CLASSES",
    "FLEET",
    "AlertRaised",
    "Codec",
    "CompatibilityError",
    "ComponentFaultObserved",
    "DecodeError",
    "DecodedEvent",
    "EccErrorObserved",
    "EncodeError",
    "Event",
    "FindingRaised",
    "FramingError",
    "HostInventoried",
    "HostSampled",
    "IncidentReported",
    "JobInterrupted",
    "LinkEventObserved",
    "MaintenanceActionRecorded",
    "OperatorEventRecorded",
    "PayloadError",
    "PcieAerReported",
    "RecordDeadLettered",
    "RegistryError",
    "SchemaError",
    "SchemaRegistry",
    "SchemaVersion",
    "UnknownSchemaError",
    "XidRaised",
    "topic_family",
]
