"""Typed, versioned messages of the slow-host detector: samples stage → cluster stage.

The host-window stage (``streams.samples``) sends, per cluster and consumed batch, one
``SummaryBundle`` holding, in source order, the ``HostSummary`` of every host window the batch
closed and the source partition's progress (``SourceProgress``) or idleness (``SourceIdle``).
Tagged msgspec structs as in ``streams.core.messages``: the ``type`` field names the kind, ``v`` the
version. The wire is the JSON older workers wrote (the same keys; ``v`` defaults when absent),
and a lone summary, progress mark or idle notice, as sent before bundles, still reads.
"""

from __future__ import annotations

from typing import Any

import msgspec

from streams.core.messages import MESSAGE_VERSION


class HostSummary(msgspec.Struct, frozen=True, tag="summary", tag_field="type"):
    """One host's closed window: mean step time and bus bandwidth, read on source partition ``src`` of ``nsrc``."""

    host_id: str
    cluster: str
    window_start: int
    window_end: int
    step_ms: float
    bus_bw: float
    n: int  # samples in the window
    wm: int  # the source partition's event time when the window closed (capped at the wall clock)
    job: str | None = None  # the window's last job; None in summaries written before jobs were kept
    src: int = 0
    nsrc: int = 1
    v: int = MESSAGE_VERSION
    degraded: float = 0.0  # share of the window's samples with degraded job-independent telemetry


class _SourceMark(msgspec.Struct, frozen=True, tag_field="type"):
    cluster: str
    src: int  # the samples partition
    nsrc: int  # how many partitions the samples topic has
    wm: int  # the partition's newest event time (capped at the wall clock)
    v: int = MESSAGE_VERSION


class SourceProgress(_SourceMark, frozen=True, tag="wm"):
    """A samples partition's event time entered a new window (sent to every cluster, summaries or not)."""


class SourceIdle(_SourceMark, frozen=True, tag="idle"):
    """A samples partition is caught up with nothing new: it stops holding the cluster's watermark back."""


ClusterItem = HostSummary | SourceProgress | SourceIdle


class SummaryBundle(msgspec.Struct, frozen=True, tag="bundle", tag_field="type"):
    """Everything one consumed batch has for one cluster, in source order (one Faust event)."""

    cluster: str
    items: tuple[ClusterItem, ...]
    v: int = MESSAGE_VERSION


ClusterMessage = SummaryBundle | HostSummary | SourceProgress | SourceIdle

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(ClusterMessage)


def encode(message: SummaryBundle) -> bytes:
    """The bytes the samples stage sends to the cluster stage's topic."""
    return _encoder.encode(message)


def cluster_message(value: Any) -> ClusterMessage:
    """Decode what the cluster stage's topic delivered (bytes, or JSON already parsed).

    Raises ``msgspec.DecodeError`` (``msgspec.ValidationError`` for well-formed JSON of another
    shape), whose message names what is wrong.
    """
    if isinstance(value, bytes | bytearray | memoryview):
        return _decoder.decode(value)
    return msgspec.convert(value, ClusterMessage)  # type: ignore[arg-type]


def items_of(message: ClusterMessage) -> tuple[ClusterItem, ...]:
    """A bundle's items, or the one item an older worker sent alone."""
    return message.items if isinstance(message, SummaryBundle) else (message,)
