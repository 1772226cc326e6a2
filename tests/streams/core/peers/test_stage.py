"""Slow-host detector: host windows, robust peer statistics per cluster window, k of n."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from streams.core.findings import Finding
from streams.core.peers.messages import HostSummary
from streams.core.peers.scores import Verdict, evaluate_window, robust_z, update_history
from streams.core.peers.stage import ClusterStage
from streams.core.peers.state import ClusterMeta
from streams.core.policy import SlowHostPolicy
from streams.core.samples.windows import HostStage, window_bounds
from streams.testing import START_TS
from tests.streams import factories as f

MIN = 60_000


def test_robust_z_ignores_the_outlier() -> None:
    med, scale = robust_z([100.0, 101.0, 99.0, 100.0, 160.0], 0.0)
    assert med == 100.0 and scale == pytest.approx(1.4826)
    _, floored = robust_z([100.0] * 5, 0.002)
    assert floored == pytest.approx(0.2)  # identical peers: MAD floor, not a division by zero


def test_window_bounds_coarse_samples_cover_one_window() -> None:
    assert window_bounds(START_TS + 7 * MIN, 60, 5 * MIN) == (START_TS + 5 * MIN, START_TS + 10 * MIN)
    start, end = window_bounds(START_TS + 90 * MIN, 3600, 5 * MIN)  # hourly samples, 5-min windows
    assert end - start == 3_600_000 and start <= START_TS + 90 * MIN < end


def feed(
    hosts: int,
    minutes: int,
    *,
    slow: dict[int, float] | None = None,
    slow_from: int = 0,
    pattern: dict[int, list[bool]] | None = None,
    interval_s: int = 60,
    policy: SlowHostPolicy | None = None,
    seed: int = 3,
) -> tuple[list[Finding], list[Any]]:
    """Samples of one cluster through both stages (one source partition per host % 3)."""
    policy = policy or SlowHostPolicy()
    host_stage, cluster_stage = HostStage(policy), ClusterStage(policy)
    host_store: dict[str, Any] = {}
    cluster_store: dict[str, Any] = {}
    rng = random.Random(seed)
    findings: list[Finding] = []
    verdicts: list[Any] = []
    for step in range(0, minutes * 60, interval_s):
        ts = START_TS + step * 1000
        window = (ts - START_TS) // max(policy.window, interval_s * 1000)
        for h in range(hosts):
            factor = 1.0
            if slow and h in slow and ts >= START_TS + slow_from * MIN:
                on = pattern[h][window % len(pattern[h])] if pattern and h in pattern else True
                factor = slow[h] if on else 1.0
            record = f.sample(
                1000.0 * factor * (1 + rng.gauss(0, 0.01)),
                380.0 * (1 + rng.gauss(0, 0.01)),
                interval_s=interval_s,
                host=f"h{h:03d}",
                ts=ts,
            )
            summaries, _ = host_stage.add_sample(host_store, record)
            for summary in summaries:
                summary = msgspec.structs.replace(summary, src=h % 3, nsrc=3)
                fs, vs, _ = cluster_stage.add_summary(cluster_store, summary)
                findings += fs
                verdicts += vs
    return findings, verdicts


def test_consistently_slow_host_found_after_k_windows_with_its_z() -> None:
    findings, verdicts = feed(24, 80, slow={7: 1.08}, slow_from=20)
    assert [x.host_id for x in findings] == ["h007"]
    fnd = findings[0]
    assert fnd.detector == "slow_host" and fnd.scope == "host" and fnd.scope_key == "h007"
    assert (
        fnd.score is not None
        and fnd.score > 3.5
        and float(fnd.evidence["z_step"]) == pytest.approx(fnd.score, abs=1e-3)
    )
    assert fnd.window_start == START_TS + 20 * MIN  # the first slow window
    assert fnd.ts == START_TS + 30 * MIN  # end of the 2nd slow window (2 x 8.01 nats reach 15.5)
    assert fnd.evidence["slow_windows"] == "2/2" and float(fnd.evidence["evidence_nats"]) >= 15.5
    assert not any(v.slow for v in verdicts if v.host_id != "h007")


def test_one_finding_per_episode() -> None:
    findings, _ = feed(16, 120, slow={2: 1.2}, slow_from=0)
    assert len(findings) == 1


def test_intermittent_slow_windows_far_apart_accumulate_evidence() -> None:
    # slow in 1 of every 4 windows: k = 2 of n = 4 never reached, but the evidence grows 8.01 - 3 x 0.36
    # nats every 4 windows (slow in 25 %, above the 4.3 % break-even) and reaches 15.5 at the 3rd slow window
    findings, _ = feed(16, 120, slow={4: 1.3}, pattern={4: [True, False, False, False]})
    assert [(x.host_id, x.evidence["slow_windows"]) for x in findings] == [("h004", "3/9")]


def test_one_slow_window_in_fifty_is_not_a_finding() -> None:
    # under the break-even share (4.3 %) the evidence decays back to zero between slow windows
    findings, _ = feed(16, 600, slow={4: 1.3}, pattern={4: [True] + [False] * 49})
    assert findings == []


def test_too_few_peers_no_verdict() -> None:
    findings, verdicts = feed(5, 60, slow={1: 1.5})
    assert findings == [] and verdicts == []


def test_hourly_samples_with_five_minute_window() -> None:
    findings, verdicts = feed(12, 8 * 60, slow={3: 1.1}, slow_from=60, interval_s=3600)
    assert [x.host_id for x in findings] == ["h003"]
    assert {v.window_end - v.window_start for v in verdicts} == {3_600_000}


def test_bus_bandwidth_drop_alone_is_slow() -> None:
    policy = SlowHostPolicy()
    stage = ClusterStage(policy)
    store: dict[str, Any] = {}
    found = []
    for w in range(6):
        start = START_TS + w * 5 * MIN
        for h in range(10):
            bw = 300.0 if h == 9 else 380.0 + h * 0.1
            s = HostSummary(
                host_id=f"h{h}",
                cluster="c0",
                window_start=start,
                window_end=start + 5 * MIN,
                step_ms=1000.0 + h * 0.1,
                bus_bw=bw,
                n=5,
                wm=start + 5 * MIN,
                src=0,
                nsrc=1,
            )
            found += stage.add_summary(store, s)[0]
    assert [x.host_id for x in found] == ["h9"] and float(found[0].evidence["z_bus_bw"]) < -3.5


def test_an_outlier_by_z_but_within_min_slowdown_is_not_slow() -> None:
    """A healthy host in the tail of the fleet's persistent offsets: +1 % is 4 robust sd here, but not slow."""
    peers = {f"h{i}": (1000.0 + (i - 5) * 0.3, 380.0, None) for i in range(11)}
    peers["tail"] = (1010.0, 380.0, None)  # +1.0 % over the median
    peers["slow"] = (1030.0, 380.0, None)  # +3.0 %
    policy = SlowHostPolicy()
    verdicts = {v.host_id: v for v in evaluate_window(peers, START_TS, START_TS + 5 * MIN, policy)}
    assert verdicts["tail"].z_step > policy.z_step and not verdicts["tail"].slow
    assert verdicts["slow"].slow
    lenient = {
        v.host_id: v for v in evaluate_window(peers, 0, 1, policy.model_copy(update={"min_slowdown": 0.0}))
    }
    assert lenient["tail"].slow


