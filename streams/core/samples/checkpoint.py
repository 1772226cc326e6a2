"""The samples stage's per-partition state and its checkpoint record (see ``streams.sample_partitions``).

``PartitionState`` is the live, mutable state of one samples partition; ``Checkpoint`` is the
typed, versioned record written for it to the compacted checkpoint topic: the same JSON keys
as before it was typed (``v``, ``partition``, ``next_offset``, ``wm``, ``wm_window``,
``hosts``), so a checkpoint an older worker wrote is resumed from unchanged. A record of
another version is refused: its offset would not say what its state means.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from streams.core.peers.state import HostWindows

CHECKPOINT_VERSION = 1


class Checkpoint(msgspec.Struct, frozen=True):
    """One samples partition's host windows and the offset they are valid for."""

    partition: int
    next_offset: int
    wm: int
    wm_window: int | None
    hosts: dict[str, HostWindows]
    v: int = CHECKPOINT_VERSION


class _Version(msgspec.Struct, frozen=True):
    v: int | None = None


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Checkpoint)
_version = msgspec.json.Decoder(_Version)


@dataclass
class PartitionState:
    """Everything one samples partition contributes, valid after the record before ``next_offset``."""

    partition: int
    next_offset: int = 0
    hosts: dict[str, HostWindows] = field(default_factory=dict)  # HostStage state per host
    wm: int = -1  # newest event time seen on the partition
    wm_window: int | None = None  # start of the window ``wm`` is in

    def to_bytes(self) -> bytes:
        return _encoder.encode(
            Checkpoint(self.partition, self.next_offset, self.wm, self.wm_window, self.hosts)
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> PartitionState:
        """The state a checkpoint holds; ``ValueError`` (``msgspec.DecodeError`` is one) if it is not one of this version."""
        version = _version.decode(data).v
        if version != CHECKPOINT_VERSION:
            raise ValueError(f"checkpoint version {version!r} is not {CHECKPOINT_VERSION}")
        body = _decoder.decode(data)
        return cls(body.partition, body.next_offset, dict(body.hosts), body.wm, body.wm_window)
