"""A producer's event-time progress on one partition it writes: nothing at or before ``ts`` follows.

Producers that report their progress send one ``WriterProgress`` per partition of each topic they
write, on the progress topic (``fleet.progress``), after every record they sent there before it
was acknowledged. ``through`` is the offset of the last of those records on that partition (-1:
none yet). A reader that has handled the partition through that offset has everything the writer
will ever send at or before ``ts`` there: it need not wait out a quiet time for the writer's
retries. JSON, tagged and versioned like the worker's internal messages; not an Avro event: it
says how far a writer got, nothing happened in the fleet, so the lake never archives it.

A report may also say who writes the partition (``writers``: its complete set of writers as the
writer knows it, itself included; empty: it makes no such claim), and that the writer is done
there (``done``: nothing more at all follows from it after ``through``, so a reader forgets it).
Both have defaults, so reports of either shape decode in either reader.
"""

from __future__ import annotations

import msgspec

from schemas.errors import DecodeError

PROGRESS_VERSION = 1


class WriterProgress(msgspec.Struct, frozen=True, tag="writer_progress", tag_field="type"):
    """``writer`` will send nothing at or before ``ts`` to ``topic``/``partition`` after offset ``through``."""

    writer: str
    topic: str
    partition: int
    through: int
    ts: int
    v: int = PROGRESS_VERSION
    writers: tuple[str, ...] = ()  # the partition's every writer, as this one knows it (empty: no claim)
    done: bool = False  # nothing more at all follows from this writer on the partition


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(WriterProgress)


def encode_progress(progress: WriterProgress) -> bytes:
    return _ENCODER.encode(progress)


def decode_progress(value: bytes | None) -> WriterProgress:
    """The progress record in ``value``; ``DecodeError`` says why it is not one."""
    if value is None:
        raise DecodeError("progress: empty record")
    try:
        progress = _DECODER.decode(value)
    except msgspec.DecodeError as exc:  # ValidationError is a subclass
        raise DecodeError(f"progress: {exc}") from None
    if progress.v != PROGRESS_VERSION:
        raise DecodeError(f"progress: version {progress.v} (this reader knows {PROGRESS_VERSION})")
    if not progress.writer or progress.partition < 0 or progress.through < -1:
        raise DecodeError("progress: empty writer, negative partition or offset")
    if progress.writers and progress.writer not in progress.writers:
        raise DecodeError(f"progress: {progress.writer} claims a set of writers without itself")
    return progress
