"""Slow-host detector: per-host window summaries, then peer comparison per cluster per window.

Two stages, both pure functions over a dict-like store (a Faust table in the worker, a plain
dict in tests): ``HostStage`` (keyed by host) folds samples into event-time windows and emits
one summary (``HostSummary``, ``streams.slow_messages``) per closed window; ``ClusterStage`` (keyed by cluster) collects the summaries and,
when a window closes by the cluster's watermark, scores every host against its peers with a
robust z-score; a host slow in k of its last n windows becomes a finding. What the stages
store is typed too (``streams.slow_state``).
"""

from __future__ import annotations

import statistics
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from schemas.events import job_step_time
from streams.findings import Finding
from streams.ids import finding_id
from streams.policy import SlowHostPolicy
from streams.slow_messages import ClusterItem, HostSummary, SourceIdle, SourceProgress
from streams.slow_state import (
    ClusterHistory,
    ClusterMeta,
    HostHistory,
    HostWindows,
    Marks,
    Window,
    emitted_of,
)

MAD_TO_SD = 1.4826
Store = MutableMapping[str, Any]  # the cluster stage's table: JSON-able values
HostStore = MutableMapping[str, HostWindows]  # the host windows of one samples partition
_NO_WINDOWS = HostWindows()


def window_bounds(ts: int, interval_s: int, window_ms: int) -> tuple[int, int]:
    """The window a sample falls in; a sample longer than the window covers exactly one window."""
    length = max(window_ms, interval_s * 1000)
    start = ts - ts % length
    return start, start + length


def robust_z(values: list[float], min_mad_rel: float) -> tuple[float, float]:
    """(median, scale) with scale = 1.4826 * MAD, floored at min_mad_rel * |median|."""
    med = statistics.median(values)
    mad = statistics.median([abs(v - med) for v in values])
    scale = max(MAD_TO_SD * mad, min_mad_rel * abs(med), 1e-12)
    return med, scale


@dataclass(frozen=True, slots=True)
class Verdict:
    host_id: str
    window_start: int
    window_end: int
    z_step: float
    z_bus_bw: float
    slow: bool
    step_ms: float
    median_step_ms: float


Member = tuple[float, float, str | None]  # a host's window: mean step time, mean bus bandwidth, job


def _references(members: dict[str, Member], min_job_peers: int) -> dict[str, tuple[float, float]]:
    """Each judged host's reference (step, bus bandwidth): its job's medians.

    Hosts of one synchronous job share a model and a step time; another job on the same cluster may
    run at another pace (another model, another batch), so neither the cluster's median nor another
    job's says anything about a host. A job with fewer hosts than ``min_job_peers`` in the window
    has no median of its own to trust: its hosts get no reference and are not judged. Summaries
    that name no job (written before jobs were recorded) are compared with each other.
    """
    by_job: dict[str | None, list[str]] = {}
    for host, (_, _, job) in members.items():
        by_job.setdefault(job, []).append(host)
    refs: dict[str, tuple[float, float]] = {}
    for job, hosts in by_job.items():
        if job is not None and len(hosts) < min_job_peers:
            continue
        ref = (
            statistics.median(members[h][0] for h in hosts),
            statistics.median(members[h][1] for h in hosts),
        )
        refs.update((h, ref) for h in hosts)
    return refs


def evaluate_window(
    members: dict[str, Member], window_start: int, window_end: int, policy: SlowHostPolicy
) -> list[Verdict]:
    """Score each host's (step_ms, bus_bw) against its peers; too few peers -> no verdicts.

    Each host's values are taken relative to its job's medians (``_references``; a host of a job too
    small for a median gets no verdict), and the robust z
    of those ratios is computed over the whole cluster. A window is slow when a ratio is both an
    outlier (robust z) and worse than 1 by at least ``min_slowdown``: significant and large enough
    to matter to a synchronous job.
    """
    if len(members) < policy.min_peers:
        return []
    refs = _references(members, policy.min_job_peers)
    if len(refs) < policy.min_peers:
        return []
    steps = {h: members[h][0] / r[0] if r[0] > 0 else 1.0 for h, r in refs.items()}
    bws = {h: members[h][1] / r[1] if r[1] > 0 else 1.0 for h, r in refs.items()}
    med_s, scale_s = robust_z(list(steps.values()), policy.min_mad_rel)
    med_b, scale_b = robust_z(list(bws.values()), policy.min_mad_rel)
    out = []
    for host in sorted(refs):
        step, bw = steps[host], bws[host]
        z_s = (step - med_s) / scale_s
        z_b = (bw - med_b) / scale_b
        slow_step = z_s >= policy.z_step and step >= med_s * (1 + policy.min_slowdown)
        slow_bw = -z_b >= policy.z_bus_bw and bw <= med_b * (1 - policy.min_slowdown)
        slow = slow_step or slow_bw
        out.append(Verdict(host, window_start, window_end, z_s, z_b, slow, members[host][0], refs[host][0]))
    return out