def test_min_slowdown_applies_to_bus_bandwidth_too() -> None:
    peers = {f"h{i}": (1000.0, 380.0 + (i - 5) * 0.1, None) for i in range(11)}
    peers["tail"] = (1000.0, 376.5, None)  # -0.9 %
    peers["slow"] = (1000.0, 368.0, None)  # -3.2 %
    verdicts = {v.host_id: v for v in evaluate_window(peers, 0, 1, SlowHostPolicy())}
    assert verdicts["tail"].z_bus_bw < -3.5 and not verdicts["tail"].slow
    assert verdicts["slow"].slow


def watermark(store: dict[str, Any]) -> int | None:
    """The cluster's watermark, as its stored meta says."""
    return ClusterStage.watermark(ClusterMeta.from_stored(store["c0|meta"]))


def test_watermark_is_the_slowest_partition() -> None:
    stage = ClusterStage(SlowHostPolicy())
    store: dict[str, Any] = {}
    base = {"cluster": "c0", "step_ms": 1.0, "bus_bw": 1.0, "n": 1, "nsrc": 2}
    stage.add_summary(
        store, HostSummary(**base, host_id="a", window_start=0, window_end=5 * MIN, wm=6 * MIN, src=0)
    )
    stage.add_watermark(store, "c0", src=0, nsrc=2, wm=30 * MIN)
    assert store["c0|meta"]["closed"] is None  # partition 1 has not reported: nothing closes
    stage.add_watermark(store, "c0", src=1, nsrc=2, wm=6 * MIN)
    assert store["c0|meta"]["closed"] is None  # partition 1 is still inside the window's grace
    _, _, late = stage.add_summary(
        store, HostSummary(**base, host_id="b", window_start=0, window_end=5 * MIN, wm=8 * MIN, src=1)
    )
    assert not late
    stage.add_watermark(store, "c0", src=1, nsrc=2, wm=10 * MIN)
    assert store["c0|meta"]["closed"] == 5 * MIN  # both partitions a window past the end
    _, _, late = stage.add_summary(
        store, HostSummary(**base, host_id="c", window_start=0, window_end=5 * MIN, wm=31 * MIN, src=1)
    )
    assert late


