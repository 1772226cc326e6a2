"""The pure part of the host-window stage: a batch of samples (or one record) -> messages for the cluster stage.

``SampleFolder`` folds a partition's samples into per-host windows (``HostStage``) and says when the
partition's event time enters a new window; ``streams.samples`` runs it over a consumer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from streams.core.peers.messages import ClusterItem, SourceIdle, SourceProgress
from streams.core.policy import Policy
from streams.core.samples.checkpoint import PartitionState
from streams.core.samples.columns import SampleColumns
from streams.core.samples.windows import HostStage, window_bounds


class SampleFolder:
    """The pure part: samples, a batch (``fold_columns``) or one record at a time -> messages for the
    cluster stage (summaries, progress)."""

    def __init__(self, policy: Policy, nsrc: int, clusters: Callable[[], Iterable[str]]) -> None:
        self.stage = HostStage(policy.slow_host)
        self.window = policy.slow_host.window
        self.nsrc = nsrc
        self.clusters = clusters  # every cluster the inventory knows (progress goes to each)
        self.seen_clusters: set[str] = set()

    def fold(
        self, state: PartitionState, record: dict[str, Any], now_ms: int | None = None
    ) -> tuple[list[ClusterItem], bool]:
        """Fold one valid record; (messages keyed by their ``cluster``, was_late).

        A HostSampled record is a one-row batch (``fold_row``); any other record only moves the
        partition's event time.
        """
        if record["event_type"] == "HostSampled":
            return self.fold_row(state, SampleColumns.of_records([record]), 0, now_ms)
        return self._progress(state, record["ts"], 0, record["cluster"], now_ms), False

    def fold_columns(
        self, state: PartitionState, cols: SampleColumns, now_ms: int | None = None
    ) -> tuple[list[ClusterItem], int]:
        """Fold a batch of valid samples in order; (messages keyed by their ``cluster``, rows late)."""
        out: list[ClusterItem] = []
        _, late = self.fold_rows(state, cols, 0, len(cols), out, now_ms)
        return out, late

    def fold_row(
        self, state: PartitionState, cols: SampleColumns, i: int, now_ms: int | None = None
    ) -> tuple[list[ClusterItem], bool]:
        """Fold row ``i`` of a batch; (messages keyed by their ``cluster``, was_late)."""
        out: list[ClusterItem] = []
        _, late = self.fold_rows(state, cols, i, i + 1, out, now_ms)
        return out, late > 0

    def fold_rows(
        self,
        state: PartitionState,
        cols: SampleColumns,
        lo: int,
        hi: int,
        out: list[ClusterItem],
        now_ms: int | None = None,
        limit: int | None = None,
    ) -> tuple[int, int]:
        """Fold rows ``lo:hi`` in order onto ``out``, stopping after the row that brings ``out`` to ``limit``
        messages; (the next row, rows late). The one loop every fold runs: a row's fields are read column by
        column and handed to ``HostStage.add``, then the partition's progress (``_progress``).

        With ``now_ms``, the event time reported downstream (progress, summaries' ``wm``) is
        capped at it: one host's fast clock must not close every cluster's windows early.
        """
        add, src, nsrc = self.stage.add, state.partition, self.nsrc
        store = state.hosts
        late = 0
        i = lo
        rows = zip(
            cols.ts[lo:hi],
            cols.host_id[lo:hi],
            cols.cluster[lo:hi],
            cols.interval_s[lo:hi],
            cols.job_id[lo:hi],
            cols.step_ms[lo:hi],
            cols.bus_bw[lo:hi],
            cols.degraded[lo:hi],
            strict=True,
        )
        for ts, host, cluster, interval_s, job, step, bus_bw, degraded in rows:
            i += 1
            summaries, was_late = add(
                store, ts, host, cluster, interval_s, job, step, bus_bw, degraded, src, nsrc, now_ms
            )
            if was_late:
                late += 1
            elif summaries:
                out += summaries
            if (ts if now_ms is None or ts < now_ms else now_ms) > state.wm:  # else no progress to tell
                out += self._progress(state, ts, interval_s, cluster, now_ms)
            if limit is not None and len(out) >= limit:
                break
        return i, late

    def _progress(
        self, state: PartitionState, ts: int, interval_s: int, cluster: str, now_ms: int | None = None
    ) -> list[ClusterItem]:
        """Tell every cluster when this partition's event time (capped at ``now_ms``) enters a new window."""
        ts = capped(ts, now_ms)
        if ts <= state.wm:
            return []
        state.wm = ts
        start, _ = window_bounds(ts, interval_s, self.window)
        self.seen_clusters.add(cluster)
        if state.wm_window == start:
            return []
        state.wm_window = start
        return self.progress(state)

    def progress(self, state: PartitionState, kind: str = "wm") -> list[ClusterItem]:
        """The partition's event time (``wm``) or its idleness (``idle``), for every known cluster."""
        clusters = sorted(self.seen_clusters | set(self.clusters()))
        mark = SourceIdle if kind == "idle" else SourceProgress
        return [mark(c, state.partition, self.nsrc, state.wm) for c in clusters]


def capped(ts: int, now_ms: int | None) -> int:
    """An event time no later than now: validation lets a clock run ``max_future`` ahead."""
    return ts if now_ms is None else min(ts, now_ms)


class FetchedBatch:
    """One fetched batch of a partition: valid records in, messages per cluster out (``bundles``).

    Samples are held and folded as one column batch (``fold_columns``) at ``fold``, or when a record of
    another type comes, which only moves the partition's event time, in its place among them.
    """

    def __init__(self, folder: SampleFolder, state: PartitionState, now_ms: int | None) -> None:
        self.folder, self.state, self.now_ms = folder, state, now_ms
        self.bundles: dict[str, list[ClusterItem]] = {}
        self.late = 0  # samples too late to count
        self._run: list[dict[str, Any]] = []

    def add(self, record: dict[str, Any]) -> None:
        if record["event_type"] == "HostSampled":
            self._run.append(record)
            return
        self.fold()
        self._keep(self.folder.fold(self.state, record, self.now_ms)[0])

    def fold(self) -> None:
        """Fold the samples held so far."""
        if self._run:
            out, late = self.folder.fold_columns(self.state, SampleColumns.of_records(self._run), self.now_ms)
            self._run = []
            self.late += late
            self._keep(out)

    def _keep(self, messages: list[ClusterItem]) -> None:
        for msg in messages:
            self.bundles.setdefault(msg.cluster, []).append(msg)
