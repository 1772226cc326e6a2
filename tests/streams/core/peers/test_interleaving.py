"""The slow-host detector's findings depend on event time only, not on how the partitions' records interleave."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from streams.core.peers.messages import ClusterItem
from streams.core.peers.stage import ClusterStage
from streams.core.policy import Policy
from streams.core.samples.checkpoint import PartitionState
from streams.core.samples.folder import SampleFolder
from streams.testing import START_TS
from tests.streams import factories as f

MIN = 60_000
NSRC = 3
# jobs at their own paces, a pair; persistent and intermittent slow hosts (on in 30-minute episodes)
JOBS = {"big": (16, 1.0), "other": (8, 1.6), "pair": (2, 0.7)}
SLOW = {"big-3": (1.06, 1.0), "other-5": (1.04, 0.4), "pair-0": (1.10, 1.0)}


def _partitions(hours: int = 8, seed: int = 17) -> list[list[dict[str, Any]]]:
    """Each source partition's records in offset order (hosts spread over partitions by index)."""
    rng = random.Random(seed)
    episodes = random.Random(seed + 1)
    on = {h: [episodes.random() < duty for _ in range(hours * 2 + 1)] for h, (_, duty) in SLOW.items()}
    parts: list[list[dict[str, Any]]] = [[] for _ in range(NSRC)]
    hosts = [(f"{job}-{i}", job, pace) for job, (size, pace) in JOBS.items() for i in range(size)]
    for step in range(0, hours * 3600, 60):
        ts = START_TS + step * 1000
        for n, (host, job, pace) in enumerate(hosts):
            factor = SLOW[host][0] if host in SLOW and on[host][step // 1800] else 1.0
            parts[n % NSRC].append(
                f.sample(
                    1000.0 * pace * factor * (1 + rng.gauss(0, 0.004)),
                    380.0 * (1 + rng.gauss(0, 0.004)),
                    job=job,
                    host=host,
                    ts=ts,
                )
            )
    return parts


def _run(
    order: Iterator[tuple[int, int]], parts: list[list[dict[str, Any]]]
) -> list[tuple[str, str, int, int]]:
    """Feed the partitions in ``order`` (partition, how many of its next records): one bundle per fetch."""
    return _fold(order, parts)[0]


def _fold(
    order: Iterator[tuple[int, int]], parts: list[list[dict[str, Any]]]
) -> tuple[list[tuple[str, str, int, int]], list[tuple[str, int, bool]]]:
    """``_run``'s findings, and every verdict (host, window, slow) of the windows that closed."""
    folder = SampleFolder(Policy(), nsrc=NSRC, clusters=lambda: {"c0"})
    states = [PartitionState(partition=p) for p in range(NSRC)]
    cluster = ClusterStage(Policy().slow_host)
    store: dict[str, Any] = {}
    found = []
    judged: list[tuple[str, int, bool]] = []
    for p, size in order:
        state = states[p]
        batch = parts[p][state.next_offset : state.next_offset + size]
        if not batch:
            continue
        items: list[ClusterItem] = []
        for record in batch:
            items += folder.fold(state, record)[0]
        state.next_offset += len(batch)
        findings, verdicts, _ = cluster.add_bundle(store, "c0", items, f"{p}:{state.next_offset}")
        found += [(x.finding_id, x.host_id, x.ts, x.window_start) for x in findings]
        judged += [(v.host_id, v.window_start, v.slow) for v in verdicts]
    for p, state in enumerate(states):  # the end of the history: every partition caught up, then idle
        findings, verdicts, _ = cluster.add_bundle(store, "c0", folder.progress(state, "idle"), f"{p}:idle")
        found += [(x.finding_id, x.host_id, x.ts, x.window_start) for x in findings]
        judged += [(v.host_id, v.window_start, v.slow) for v in verdicts]
    return sorted(found), sorted(judged)


def _round_robin(parts: list[list[dict[str, Any]]], size: int) -> Iterator[tuple[int, int]]:
    for _ in range(0, max(map(len, parts)), size):
        yield from ((p, size) for p in range(NSRC))


def _uneven(parts: list[list[dict[str, Any]]], seed: int) -> Iterator[tuple[int, int]]:
    """Random partitions, random fetch sizes: one partition may run hours ahead of the others."""
    rng = random.Random(seed)
    left = [len(p) for p in parts]
    while any(left):
        p = rng.choice([i for i in range(NSRC) if left[i]])
        size = min(left[p], rng.choice([1, 7, 50, 400, 2_000]))
        left[p] -= size
        yield p, size


def test_two_interleavings_give_identical_findings_times_included() -> None:
    parts = _partitions()
    first = _run(_round_robin(parts, 26), parts)
    assert {h for _, h, _, _ in first} == set(SLOW)
    for seed in (1, 2):
        assert _run(_uneven(parts, seed), parts) == first


def _with_gaps(parts: list[list[dict[str, Any]]], hosts: dict[str, tuple[int, int]]) -> None:
    """Hosts that stop sampling for a while (minutes from the start, how many): each resumes with the summary
    of the window it left, long after its peers' samples closed that window."""
    for records in parts:
        records[:] = [
            r
            for r in records
            if not any(
                r["host_id"] == h and START_TS + a * MIN <= r["ts"] < START_TS + (a + n) * MIN
                for h, (a, n) in hosts.items()
            )
        ]


def test_a_host_back_from_a_gap_is_late_whatever_the_interleaving() -> None:
    parts = _partitions()
    _with_gaps(parts, {"big-3": (62, 45), "other-5": (181, 30), "big-7": (240, 90), "other-2": (300, 25)})
    first = _fold(_round_robin(parts, 26), parts)
    assert first[0], "the slow hosts are found"
    for seed in (1, 2, 3, 4):
        assert _fold(_uneven(parts, seed), parts) == first  # the same windows judged, the same hosts in each
