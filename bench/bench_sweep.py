"""Benchmark a backtest sweep (not a test): CPU of ``fleetpulse backtest`` over a lake with N policy variants
against the same command with one of them, in the same run, and whether each variant checked alone wrote the
same findings, actions and capacity as it did inside the sweep.

    .venv/bin/python bench/bench_sweep.py --lake /tmp/lake-m48-30               # 10 variants, check the first
    .venv/bin/python bench/bench_sweep.py --lake /tmp/lake-m48-30 --check 0,9   # and the last, alone too

A lake folder that does not exist yet is simulated first (``--preset``, ``--days``, ``--seed``; not timed).
Each command is one process, timed by its own CPU (user + system, from the kernel's rusage of the child).
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
FLEETPULSE = [sys.executable, "-m", "fleetpulse"]
COMPARED = ("findings.csv", "actions.csv", "capacity_daily.csv")  # what a variant's report folder holds


def timed(args: list[str]) -> dict[str, float]:
    """Run a command; its CPU seconds (user, system) and wall seconds."""
    wall = time.perf_counter()
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr is not None else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): {err[-2000:]}")
    return {
        "user_s": round(usage.ru_utime, 2),
        "sys_s": round(usage.ru_stime, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "wall_s": round(time.perf_counter() - wall, 2),
        "max_rss_mb": round(usage.ru_maxrss / 1024, 1),
    }


def simulate(lake: Path, preset: str, days: float, seed: int) -> None:
    args = [*FLEETPULSE, "simulate", "--preset", preset, "--days", str(days), "--seed", str(seed)]
    subprocess.run([*args, "--sink", "parquet", "--no-progress", "--out", str(lake)], cwd=REPO, check=True)


def backtest(lake: Path, out: Path, key: str, values: list[str]) -> dict[str, float]:
    args = [*FLEETPULSE, "backtest", "--lake", str(lake), "--out", str(out), "--format", "json"]
    return timed([*args, "--set", f"{key}={','.join(values)}"])


def same_report(sweep: Path, alone: Path) -> bool:
    """The variant's folder in the sweep's report holds what its own run's holds."""
    return all((sweep / name).read_bytes() == (alone / name).read_bytes() for name in COMPARED)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lake", type=Path, required=True)
    parser.add_argument("--preset", default="meta-48k")
    parser.add_argument("--days", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--key", default="rules.dram_uce_repeat_gpu.count")
    parser.add_argument("--values", default="1,2,3,4,5,6,7,8,9,10")
    parser.add_argument("--check", default="0", help="variants (by index) also run alone and compared")
    parser.add_argument("--out", type=Path, default=Path("/tmp/bench-sweep"))
    a = parser.parse_args()
    if not a.lake.exists():
        simulate(a.lake, a.preset, a.days, a.seed)
    values = a.values.split(",")
    checks = [int(i) for i in a.check.split(",") if i.strip()]
    out: dict[str, Any] = {"bench": "sweep", "lake": str(a.lake), "key": a.key, "variants": len(values)}
    out["sweep"] = backtest(a.lake, a.out / "sweep", a.key, values)
    for i in checks:
        alone = backtest(a.lake, a.out / f"alone{i}", a.key, [values[i]])
        same = same_report(a.out / "sweep" / f"v{i}", a.out / f"alone{i}" / "v0")
        out[f"alone {a.key}={values[i]}"] = {**alone, "same_findings_actions_capacity": same}
    if checks:
        one = out[f"alone {a.key}={values[checks[0]]}"]["cpu_s"]
        out["cpu_s_per_extra_variant"] = round((out["sweep"]["cpu_s"] - one) / max(1, len(values) - 1), 2)
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
