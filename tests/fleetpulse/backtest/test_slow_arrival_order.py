"""The backtest's slow-host findings, times included, do not depend on the order the samples arrive in."""

from __future__ import annotations

import random
from typing import Any

from fleetpulse.backtest.events import History
from fleetpulse.backtest.replay import Replay
from schemas import HostSampled
from streams.core.policy import Policy
from tests.fleetpulse.backtest.lake import START, inventory

MINUTE = 60_000
# one job of 8 with an intermittent 3 % host (duty 0.4), and a pair at its own pace with a 10 % host
JOBS = {**{f"h{i:02d}": ("big", 1.0) for i in range(8)}, "h08": ("pair", 0.7), "h09": ("pair", 0.7)}
SLOW = {"h03": (1.03, 0.4), "h09": (1.10, 1.0)}  # (factor, duty of its 30-minute episodes)


def _samples(hours: int = 10, seed: int = 41) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    episodes = {h: [rng.random() < duty for _ in range(hours * 2 + 1)] for h, (_, duty) in SLOW.items()}
    out = []
    for n in range(hours * 60):
        for h, (job, pace) in JOBS.items():
            slow = h in SLOW and episodes[h][n // 30]
            step = 1000.0 * pace * (SLOW[h][0] if slow else 1.0) * (1 + rng.gauss(0, 0.002))
            out.append(
                HostSampled(
                    event_id=f"s-{n:04d}-{h}",
                    host_id=h,
                    cluster="c1",
                    ts=START + n * MINUTE + 500,
                    agent_seq=n,
                    payload={
                        "interval_s": 60,
                        "job_id": job,
                        "step_time_ms": step,
                        "bus_bw_gbps": 350.0,
                        "gpus": [],
                        "nics": [],
                    },
                ).to_record()
            )
    return out


def _arrival(records: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """Each host's samples in its own order, but each delayed by up to 3 minutes against the others'
    (hosts' agents and partitions run at their own pace): another interleaving of the same history."""
    rng = random.Random(seed)
    delay = {h: rng.randrange(0, 3 * MINUTE) for h in JOBS}
    jitter = [rng.randrange(0, 20_000) for _ in records]
    order = sorted(
        range(len(records)), key=lambda i: records[i]["ts"] + delay[records[i]["host_id"]] + jitter[i]
    )
    return [records[i] for i in order]


def _found(events: list[dict[str, Any]]) -> list[tuple[str, str, int, int]]:
    history = History(events=events, inventory=inventory(), outages=[], live_findings=[], live_actions=[])
    result = Replay(Policy(), history.inventory).run(history)
    return sorted(
        (f.finding_id, f.host_id, f.ts, f.window_start) for f in result.findings if f.detector == "slow_host"
    )


def test_two_arrival_orders_give_identical_slow_host_findings_times_included() -> None:
    records = _samples()
    in_order = _found(records)
    assert {h for _, h, _, _ in in_order} == set(SLOW)
    for seed in (1, 2):
        assert _found(_arrival(records, seed)) == in_order