def test_a_partition_declared_idle_stops_holding_the_watermark_until_it_speaks() -> None:
    stage = ClusterStage(SlowHostPolicy())
    store: dict[str, Any] = {}
    base = {"cluster": "c0", "step_ms": 1.0, "bus_bw": 1.0, "n": 1, "nsrc": 2, "src": 0}
    stage.add_summary(store, HostSummary(**base, host_id="a", window_start=0, window_end=5 * MIN, wm=6 * MIN))
    for minute in range(31, 200):  # partition 0 goes on; 1 is silent, but nobody said it is idle
        stage.add_watermark(store, "c0", src=0, nsrc=2, wm=minute * MIN)
    assert store["c0|meta"]["closed"] is None
    stage.add_watermark(store, "c0", src=1, nsrc=2, wm=-1, idle=True)  # its consumer: caught up, nothing new
    assert store["c0|meta"]["closed"] == 5 * MIN
    stage.add_watermark(store, "c0", src=1, nsrc=2, wm=201 * MIN)  # partition 1 has data again
    stage.add_summary(
        store, HostSummary(**base, host_id="a", window_start=220 * MIN, window_end=225 * MIN, wm=226 * MIN)
    )
    assert watermark(store) == 201 * MIN  # held back by partition 1 once more
    assert "13200000" in store["c0|meta"]["open"]


def test_after_every_partition_went_idle_the_first_back_does_not_close_the_others_windows() -> None:
    """Producers cut off for longer than the idle timeout: all partitions idle, then a burst on each.

    The first partition's backlog reaches the cluster stage before the others'; it must not close
    the windows their backlogs hold summaries for (that dropped a slow host's verdicts as late).
    """
    stage = ClusterStage(SlowHostPolicy())
    store: dict[str, Any] = {}
    base = {"cluster": "c0", "step_ms": 1.0, "bus_bw": 1.0, "n": 1, "nsrc": 2}
    for src in (0, 1):
        stage.add_watermark(store, "c0", src=src, nsrc=2, wm=10 * MIN)
    for src in (0, 1):  # the stall: both consumers caught up for the whole idle timeout
        stage.add_watermark(store, "c0", src=src, nsrc=2, wm=10 * MIN, idle=True)
    backlog = [(0, 15 * MIN), (15 * MIN, 30 * MIN), (30 * MIN, 45 * MIN)]
    for start, end in backlog:  # partition 0's burst comes first, far past the stall
        stage.add_summary(
            store, HostSummary(**base, src=0, host_id="a", window_start=start, window_end=end, wm=end)
        )
    assert watermark(store) == 10 * MIN  # partition 1 holds it again
    late = [
        stage.add_summary(
            store, HostSummary(**base, src=1, host_id="b", window_start=start, window_end=end, wm=end)
        )[2]
        for start, end in backlog
    ]
    assert late == [False, False, False]
    assert store["c0|meta"]["closed"] == 30 * MIN  # both partitions a window past its end