class HostStage:
    """Per-host event-time windows of step time and bus bandwidth (state key: host_id, value: ``HostWindows``)."""

    def __init__(self, policy: SlowHostPolicy) -> None:
        self.policy = policy

    def add_sample(self, store: HostStore, record: dict[str, Any]) -> tuple[list[HostSummary], bool]:
        """Fold one HostSampled record; return (summaries of windows it closed, was_late).

        A summary's ``src``/``nsrc`` are left at one partition: the caller knows where it read the record.
        """
        p = record["payload"]
        host = record["host_id"]
        step = job_step_time(p.get("step_time_ms"))
        if p.get("job_id") is None or step is None:
            return [], False  # no job on the host: nothing to compare
        state = store.get(host) or _NO_WINDOWS
        start, end = window_bounds(record["ts"], p["interval_s"], self.policy.window)
        closed = state.closed
        if closed is not None and end <= closed:
            return [], True
        windows = dict(state.w)
        key = str(start)
        acc = windows.get(key)
        # the job is the window's last one (a host changing jobs mid-window is compared with the new one)
        if acc is None:
            windows[key] = Window(step, p["bus_bw_gbps"], 1, end, p["job_id"])
        else:
            windows[key] = Window(acc.step_ms + step, acc.bus_bw + p["bus_bw_gbps"], acc.n + 1, end, p["job_id"])
        wm = record["ts"] if state.wm is None else max(state.wm, record["ts"])
        summaries = []
        for key in sorted(windows, key=int):
            w = windows[key]
            if w.end + self.policy.host_grace <= wm and w.end <= start:
                del windows[key]
                closed = w.end if closed is None else max(closed, w.end)
                summaries.append(
                    HostSummary(
                        host_id=host,
                        cluster=record["cluster"],
                        window_start=int(key),
                        window_end=w.end,
                        step_ms=w.step_ms / w.n,
                        bus_bw=w.bus_bw / w.n,
                        n=w.n,
                        wm=wm,
                        job=w.job,
                    )
                )
        store[host] = HostWindows(wm, closed, windows)
        return summaries, False


