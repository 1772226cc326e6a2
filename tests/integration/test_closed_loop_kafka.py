"""The closed loop on the real broker: the simulated fleet answers the live detect worker's actions.

A lemon whose RMA cures it stops failing after the RMA; one whose repairs never hold is found again
after it returns, escalated, then retired (``retire_after = 1``), and sends nothing after that. Open
loop (the old simulator) both would keep failing.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from fleetpulse.twin.settings import twin_settings
from streams.core.actions import Action
from streams.core.policy import DEFAULT_POLICY_FILE
from tests.fleetpulse.twin.conftest import fleet_config
from tests.integration.closed_loop_run import run_closed_loop
from tests.streams.kafka_io import decoded, isolated_settings

pytestmark = pytest.mark.integration

SEED = 5
LEMONS = {
    "fraction": 0.1,
    "kinds": {"dram_uce": 0.5, "sram_uce": 0.5},
    "onset_window": 0.2,
    "max_repeats": 1000,
}
# an RMA always cures a DRAM lemon and never an SRAM one
CURES = {"cure": {"rma": {"dram_uce": 1.0, "sram_uce": 0.0}}}
# the fleet answers between ticks: a fault later in the tick the RMA was decided in still goes out
TICK_MS = 21_600_000


@pytest.fixture
def settings(kafka):  # type: ignore[no-untyped-def]
    return isolated_settings(kafka.settings)


def retiring_policy(path: Path) -> Path:
    """The packaged policy with retirement on at the first failed repair."""
    text = DEFAULT_POLICY_FILE.read_text()
    assert "\nretire_after = 0\n" in text
    path.write_text(text.replace("\nretire_after = 0\n", "\nretire_after = 1\n"))
    return path


def test_the_fleet_answers_the_live_planner(settings: Any, tmp_path: Path) -> None:
    policy = retiring_policy(tmp_path / "policy.toml")
    config = fleet_config(hosts=64, job_hosts=8, rate_per_gpu_day=1e-6, lemons=LEMONS)
    result = run_closed_loop(
        settings,
        tmp_path,
        config,
        twin_settings(CURES),
        seed=SEED,
        days=30,
        interval_s=TICK_MS // 1000,
        policy_file=policy,
    )
    report = result.manifest["closed_loop"]
    assert report["lockstep_timeouts"] == 0
    actions = [Action.from_record(r) for r in decoded(settings, "actions")]
    findings = decoded(settings, "findings")
    truth = tmp_path / "truth"
    sent = pl.read_parquet(truth / "faults.parquet").filter(
        pl.col("phase") == "lemon"
    )  # what the agents sent
    hosts = pl.read_parquet(truth / "hosts.parquet").filter(pl.col("lemon_kind").is_not_null())
    kinds = dict(zip(hosts["host_id"], hosts["lemon_kind"], strict=True))
    assert set(kinds.values()) == {"dram_uce", "sram_uce"}, kinds
    for host, kind in kinds.items():
        mine = [a for a in actions if a.host_id == host]
        rmas = [a.ts for a in mine if a.kind == "rma_opened"]
        assert rmas, f"lemon {host} ({kind}) was never sent to RMA: {[a.kind for a in mine]}"
        faults = sent.filter(pl.col("host_id") == host)["ts"].to_list()
        found = [r["ts"] for r in findings if r["host_id"] == host]
        if kind == "dram_uce":  # cured by its first RMA: no fault after that tick, never escalated
            assert report["lemons_cured"][host] == rmas[0]
            assert faults and max(faults) <= rmas[0] + TICK_MS
            assert found and max(found) <= rmas[0] + TICK_MS
            assert not {"escalated", "retired"} & {a.kind for a in mine}
        else:  # the repair did not hold: it fails again after its return, is found again, escalated, retired
            returned = next(a.ts for a in mine if a.kind == "returned")
            assert any(ts > returned for ts in faults)
            assert any(ts > returned for ts in found)
            steps = [a.kind for a in mine]
            assert Counter(steps)["escalated"] == 1 and Counter(steps)["retired"] == 1, steps
            assert steps.index("escalated") < steps.index("retired")
            retired = next(a.ts for a in mine if a.kind == "retired")
            assert max(faults) <= retired + TICK_MS  # out for good: nothing after the tick it was retired in
            assert host not in report["lemons_cured"]
    assert report["retired"] == sorted(h for h, k in kinds.items() if k == "sram_uce")
