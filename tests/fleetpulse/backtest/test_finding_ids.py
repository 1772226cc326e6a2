"""One finding, one id: a host found again is a new finding in the backtest's counts, its findings.csv and its planner.

A hand-built lake sampled every 6 hours (a fast-forward lake's interval, as long as the slow-host
``clear_after``): ``h03`` of ten peers is 3 % slow in windows 0, 1, 46 and 47 and healthy in between, so its
first episode ends once its evidence is back to zero (44 healthy windows) and window 47 finds it again.
"""

from __future__ import annotations

from typing import Any

import pytest

from analytics.lake import Lake
from fleetpulse.backtest.events import read_history
from fleetpulse.backtest.run import VariantResult, run_backtest, sweep_table
from fleetpulse.backtest.sweep import read_policy_data, variants
from schemas import HostSampled
from tests.fleetpulse.backtest import lake as hand

SIX_HOURS = 6 * 3_600_000
WINDOWS = 50  # the last two never close (the watermark passes a window at its end + a window)
SLOW_WINDOWS = (0, 1, 46, 47)  # of h03


def _samples() -> list[dict[str, Any]]:
    out = []
    for n in range(WINDOWS):
        for i, h in enumerate(hand.HOSTS):
            jitter = ((i * 7 + n * 3) % 5 - 2) * 0.2
            slow = h == "h03" and n in SLOW_WINDOWS
            out.append(
                HostSampled(
                    event_id=f"s6-{n:03d}-{h}",
                    host_id=h,
                    cluster="c1",
                    ts=hand.START + n * SIX_HOURS + i * 1000,
                    agent_seq=n,
                    payload={
                        "interval_s": SIX_HOURS // 1000,
                        "job_id": "j1",
                        "step_time_ms": (1030.0 if slow else 1000.0) + jitter,
                        "bus_bw_gbps": 350.0,
                        "gpus": [],
                        "nics": [],
                    },
                ).to_record()
            )
    return out


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> VariantResult:
    """The packaged policy over the lake."""
    lake = tmp_path_factory.mktemp("lake")
    hand.write(lake, [*hand.inventory(), *_samples()])
    [variant] = variants(read_policy_data(None), [])
    [out] = run_backtest(read_history(Lake(lake)), [variant])
    return out


def test_a_host_found_again_is_a_second_finding_in_every_count(result: VariantResult) -> None:
    slow = [f for f in result.replay.findings if f.detector == "slow_host"]
    assert [(f.host_id, f.window_start) for f in slow] == [
        ("h03", hand.START),
        ("h03", hand.START + 46 * SIX_HOURS),
    ]
    assert len({f.finding_id for f in result.replay.findings}) == len(result.replay.findings)
    assert result.findings.height == len(result.replay.findings)  # findings.csv: one row per finding
    assert sum(result.counts().values()) == len(result.replay.findings)
    row = sweep_table([result]).row(0, named=True)
    assert row["findings"] == row["findings backtest only"] == len(slow)


def test_the_planner_acts_on_a_host_still_slow_after_its_repair(result: VariantResult) -> None:
    """The first finding drains ``h03`` for diagnostics and returns it; still slow, it is found again, and the
    planner takes that finding up (it drops an id it has seen as a re-delivery)."""
    first, again = (f.finding_id for f in result.replay.findings if f.detector == "slow_host")
    kinds = [(a.finding_id, a.kind) for a in result.replay.actions if a.host_id == "h03"]
    assert kinds.index((first, "returned")) < kinds.index((again, "suspected"))
    assert [k for k in kinds if k[1] == "suspected"] == [(first, "suspected"), (again, "suspected")]