def test_a_partition_idle_alone_stays_out_of_the_watermark_when_another_wakes() -> None:
    """Only a stall of every partition brings the idle ones back; one empty partition stays excluded."""
    stage = ClusterStage(SlowHostPolicy())
    store: dict[str, Any] = {}
    for src in (0, 1, 2):
        stage.add_watermark(store, "c0", src=src, nsrc=3, wm=10 * MIN)
    stage.add_watermark(store, "c0", src=2, nsrc=3, wm=10 * MIN, idle=True)  # empty for good
    stage.add_watermark(store, "c0", src=0, nsrc=3, wm=50 * MIN)
    stage.add_watermark(store, "c0", src=1, nsrc=3, wm=40 * MIN)
    assert store["c0|meta"]["idle"] == ["2"]
    assert watermark(store) == 40 * MIN
    for src in (0, 1):  # then everything stalls, and partition 0 wakes first
        stage.add_watermark(store, "c0", src=src, nsrc=3, wm=50 * MIN, idle=True)
    assert watermark(store) == 50 * MIN  # all idle: every window it passed closes
    stage.add_watermark(store, "c0", src=0, nsrc=3, wm=90 * MIN)
    assert store["c0|meta"]["idle"] == []  # 1 and 2 are waited for until they speak or are idle again
    assert watermark(store) == 10 * MIN  # the empty one too, until it says so again
    stage.add_watermark(store, "c0", src=2, nsrc=3, wm=10 * MIN, idle=True)
    stage.add_watermark(store, "c0", src=1, nsrc=3, wm=95 * MIN)
    assert watermark(store) == 90 * MIN


def test_after_an_outage_the_first_partition_back_does_not_close_windows_alone() -> None:
    """Silence is never idleness: however long the worker or the broker was down, the others are waited for."""
    stage = ClusterStage(SlowHostPolicy())
    store: dict[str, Any] = {}
    base = {"cluster": "c0", "step_ms": 1.0, "bus_bw": 1.0, "n": 1, "nsrc": 2}
    for src in (0, 1):
        stage.add_summary(
            store,
            HostSummary(**base, src=src, host_id=f"h{src}", window_start=0, window_end=5 * MIN, wm=MIN),
        )
    stage.add_watermark(store, "c0", src=0, nsrc=2, wm=60 * MIN)  # partition 0's backlog comes first
    assert store["c0|meta"]["closed"] is None
    _, _, late = stage.add_summary(
        store, HostSummary(**base, src=1, host_id="h1b", window_start=0, window_end=5 * MIN, wm=4 * MIN)
    )
    assert not late
    stage.add_watermark(store, "c0", src=1, nsrc=2, wm=60 * MIN)
    assert store["c0|meta"]["closed"] is not None


def test_host_stage_drops_late_samples_and_skips_idle_hosts() -> None:
    stage = HostStage(SlowHostPolicy())
    store: dict[str, Any] = {}
    stage.add_sample(store, f.sample(ts=START_TS))
    summaries, late = stage.add_sample(store, f.sample(ts=START_TS + 6 * MIN))
    assert len(summaries) == 1 and summaries[0].n == 1 and not late
    assert stage.add_sample(store, f.sample(ts=START_TS + MIN)) == ([], True)
    assert stage.add_sample(store, f.sample(job=None, ts=START_TS + 7 * MIN, host="idle")) == ([], False)
    # v2: no step time is not comparable either, whatever the job field says; v1's 0 stays skipped too
    for step in (None, 0.0):
        assert stage.add_sample(store, f.sample(step, ts=START_TS + 7 * MIN, host="nostep")) == ([], False)
    assert "nostep" not in store


def _summaries(hosts: int, minutes: int, slow: dict[int, float]) -> list[HostSummary]:
    """Host summaries in arrival order, as the host-window stage sends them (3 source partitions)."""
    policy = SlowHostPolicy()
    host_stage, host_store = HostStage(policy), {}  # type: ignore[var-annotated]
    rng = random.Random(11)
    out = []
    for step in range(0, minutes * 60, 60):
        ts = START_TS + step * 1000
        for h in range(hosts):
            record = f.sample(
                1000.0 * slow.get(h, 1.0) * (1 + rng.gauss(0, 0.01)), 380.0, host=f"h{h:03d}", ts=ts
            )
            for summary in host_stage.add_sample(host_store, record)[0]:
                out.append(msgspec.structs.replace(summary, src=h % 3, nsrc=3))
    return out


