"""The twin's lemon recall counts the lemons the truth makes material, the same for every policy."""

from __future__ import annotations

from typing import Any

import numpy as np

from fleetpulse.backtest.sweep import parse_setting, read_policy_data, variants
from fleetpulse.evaluation.lemon_truth import LemonMateriality
from fleetpulse.twin import run_twin, twin_settings
from fleetpulse.twin.engine import TwinRun
from fleetpulse.twin.outcome import lemons_to_find, summary
from streams.core.policy import load_policy
from tests.fleetpulse.twin.conftest import START_TS

# Many DRAM lemons with onsets over the whole 8 days: the late ones fail once before the end.
LEMONS = {"fraction": 0.3, "kinds": {"dram_uce": 1.0}, "onset_window": 1.0}
DRAM_RULES = ("dram_uce_repeat_gpu", "dram_uce_repeat_host", "dram_uce_repeat_host_unknown")


def repeated(run: TwinRun) -> set[str]:
    """Lemons with two scheduled faults of their kind on their GPU in the run (lemon repeats come every
    1 to 3 days, well within the materiality's 30)."""
    f, o = run.fleet, run.faults
    out = set()
    for h, kind in enumerate(f.lemon_kind):
        mine = (o.host == h) & (o.kind == kind) & (o.gpu == f.lemon_gpu[h]) & (o.ts <= f.end_ts)
        if int(np.count_nonzero(mine)) >= 2:
            out.add(f.host_id[h])
    return out


def test_every_policy_is_judged_against_the_same_material_lemons(make_fleet_config: Any) -> None:
    config = make_fleet_config(hosts=64, job_hosts=8, rate_per_gpu_day=1e-6, lemons=LEMONS)
    grid = variants(read_policy_data(None), [parse_setting(f"rules.{r}.count=4") for r in DRAM_RULES])
    runs = [
        run_twin(config, policy, twin_settings({}), seed=1, start_ts=START_TS, days=8)
        for policy in (load_policy(None), grid[0].policy)
    ]
    shipped, strict = (summary(r) for r in runs)
    assert lemons_to_find(runs[0]) == lemons_to_find(runs[1]) == repeated(runs[0])
    assert shipped["lemons"] == strict["lemons"] < shipped["lemons_planted"]  # a single fault is no repeat
    assert shipped["lemon_recall"] == 1.0
    assert strict["lemons_found"] < shipped["lemons_found"]
    assert strict["lemon_recall"] < shipped["lemon_recall"]
    # a stricter materiality asks for more: fewer lemons to find
    assert lemons_to_find(runs[0], LemonMateriality(min_faults=3)) < lemons_to_find(runs[0])
