"""The lake's tables, one per event type, and the names that lead from one to the other.

Its own module because both the lake (archiver, reader) and the quality gates name tables.
"""

from __future__ import annotations

from analytics.errors import LakeError
from schemas.arrow import table_name
from schemas.events import EVENT_CLASSES

TABLES: dict[str, str] = {table_name(event_type): event_type for event_type in EVENT_CLASSES}


def event_type_of(table: str) -> str:
    """The event type stored in a lake table (``xid_raised`` → ``XidRaised``); also accepts the type itself."""
    if table in TABLES:
        return TABLES[table]
    if table in EVENT_CLASSES:
        return table
    raise LakeError(f"unknown lake table {table!r}; known: {', '.join(sorted(TABLES))}")


def table_of(name: str) -> str:
    """Normalise a table or event-type name to the table name."""
    return table_name(event_type_of(name))


__all__ = ["TABLES", "event_type_of", "table_of"]