def test_bundles_and_replayed_bundles_score_like_single_summaries() -> None:
    items = _summaries(12, 60, {5: 1.1})
    one_by_one = ClusterStage(SlowHostPolicy())
    store: dict[str, Any] = {}
    expected = []
    for item in items:
        expected += one_by_one.add_summary(store, item)[1]

    bundled = ClusterStage(SlowHostPolicy())
    store = {}
    got = []
    for i in range(0, len(items), 7):
        got += bundled.add_bundle(store, "c0", items[i : i + 7], f"0.{i}")[1]
        if i == 70:  # a crash before the commit: the same records come again, cut into other bundles
            for j in range(42, 77, 5):
                got += bundled.add_bundle(store, "c0", items[j : min(j + 5, 77)], f"0.r{j}")[1]
    assert expected and got == expected
    assert any(v.slow and v.host_id == "h005" for v in got)
    closed = store["c0|meta"]["closed"]
    assert not [
        k for k in store if "|b|" in k and int(k.split("|")[1]) < closed
    ]  # closed windows leave nothing


def test_a_bundle_replayed_under_its_own_id_changes_nothing() -> None:
    items = _summaries(8, 12, {})
    stage = ClusterStage(SlowHostPolicy())
    store: dict[str, Any] = {}
    stage.add_bundle(store, "c0", items[:8], "3.100")
    before = {k: v for k, v in store.items()}
    stage.add_bundle(store, "c0", items[:8], "3.100")
    assert store == before and store[f"c0|{START_TS}|bundles"] == ["3.100"]


class Crash(Exception):
    pass


class CrashingStore(dict[str, Any]):
    """A table that dies (like a SIGKILL) at its n-th write or delete; what came before it stays."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0
        self.crash_at: int | None = None

    def _count(self) -> None:
        self.writes += 1
        if self.crash_at is not None and self.writes >= self.crash_at:
            self.crash_at = None
            raise Crash

    def __setitem__(self, key: str, value: Any) -> None:
        self._count()
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self._count()
        super().__delitem__(key)


def test_a_crash_at_any_write_of_any_bundle_then_its_replay_sends_the_same_findings() -> None:
    """Findings returned before the crash plus after the replay are the uninterrupted run's, with the same ids."""
    items = _summaries(12, 60, {5: 1.1, 8: 1.08})
    bundles = [(f"0.{i}", items[i : i + 7]) for i in range(0, len(items), 7)]
    stage = ClusterStage(SlowHostPolicy())

    def run(crash_bundle: int | None = None, crash_write: int = 0) -> tuple[set[str], CrashingStore, bool]:
        store, sent, crashed = CrashingStore(), set(), False
        for n, (bundle_id, bundle) in enumerate(bundles):
            if n == crash_bundle:
                store.crash_at = store.writes + crash_write
                try:
                    sent |= {f.finding_id for f in stage.add_bundle(store, "c0", bundle, bundle_id)[0]}
                except Crash:
                    crashed = True  # not committed: Faust hands the same message over again
                store.crash_at = None
            sent |= {f.finding_id for f in stage.add_bundle(store, "c0", bundle, bundle_id)[0]}
        return sent, store, crashed

    reference, _, _ = run()
    assert len(reference) == 2
    crashes = 0
    for n in range(len(bundles)):
        for write in range(1, 40):
            sent, store, crashed = run(n, write)
            assert sent == reference, (n, write)
            hist = store["c0|hist"]["hosts"]
            assert all(
                len({h[0] for h in v["hist"]}) == len(v["hist"]) for v in hist.values()
            )  # no window twice
            crashes += crashed
            if not crashed:
                break
    assert crashes > 20  # the crash points really fell inside bundles that close windows


def _verdict(window: int, slow: bool, length: int = SlowHostPolicy().window) -> Verdict:
    start = START_TS + window * length
    return Verdict("h1", start, start + length, 9.0 if slow else 0.0, 0.0, slow, 1100.0, 1000.0)


def _history(verdicts: list[Verdict], policy: SlowHostPolicy) -> list[Finding]:
    history, found = None, []
    for v in verdicts:
        history, finding = update_history(history, v, "c0", policy)
        found += [finding] if finding else []
    return found


