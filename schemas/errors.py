"""Errors of the event contract.

SchemaError
├── RegistryError        registry.json and the .avsc files disagree, or an unknown subject
├── CompatibilityError   a new schema version breaks readers of the old one
├── EncodeError          a record does not fit its schema
├── BoundsError          a value outside the bounds of ``schemas.bounds`` (also a ValueError)
└── DecodeError          bytes that cannot be turned into an event (``reason`` says why)
    ├── FramingError         no Confluent framing: too short or wrong magic byte
    ├── UnknownSchemaError   the 4-byte schema id is not in the registry
    └── PayloadError         the Avro body does not decode with that schema
"""

from __future__ import annotations


class SchemaError(Exception):
    """Base of every error in the schemas package."""


class RegistryError(SchemaError):
    pass


class CompatibilityError(SchemaError):
    def __init__(self, subject: str, problems: list[str]) -> None:
        self.subject = subject
        self.problems = problems
        super().__init__(f"{subject}: incompatible schema change: " + "; ".join(problems))


class EncodeError(SchemaError):
    def __init__(self, event_type: str, reason: str) -> None:
        self.event_type = event_type
        self.reason = reason
        super().__init__(f"cannot encode {event_type}: {reason}")


class DecodeError(SchemaError):
    """Undecodable bytes; ``reason`` is a short machine-friendly explanation."""

    def __init__(self, reason: str, schema_id: int | None = None) -> None:
        self.reason = reason
        self.schema_id = schema_id
        super().__init__(reason)


class FramingError(DecodeError):
    pass


class UnknownSchemaError(DecodeError):
    pass


class PayloadError(DecodeError):
    pass


class BoundsError(SchemaError, ValueError):
    """A value outside the bounds every way in checks (``schemas.bounds``); a ValueError for pydantic."""