class ClusterStage:
    """Peer statistics per cluster per window, closed by the cluster's event-time watermark.

    Every source partition of the samples topic reports its newest event time (with its
    summaries and as watermark messages); the cluster's watermark is the minimum over all
    partitions, so a partition consumed ahead of the others (fast-forward) cannot close a
    window its peers still feed. Only a partition its consumer declared idle (an ``idle``
    message: caught up, nothing new, see ``streams.samples``) stops holding the watermark
    back, until it speaks again; a partition merely unheard of is waited for. No wall clock
    is read here, so the same messages close the same windows, outage or not. A window closes
    once the watermark passes its end plus max(grace, one window): by then every host has
    sampled past the window.
    Input comes in bundles (one message per samples batch and cluster, in source order);
    summaries are staged per bundle and written as one key per window, so the table sees a
    few writes per bundle, not one per host. Store keys: ``C|meta`` (partition watermarks,
    closed-up-to, open windows), ``C|<window_start>|bundles`` (ids of the bundles holding
    summaries of that window), ``C|<window_start>|b|<id>`` (host -> [step, bw] of one bundle),
    ``C|hist`` (host -> last n verdicts, the newest window evaluated, the findings of the last
    bundles that raised any). A bundle written twice (a replay) has the same id, or
    holds the same summaries under another id: either way a host's summary counts once.

    Crash safety: closing a window reads its bundles, then writes ``C|hist`` (one key, so the
    verdicts, the window mark and the findings land together or not at all), and only then
    deletes the bundles; the meta follows. A window closed again on a replay (the meta had
    not landed) is not evaluated twice, and a replayed bundle that had closed windows returns
    the findings it raised then, with their ids, in case they were never sent.
    """

    def __init__(self, policy: SlowHostPolicy) -> None:
        self.policy = policy

    def add_summary(self, store: Store, summary: HostSummary) -> tuple[list[Finding], list[Verdict], bool]:
        """Store a host summary, close every window the watermark has passed; (findings, verdicts, late)."""
        findings, verdicts, late = self.add_bundle(
            store, summary.cluster, [summary], summary.host_id, replayable=False
        )
        return findings, verdicts, late > 0

    def add_watermark(
        self, store: Store, cluster: str, src: int, nsrc: int, wm: int, *, idle: bool = False
    ) -> tuple[list[Finding], list[Verdict]]:
        """A source partition's progress (sent even when it has no summary for this cluster), or its idleness."""
        item = (SourceIdle if idle else SourceProgress)(cluster, src, nsrc, wm)
        findings, verdicts, _ = self.add_bundle(store, cluster, [item], "", replayable=False)
        return findings, verdicts

    def add_bundle(
        self,
        store: Store,
        cluster: str,
        items: Sequence[ClusterItem],
        bundle_id: str,
        *,
        replayable: bool = True,
    ) -> tuple[list[Finding], list[Verdict], int]:
        """Summaries, watermarks and idle notices of one cluster, in order; (findings, verdicts, late summaries).

        ``bundle_id`` names the source message (the same on a replay); with ``replayable`` the
        findings a bundle raised are kept under it and returned again when it comes again.
        """
        meta = ClusterMeta.from_stored(store.get(f"{cluster}|meta")).thaw()
        staged: dict[int, dict[str, list[Any]]] = {}
        findings: list[Finding] = []
        if replayable:
            findings += [Finding.from_record(r) for r in _emitted(store, cluster, bundle_id)]
        verdicts: list[Verdict] = []
        late = 0
        for item in items:
            if not isinstance(item, HostSummary):
                self._note(meta, item.src, item.nsrc, item.wm, idle=isinstance(item, SourceIdle))
            elif meta.closed is not None and item.window_end <= meta.closed:
                late += 1
                continue
            else:
                staged.setdefault(item.window_start, {})[item.host_id] = [item.step_ms, item.bus_bw, item.job]
                meta.open[str(item.window_start)] = item.window_end
                self._note(meta, item.src, item.nsrc, item.wm)
            f, v = self._advance(store, cluster, meta, staged, bundle_id if replayable else None)
            findings += f
            verdicts += v
        for start, members in staged.items():
            store[f"{cluster}|{start}|b|{bundle_id}"] = members
            index = f"{cluster}|{start}|bundles"
            ids = store.get(index) or []
            if bundle_id not in ids:
                store[index] = [*ids, bundle_id]
        store[f"{cluster}|meta"] = meta.freeze().stored()
        return findings, verdicts, late

    @staticmethod
    def _note(meta: Marks, src: int, nsrc: int, wm: int, *, idle: bool = False) -> None:
        """A partition's event time; an ``idle`` notice excludes it from the watermark until it speaks again.

        When every partition was idle, the first one to speak again brings all the others back
        into the watermark: a stall of the whole source (producers cut off from the broker) ends
        with a burst on every partition, and the first partition's backlog must not close windows
        the others' backlogs still hold summaries for. A partition that really has nothing is
        declared idle again by its consumer within one idle timeout (``IdleSources``).
        """
        key = str(src)
        old = meta.pwm.get(key)
        meta.pwm[key] = max(old, wm) if old is not None else wm
        meta.nsrc = max(meta.nsrc, nsrc)
        was_idle = set(meta.idle)
        if not idle and key in was_idle and len(was_idle) >= meta.nsrc:
            meta.idle = []
            return
        idle_now = was_idle - {key} | ({key} if idle else set())
        meta.idle = sorted(idle_now)

    @staticmethod
    def watermark(meta: ClusterMeta | Marks) -> int | None:
        """Min over the partitions not declared idle; None while some partition has not reported at all."""
        if meta.nsrc > len(meta.pwm):
            return None  # its owner will send data or declare it idle: wait
        idle = set(meta.idle)
        active = [wm for src, wm in meta.pwm.items() if src not in idle]
        if not active:
            return max(meta.pwm.values(), default=None)  # everything read: all windows it passed close
        return min(active)

    def _advance(
        self,
        store: Store,
        cluster: str,
        meta: Marks,
        staged: dict[int, dict[str, list[Any]]],
        bundle_id: str | None,
    ) -> tuple[list[Finding], list[Verdict]]:
        wm = self.watermark(meta)
        findings: list[Finding] = []
        verdicts: list[Verdict] = []
        for key in sorted(meta.open, key=int):
            w_end = meta.open[key]
            if wm is None or w_end + max(self.policy.cluster_grace, w_end - int(key)) > wm:
                break
            del meta.open[key]
            meta.closed = w_end if meta.closed is None else max(meta.closed, w_end)
            members = self._members(store, cluster, int(key), staged.pop(int(key), {}))
            f, v = self._close(store, cluster, members, int(key), w_end, bundle_id)
            self._drop_window(store, cluster, int(key))
            findings.extend(f)
            verdicts.extend(v)
        return findings, verdicts

    @staticmethod
    def _members(store: Store, cluster: str, start: int, staged: dict[str, list[Any]]) -> dict[str, Member]:
        """Every host summary of a closing window: its stored bundles plus this bundle's."""
        members: dict[str, Member] = {}
        for bundle_id in store.get(f"{cluster}|{start}|bundles") or []:
            for host, value in (store.get(f"{cluster}|{start}|b|{bundle_id}") or {}).items():
                members[host] = _member(value)
        for host, value in staged.items():
            members[host] = _member(value)
        return members

    @staticmethod
    def _drop_window(store: Store, cluster: str, start: int) -> None:
        """Delete a closed window's bundles (after its verdicts are stored; a repeat finds nothing)."""
        index = f"{cluster}|{start}|bundles"
        for bundle_id in store.get(index) or []:
            key = f"{cluster}|{start}|b|{bundle_id}"
            if store.get(key) is not None:
                del store[key]
        if store.get(index) is not None:
            del store[index]

    def _close(
        self,
        store: Store,
        cluster: str,
        members: dict[str, Member],
        start: int,
        end: int,
        bundle_id: str | None,
    ) -> tuple[list[Finding], list[Verdict]]:
        state = ClusterHistory.from_stored(store.get(f"{cluster}|hist"))
        if state.evaluated is not None and start <= state.evaluated:
            return [], []  # evaluated before a crash; its findings come back with the bundle that closed it
        verdicts = evaluate_window(members, start, end, self.policy)
        if not verdicts:
            return [], []
        findings = []
        histories = dict(state.hosts)
        for verdict in verdicts:
            history, finding = update_history(histories.get(verdict.host_id), verdict, cluster, self.policy)
            histories[verdict.host_id] = history
            if finding is not None:
                findings.append(finding)
        emitted = state.emitted
        if findings and bundle_id is not None:
            records = tuple(f.to_record() for f in findings)
            emitted = (*emitted, (bundle_id, start, records))[-EMITTED_MEMORY:]
        new = ClusterHistory(histories, start, emitted)
        store[f"{cluster}|hist"] = new.stored()
        return findings, verdicts