def test_k_of_n_counts_windows_of_event_time_not_verdicts_far_apart() -> None:
    policy = SlowHostPolicy()
    assert (policy.k, policy.n) == (2, 4)  # the policy these windows are drawn for
    assert policy.sequential.windows_to_flag() == 2
    assert len(_history([_verdict(0, True), _verdict(1, True)], policy)) == 1
    apart = [_verdict(0, True), _verdict(1, False), _verdict(2, False), _verdict(3, True)]
    assert _history(apart, policy) == []  # 8.01 - 2 x 0.36 + 8.01 < 15.5
    far = [_verdict(0, True), _verdict(30 * 288, True)]  # 30 days apart
    assert _history(far, policy) == []


def test_a_host_back_from_an_absence_and_still_slow_is_reported_again() -> None:
    policy = SlowHostPolicy()
    slow_before = [_verdict(w, True) for w in range(4)]
    after_repair = [_verdict(w, True) for w in range(600, 603)]  # two days later, still slow
    found = _history(slow_before + after_repair, policy)
    assert [x.window_start for x in found] == [slow_before[0].window_start, after_repair[0].window_start]


def test_sparse_samples_count_their_own_windows_as_the_last_n() -> None:
    policy = SlowHostPolicy()
    hourly = [_verdict(w, True, length=3_600_000) for w in range(2)]  # samples longer than the window
    assert len(_history(hourly, policy)) == 1


def test_a_job_running_at_its_own_pace_is_not_slow_but_a_slow_host_within_it_is() -> None:
    """Peers are the host's job: a second job on the cluster with a slower model flags nobody."""
    rng = random.Random(5)
    peers = {f"a{i:02d}": (1000.0 * (1 + rng.gauss(0, 0.003)), 380.0, "job-a") for i in range(28)}
    peers |= {f"b{i}": (1100.0 * (1 + rng.gauss(0, 0.003)), 380.0, "job-b") for i in range(5)}
    verdicts = {v.host_id: v for v in evaluate_window(peers, 0, 1, SlowHostPolicy())}
    assert not [h for h, v in verdicts.items() if v.slow]
    peers["b4"] = (1100.0 * 1.08, 380.0, "job-b")  # 8 % slower than its own job
    verdicts = {v.host_id: v for v in evaluate_window(peers, 0, 1, SlowHostPolicy())}
    assert [h for h, v in verdicts.items() if v.slow] == ["b4"]
    assert verdicts["b4"].median_step_ms == pytest.approx(1100.0, rel=0.01)  # its reference: job-b's median


def test_a_host_alone_in_its_job_is_judged_by_telemetry_and_a_pair_by_its_other_host() -> None:
    """Jobs run at their own paces: a host alone in its job (here 5 % off the cluster) has no peers, and
    without degraded telemetry it is not slow; the hosts of a pair are each compared with the other one
    (not with the pair's median)."""
    peers = {f"a{i:02d}": (1000.0 + (i % 5 - 2) * 0.5, 380.0, "job-a") for i in range(20)}
    peers["solo"] = (1050.0, 380.0, "job-solo")
    peers |= {f"p{i}": (700.0, 300.0, "job-pair") for i in range(2)}
    verdicts = {v.host_id: v for v in evaluate_window(peers, 0, 1, SlowHostPolicy())}
    assert set(verdicts) == {f"a{i:02d}" for i in range(20)} | {"p0", "p1", "solo"}
    assert not any(v.slow for v in verdicts.values())
    assert verdicts["solo"].reference == "telemetry" and verdicts["p0"].reference == "peers"
    degraded = evaluate_window(peers, 0, 1, SlowHostPolicy(), {"solo": 0.8, "a03": 1.0})
    assert [v.host_id for v in degraded if v.slow] == ["solo"]  # telemetry decides only without peers
    assert evaluate_window({**peers, "a00": (1100.0, 380.0, "job-a")}, 0, 1, SlowHostPolicy())[0].slow


def test_the_slow_host_of_a_pair_is_slow_and_its_partner_is_not() -> None:
    peers = {f"a{i:02d}": (1000.0 + (i % 5 - 2) * 0.5, 380.0, "job-a") for i in range(20)}
    peers |= {"p0": (700.0, 300.0, "job-pair"), "p1": (770.0, 300.0, "job-pair")}  # p1 10 % slower
    verdicts = {v.host_id: v for v in evaluate_window(peers, 0, 1, SlowHostPolicy())}
    assert [h for h, v in verdicts.items() if v.slow] == ["p1"]
    assert verdicts["p1"].median_step_ms == 700.0  # its reference: the other host of its job


