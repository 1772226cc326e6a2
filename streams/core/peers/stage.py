"""Slow-host detector: per-host window summaries, then peer comparison per cluster per window.

Two stages, both pure functions over a dict-like store (a Faust table in the worker, a plain
dict in tests): ``HostStage`` (``streams.core.samples.windows``, keyed by host) folds samples into
event-time windows and emits one summary (``HostSummary``, ``streams.core.peers.messages``) per closed
window; ``ClusterStage`` (here, keyed by cluster) collects the summaries and, when a window closes
by the cluster's watermark, scores every host against its peers with a robust z-score; a host
whose slow windows build enough evidence (a CUSUM) becomes a finding (``streams.core.peers.scores``). What the stages
store is typed too (``streams.core.peers.state``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streams.core.findings import Finding
from streams.core.peers.messages import ClusterItem, HostSummary, SourceIdle, SourceProgress
from streams.core.peers.scores import Member, Verdict, evaluate_window, update_history
from streams.core.peers.state import ClusterHistory, ClusterMeta, Marks, emitted_of
from streams.core.policy import SlowHostPolicy
from streams.core.state import KeyedState, keeps_typed

Store = KeyedState  # the cluster stage's table: JSON-able values
NEVER = 2**63  # an event time no watermark reaches


class ClusterStage:
    """Peer statistics per cluster per window, closed by the cluster's event-time watermark.

    Every source partition of the samples topic reports its newest event time (with its
    summaries and as watermark messages); the cluster's watermark is the minimum over all
    partitions, so a partition consumed ahead of the others (fast-forward) cannot close a
    window its peers still feed. Only a partition its consumer declared idle (an ``idle``
    message: caught up, nothing new, see ``streams.sample_partitions``) stops holding the watermark
    back, until it speaks again; a partition merely unheard of is waited for. No wall clock
    is read here, so the same messages close the same windows, outage or not. A window closes
    once the watermark passes its end plus max(grace, one window): by then every host has
    sampled past the window.
    Input comes in bundles (one message per samples batch and cluster, in source order);
    summaries are staged per bundle and written as one key per window, so the table sees a
    few writes per bundle, not one per host. Store keys: ``C|meta`` (partition watermarks,
    closed-up-to, open windows), ``C|<window_start>|bundles`` (ids of the bundles holding
    summaries of that window), ``C|<window_start>|b|<id>`` (host -> [step, bw] of one bundle),
    ``C|hist`` (host -> last n verdicts and evidence, the newest window evaluated, the findings of the last
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
        # per cluster, the last ``C|hist`` value written and its typed form: while the store still holds that
        # very object (values are replaced, never changed in place), the next window skips converting it back
        self._hist: dict[str, tuple[Any, ClusterHistory]] = {}

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
        advanced: int | None = None  # the watermark windows were last closed at in this bundle
        grace = self.policy.cluster_grace
        pwm = meta.pwm
        wm = self.watermark(meta)
        for item in items:
            opened = NEVER  # when the window this item opened closes
            if not isinstance(item, HostSummary):
                self._note(meta, item.src, item.nsrc, item.wm, idle=isinstance(item, SourceIdle))
                wm = self.watermark(meta)
            else:
                start, end = item.window_start, item.window_end
                opened = end + max(grace, end - start)  # closes_at, inline: once per summary
                # Too late to count: its window is closed, or its host summarised it only after the time that
                # closes it. The second test reads the summary's own event time (the host sample that closed its
                # host window), not how far the other partitions had been read: a host back from a gap summarises
                # the window it left long after its peers' samples closed it, and whether the cluster stage had
                # closed it yet depends on how the partitions' records interleaved. Records of one partition come
                # in event-time order, so a summary not late by its own time arrives before its window closes.
                if (meta.closed is not None and end <= meta.closed) or item.wm >= opened:
                    late += 1
                    continue
                staged.setdefault(start, {})[item.host_id] = [
                    item.step_ms,
                    item.bus_bw,
                    item.job,
                    item.degraded,
                ]
                meta.open[str(start)] = end
                seen = pwm.get(str(item.src))
                if seen is None or item.wm > seen or item.nsrc > meta.nsrc or meta.idle:
                    self._note(meta, item.src, item.nsrc, item.wm)
                    wm = self.watermark(meta)
                # else: nothing ``_note`` reads changes, nor the watermark (most summaries of a bundle)
            if wm is None or (wm == advanced and opened > wm):
                continue  # the watermark has not moved and no window it closes was opened: nothing closes
            advanced = wm
            f, v = self._advance(store, cluster, meta, staged, bundle_id if replayable else None)
            findings += f
            verdicts += v
        for start, members in staged.items():
            store[f"{cluster}|{start}|b|{bundle_id}"] = members
            index = f"{cluster}|{start}|bundles"
            ids = store.get(index) or []
            if bundle_id not in ids:
                store[index] = [*ids, bundle_id]
        frozen = meta.freeze()
        store[f"{cluster}|meta"] = frozen if keeps_typed(store) else frozen.stored()
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
        if nsrc > meta.nsrc:
            meta.nsrc = nsrc
        if not idle and key not in meta.idle:
            return  # the common case: a partition that speaks and was not idle leaves the idle set as it is
        was_idle = set(meta.idle)
        if not idle and key in was_idle and len(was_idle) >= meta.nsrc:
            meta.idle = []
            return
        idle_now = was_idle - {key} | ({key} if idle else set())
        meta.idle = sorted(idle_now)

    def closes_at(self, start: int, end: int) -> int:
        """The watermark that closes a window: its end plus max(grace, one window)."""
        return end + max(self.policy.cluster_grace, end - start)

    @staticmethod
    def watermark(meta: ClusterMeta | Marks) -> int | None:
        """Min over the partitions not declared idle; None while some partition has not reported at all."""
        if meta.nsrc > len(meta.pwm):
            return None  # its owner will send data or declare it idle: wait
        if not meta.idle and meta.pwm:
            return min(meta.pwm.values())
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
            if wm is None or self.closes_at(int(key), w_end) > wm:
                break
            del meta.open[key]
            meta.closed = w_end if meta.closed is None else max(meta.closed, w_end)
            members, degraded = self._members(store, cluster, int(key), staged.pop(int(key), {}))
            f, v = self._close(store, cluster, members, degraded, int(key), w_end, bundle_id)
            self._drop_window(store, cluster, int(key))
            findings.extend(f)
            verdicts.extend(v)
        return findings, verdicts

    @staticmethod
    def _members(
        store: Store, cluster: str, start: int, staged: dict[str, list[Any]]
    ) -> tuple[dict[str, Member], dict[str, float]]:
        """Every host summary of a closing window (its stored bundles plus this bundle's), and each
        host's share of samples with degraded job-independent telemetry."""
        values: dict[str, list[Any]] = {}
        for bundle_id in store.get(f"{cluster}|{start}|bundles") or []:
            values.update(store.get(f"{cluster}|{start}|b|{bundle_id}") or {})
        values.update(staged)
        members = {host: _member(value) for host, value in values.items()}
        return members, {host: float(value[3]) for host, value in values.items() if len(value) > 3}

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
        degraded: dict[str, float],
        start: int,
        end: int,
        bundle_id: str | None,
    ) -> tuple[list[Finding], list[Verdict]]:
        raw = store.get(f"{cluster}|hist")
        known = self._hist.get(cluster)
        state = known[1] if known is not None and known[0] is raw else ClusterHistory.from_stored(raw)
        if state.evaluated is not None and start <= state.evaluated:
            return [], []  # evaluated before a crash; its findings come back with the bundle that closed it
        verdicts = evaluate_window(members, start, end, self.policy, degraded)
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
        if keeps_typed(store):  # no serializer in between: the typed value is what a reader gets
            store[f"{cluster}|hist"] = new
            return findings, verdicts
        stored = new.stored()
        store[f"{cluster}|hist"] = stored
        self._hist[cluster] = (stored, new)
        return findings, verdicts


def _member(value: list[Any]) -> Member:
    """A stored summary: [step, bus_bw, job, degraded]; older bundles have no job or no degraded share."""
    return (value[0], value[1], value[2] if len(value) > 2 else None)


EMITTED_MEMORY = 16  # bundles whose findings are kept to be returned again on a replay


def _emitted(store: Store, cluster: str, bundle_id: str) -> list[dict[str, Any]]:
    """Finding records a bundle raised when it was processed before (a replay after a crash)."""
    emitted = emitted_of(store.get(f"{cluster}|hist"))
    return [r for entry in emitted if entry[0] == bundle_id for r in entry[2]]