def _member(value: list[Any]) -> Member:
    """A stored summary: [step, bus_bw, job]; bundles stored before the job was kept have no job."""
    return (value[0], value[1], value[2] if len(value) > 2 else None)


EMITTED_MEMORY = 16  # bundles whose findings are kept to be returned again on a replay


def _emitted(store: Store, cluster: str, bundle_id: str) -> list[dict[str, Any]]:
    """Finding records a bundle raised when it was processed before (a replay after a crash)."""
    emitted = emitted_of(store.get(f"{cluster}|hist"))
    return [r for entry in emitted if entry[0] == bundle_id for r in entry[2]]


def update_history(
    history: HostHistory | None, verdict: Verdict, cluster: str, policy: SlowHostPolicy
) -> tuple[HostHistory, Finding | None]:
    """Append a verdict to the host's last n windows; fire once per episode when k of them are slow.

    "The last n" are windows of event time, not the last n verdicts: a host away for a while (drained,
    repaired, powered off) comes back with the verdicts from before its absence forgotten, and an
    episode flagged before it is over, so a host still slow after its repair is reported again.
    """
    # the policy's window, or the sample interval when samples are longer (window_bounds)
    length = verdict.window_end - verdict.window_start
    since = verdict.window_start - (policy.n - 1) * length
    history = history or HostHistory()
    earlier = [h for h in history.hist if since <= h[0] < verdict.window_start]
    hist = (*earlier, (verdict.window_start, int(verdict.slow), verdict.z_step, verdict.z_bus_bw))
    hist = hist[-policy.n :]
    flagged = history.flagged and bool(earlier)
    slow_count = sum(h[1] for h in hist)
    finding = None
    if flagged and slow_count == 0:
        flagged = False  # the episode is over: a later slowdown is a new finding
    elif not flagged and verdict.slow and slow_count >= policy.k:
        flagged = True
        first_slow = next(h[0] for h in hist if h[1])
        score = max(verdict.z_step, -verdict.z_bus_bw)
        finding = Finding(
            finding_id=finding_id("slow_host", "slow_host", verdict.host_id, first_slow),
            detector="slow_host",
            rule="slow_host",
            scope="host",
            scope_key=verdict.host_id,
            host_id=verdict.host_id,
            cluster=cluster,
            ts=verdict.window_end,
            error_class="slow_host",
            count=slow_count,
            window_start=first_slow,
            window_end=verdict.window_end,
            recommended_action=policy.action,
            severity="warning",
            score=round(score, 3),
            evidence={
                "z_step": f"{verdict.z_step:.3f}",
                "z_bus_bw": f"{verdict.z_bus_bw:.3f}",
                "step_ms": f"{verdict.step_ms:.3f}",
                "peer_median_step_ms": f"{verdict.median_step_ms:.3f}",
                "slow_windows": f"{slow_count}/{len(hist)}",
            },
        )
    return HostHistory(hist, flagged), finding
