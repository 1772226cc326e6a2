"""Where a reader of a whole log stands in one partition: shared by the tailer and the fleet snapshot."""

from __future__ import annotations

import zlib
from typing import NamedTuple


class LogMark(NamedTuple):
    """Where a reader of one partition stands: the next offset, and a checksum of the record before it
    (so a recreated log that has grown past the same offset is told from the one the reader left)."""

    next_offset: int
    crc: int


def checksum(value: bytes | None) -> int:
    return zlib.crc32(value or b"")
