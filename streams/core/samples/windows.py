"""The slow-host detector's first stage: per-host event-time windows of step time and bus bandwidth.

``HostStage`` is pure over a dict-like store of one samples partition's hosts (``HostWindows``,
``streams.core.peers.state``); each window it closes becomes one ``HostSummary`` for the cluster stage
(``streams.core.peers.stage``). ``streams.core.samples.folder`` runs it over the samples stage's partitions.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from ground.slow_peers import window_bounds
from streams.core.messages import MESSAGE_VERSION
from streams.core.peers.messages import HostSummary
from streams.core.peers.state import HostWindows, Window
from streams.core.policy import SlowHostPolicy
from streams.core.samples.columns import SampleColumns

HostStore = MutableMapping[str, HostWindows]  # the host windows of one samples partition
_NO_WINDOWS = HostWindows()

__all__ = ["HostStage", "HostStore", "window_bounds"]


class HostStage:
    """Per-host event-time windows of step time, bus bandwidth and job-independent degradation (state key:
    host_id, value: ``HostWindows``)."""

    def __init__(self, policy: SlowHostPolicy) -> None:
        self.policy = policy

    def add_sample(self, store: HostStore, record: dict[str, Any]) -> tuple[list[HostSummary], bool]:
        """Fold one HostSampled record (``add_row`` of a one-row batch)."""
        return self.add_row(store, SampleColumns.of_records([record]), 0)

    def add_row(
        self,
        store: HostStore,
        cols: SampleColumns,
        i: int,
        src: int = 0,
        nsrc: int = 1,
        cap: int | None = None,
    ) -> tuple[list[HostSummary], bool]:
        """Fold row ``i`` of a batch of samples; return (summaries of windows it closed, was_late).

        A summary is read on partition ``src`` of ``nsrc`` (the caller knows where it read the record), its
        ``wm`` capped at ``cap``.
        """
        return self.add(
            store,
            cols.ts[i],
            cols.host_id[i],
            cols.cluster[i],
            cols.interval_s[i],
            cols.job_id[i],
            cols.step_ms[i],
            cols.bus_bw[i],
            cols.degraded[i],
            src,
            nsrc,
            cap,
        )

    def add(
        self,
        store: HostStore,
        ts: int,
        host: str,
        cluster: str,
        interval_s: int,
        job: str | None,
        step: float | None,
        bus_bw: float,
        degraded: bool,
        src: int = 0,
        nsrc: int = 1,
        cap: int | None = None,
    ) -> tuple[list[HostSummary], bool]:
        """Fold one sample given field by field (``add_row``; ``SampleFolder.fold_rows`` over a batch)."""
        if job is None or step is None:
            return [], False  # no job on the host: nothing to compare
        state = store.get(host) or _NO_WINDOWS
        start, end = window_bounds(ts, interval_s, self.policy.window)
        closed = state.closed
        if closed is not None and end <= closed:
            return [], True
        windows = dict(state.w)
        key = str(start)
        acc = windows.get(key)
        deg = state.deg  # copied before it changes (most samples leave it as it is)
        if degraded:
            deg = dict(deg)
            deg[key] = deg.get(key, 0) + 1
        # the job is the window's last one (a host changing jobs mid-window is compared with the new one)
        if acc is None:
            windows[key] = Window(step, bus_bw, 1, end, job)
        else:
            windows[key] = Window(acc.step_ms + step, acc.bus_bw + bus_bw, acc.n + 1, end, job)
        wm = ts if state.wm is None or ts > state.wm else state.wm
        summaries = []
        grace = self.policy.host_grace
        # the windows this sample closes, oldest first (most samples close none: no sort then)
        done = [key for key, w in windows.items() if w.end + grace <= wm and w.end <= start]
        for key in sorted(done, key=int) if len(done) > 1 else done:
            w = windows.pop(key)
            bad = 0
            if key in deg:
                deg = dict(deg) if deg is state.deg else deg
                bad = deg.pop(key)
            closed = w.end if closed is None else max(closed, w.end)
            summaries.append(
                HostSummary(
                    host,
                    cluster,
                    int(key),
                    w.end,
                    w.step_ms / w.n,
                    w.bus_bw / w.n,
                    w.n,
                    wm if cap is None or wm < cap else cap,
                    w.job,
                    src,
                    nsrc,
                    MESSAGE_VERSION,
                    bad / w.n,
                )
            )
        store[host] = HostWindows(wm, closed, windows, deg)
        return summaries, False