def test_a_pair_of_slow_hosts_is_found_by_its_telemetry() -> None:
    """Both hosts of a pair 28 % slow: each against the other reads as healthy, so in a job of 2-3 hosts
    the job-independent telemetry counts too; in a big job it does not (peers decide)."""
    peers = {f"a{i:02d}": (1000.0 + (i % 5 - 2) * 0.5, 380.0, "job-a") for i in range(20)}
    peers |= {"p0": (896.0, 300.0, "job-pair"), "p1": (897.0, 300.0, "job-pair")}
    degraded = {"p0": 1.0, "p1": 0.6, "a03": 1.0}
    verdicts = {v.host_id: v for v in evaluate_window(peers, 0, 1, SlowHostPolicy(), degraded)}
    assert [h for h, v in verdicts.items() if v.slow] == ["p0", "p1"]
    assert verdicts["p0"].reference == "telemetry" and verdicts["p1"].degraded == 0.6
    few = {h: peers[h] for h in ("a00", "a01", "a02", "p0", "p1")}  # too few hosts for a peer test
    assert [v.host_id for v in evaluate_window(few, 0, 1, SlowHostPolicy(), degraded) if v.slow] == [
        "p0",
        "p1",
    ]


def test_a_host_alone_in_its_job_with_a_downtrained_pcie_link_is_found_with_its_evidence() -> None:
    """Both stages: solo-0 runs a job alone; its GPU 3's PCIe link trained at gen 4 x8 (max gen 5 x16)."""
    policy = SlowHostPolicy()
    host_stage, cluster_stage = HostStage(policy), ClusterStage(policy)
    host_store: dict[str, Any] = {}
    cluster_store: dict[str, Any] = {}
    jobs = {f"a{i:02d}": "job-a" for i in range(12)} | {"solo-0": "job-s0", "solo-1": "job-s1"}
    findings: list[Finding] = []
    for step in range(0, 40 * 60, 60):
        for host, job in jobs.items():
            record = f.sample(
                900.0 if host.startswith("solo") else 1000.0, job=job, host=host, ts=START_TS + step * 1000
            )
            if host == "solo-0":
                record["payload"]["gpus"][3] |= {"pcie_link_gen": 4, "pcie_link_width": 8}
            for summary in host_stage.add_sample(host_store, record)[0]:
                findings += cluster_stage.add_summary(
                    cluster_store, msgspec.structs.replace(summary, src=0, nsrc=1)
                )[0]
    assert [x.host_id for x in findings] == ["solo-0"]
    assert findings[0].evidence["reference"].startswith("telemetry")
    assert float(findings[0].evidence["degraded_samples"]) == 1.0


def test_a_persistent_ten_percent_host_in_a_two_host_job_is_found() -> None:
    """Both stages, a cluster of one 20-host job and three pairs at their own paces; p2-1 is 10 % slow."""
    policy = SlowHostPolicy()
    host_stage, cluster_stage = HostStage(policy), ClusterStage(policy)
    host_store: dict[str, Any] = {}
    cluster_store: dict[str, Any] = {}
    rng = random.Random(9)
    jobs = {f"a{i:02d}": ("job-a", 1.0) for i in range(20)}
    jobs |= {f"p{j}-{i}": (f"pair-{j}", pace) for j, pace in enumerate((0.6, 1.3, 1.8)) for i in range(2)}
    findings: list[Finding] = []
    for step in range(0, 60 * 60, 60):
        ts = START_TS + step * 1000
        for host, (job, pace) in jobs.items():
            factor = 1.10 if host == "p2-1" else 1.0
            record = f.sample(
                1000.0 * pace * factor * (1 + rng.gauss(0, 0.004)),
                380.0 * (1 + rng.gauss(0, 0.004)),
                job=job,
                host=host,
                ts=ts,
            )
            for summary in host_stage.add_sample(host_store, record)[0]:
                findings += cluster_stage.add_summary(
                    cluster_store, msgspec.structs.replace(summary, src=0, nsrc=1)
                )[0]
    assert [x.host_id for x in findings] == ["p2-1"]


def test_summaries_carry_the_job_to_the_cluster_stage() -> None:
    items = _summaries(12, 12, {})
    assert items and {i.job for i in items} == {"j1"}
