"""How far the finding sources a worker owns have got, for the planner's event-time order.

A source is one partition of a stage that raises findings: an errors partition (repeat-offender
rules) or a cluster-summaries partition (slow hosts). Its mark is a time no finding it sends
later is at or before, and whether it is caught up (idle: nothing left to read, so it holds no
one back). The worker's timer sends the marks of the partitions it owns to every planner
partition (``streams.core.planning.order``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from streams.core.peers.stage import ClusterStage
from streams.core.peers.state import ClusterMeta
from streams.core.planning.order import Mark, cluster_source, errors_source
from streams.core.policy import SlowHostPolicy
from streams.core.state import KeyedState


def cluster_floor(store: KeyedState, cluster: str, policy: SlowHostPolicy) -> int | None:
    """No slow-host finding of ``cluster`` comes later at or before this time, as its meta in ``store`` says.

    ``store`` is what the cluster stage writes to (its table's cache live, a plain dict in the
    backtest). A finding's time is its window's end. Windows close in order once the cluster's
    watermark is a grace past their end, so a window not closed yet ends after the last one closed
    and after the watermark less that grace; None before the cluster has any time at all.
    """
    meta = ClusterMeta.from_stored(store.get(f"{cluster}|meta"))
    wm = ClusterStage.watermark(meta)
    bounds = [t for t in (meta.closed, None if wm is None else wm - max(policy.cluster_grace, policy.window))]
    known = [t for t in bounds if t is not None]
    return max(known) if known else None


def cluster_drained(store: KeyedState, cluster: str) -> bool:
    """Every samples partition has declared itself idle to ``cluster``: none of its summaries is on its way.

    The samples partitions' owners say so on the summaries partition itself (``SourceIdle``, after
    whatever they sent before), so a worker that owns no samples partition knows it too.
    """
    meta = ClusterMeta.from_stored(store.get(f"{cluster}|meta"))
    return len(meta.pwm) >= meta.nsrc and set(meta.pwm) <= set(meta.idle)


@dataclass(slots=True)
class SourceTimes:
    """Per source partition, the time its findings have passed (updated after the findings are sent)."""

    errors: dict[int, int] = field(default_factory=dict)
    clusters: dict[int, dict[str, int | None]] = field(default_factory=dict)
    drained: dict[int, dict[str, bool]] = field(default_factory=dict)  # per partition, ``cluster_drained``
    done: dict[int, int] = field(default_factory=dict)  # per errors partition, the last offset handled
    on_done: Callable[[int, int], object] | None = None  # (partition, offset) after each ``errors_done``

    def errors_read(self, partition: int, ts: int, offset: int | None = None) -> None:
        """An errors record of ``ts`` was handled: a later one of the same time may still raise a finding.

        ``offset``: the record's, once whatever it raised has been sent (see ``errors_done``).
        """
        self.errors[partition] = max(self.errors.get(partition, ts - 1), ts - 1)
        if offset is not None:
            self.errors_done(partition, offset)

    def errors_done(self, partition: int, offset: int) -> None:
        """The errors record at ``offset`` has been handled, its finding sent (or it was dead-lettered)."""
        self.done[partition] = max(self.done.get(partition, offset), offset)
        if self.on_done is not None:
            self.on_done(partition, offset)

    def cluster_read(self, partition: int, cluster: str, floor: int | None, *, drained: bool = False) -> None:
        self.clusters.setdefault(partition, {})[cluster] = floor
        self.drained.setdefault(partition, {})[cluster] = drained

    def upstream_idle(self, partition: int) -> bool:
        """Every cluster the partition has carried is drained (none yet: not known to be)."""
        flags = self.drained.get(partition, {})
        return bool(flags) and all(flags.values())

    def forget_upstream(self, partition: int) -> None:
        """Another worker owned it meanwhile: what its clusters said then is out of date."""
        self.drained.pop(partition, None)

    def marks(
        self,
        errors: Iterable[tuple[int, bool]],
        clusters: Iterable[tuple[int, bool]],
        writers_passed: Mapping[int, int] | None = None,
    ) -> list[tuple[str, Mark]]:
        """Marks of the partitions owned, each with whether it is caught up.

        ``writers_passed``: per errors partition, the time its declared writers have passed
        (``streams.core.planning.writers``); no record, so no finding, at or before it is to come.
        """
        passed = writers_passed or {}
        out = [
            (errors_source(p), Mark(_latest(self.errors.get(p), passed.get(p)), idle)) for p, idle in errors
        ]
        for p, idle in clusters:
            floors = list(self.clusters.get(p, {}).values())
            known = (
                None
                if not floors or any(f is None for f in floors)
                else min(f for f in floors if f is not None)
            )
            out.append((cluster_source(p), Mark(known, idle)))
        return out


def _latest(*times: int | None) -> int | None:
    return max((t for t in times if t is not None), default=None)
