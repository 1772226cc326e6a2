"""Detection quality under the simulator's realistic defaults (not a test): simulate a fleet into a
Parquet lake with its truth, replay it through the packaged policy (``fleetpulse backtest``'s pure
replay of the same detector code), and score the findings against the truth.

    .venv/bin/python bench/bench_detect_quality.py --preset demo --seeds 1 2 3 --days 30
    .venv/bin/python bench/bench_detect_quality.py --preset small --seeds 1 2 3 --days 2 --interval 10

One line per seed, then the pooled figures; ``--json FILE`` keeps every report.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import polars as pl  # noqa: E402

from analytics.lake import Lake  # noqa: E402
from fleetpulse.backtest.events import Period, read_history  # noqa: E402
from fleetpulse.backtest.run import run_backtest  # noqa: E402
from fleetpulse.backtest.sweep import read_policy_data, variants  # noqa: E402
from fleetpulse.evaluation.sources import load_truth  # noqa: E402
from ground.settings import Settings  # noqa: E402
from producers import SimulationRequest, load_fleet_config, run_simulation  # noqa: E402
from producers.config import FleetConfig  # noqa: E402


def fleet_of(
    preset: str, duty: list[float] | None, factor: list[float] | None, host_only: float = 0.0
) -> FleetConfig:
    """The preset, with the intermittent slow hosts' duty and slowdown ranges and the share of hosts
    whose records name only the host replaced if given."""
    config = load_fleet_config(preset)
    slow = {k: tuple(v) for k, v in (("duty", duty), ("intermittent_factor", factor)) if v}
    if slow:
        config = config.model_copy(update={"slow": config.slow.model_copy(update=slow)})
    if host_only:
        failures = config.failures.model_copy(update={"host_only_fraction": host_only})
        config = config.model_copy(update={"failures": failures})
    return config


def one_run(fleet: FleetConfig, seed: int, days: float, interval_s: int | None, root: Path) -> dict[str, Any]:
    lake, truth = root / "lake", root / "truth"
    t0 = time.monotonic()
    sim = run_simulation(
        Settings.load(),
        SimulationRequest(
            fleet=fleet,
            days=days,
            seed=seed,
            interval_s=interval_s,
            sink="parquet",
            out=lake,
            truth_out=truth,
        ),
    )
    t1 = time.monotonic()
    history = read_history(Lake(lake), Period())
    [result] = run_backtest(history, variants(read_policy_data(None), []), load_truth(truth))
    assert result.score is not None
    report = result.score.to_dict()
    report["slow_fn_reasons"] = fn_reasons(report["detectors"]["slow_host"]["fn_hosts"], truth)
    report["slow_ttd_by_kind"] = ttd_by_kind(result.replay.findings, truth, sim.interval_s, fleet)
    report["run"] = {
        "preset": fleet.name,
        "seed": seed,
        "slow": fleet.slow.model_dump(mode="json"),
        "days": days,
        "interval_s": sim.interval_s,
        "hosts": sim.manifest["n_hosts"],
        "delivery": sim.manifest["delivery"],
        "simulate_s": round(t1 - t0, 1),
        "replay_s": round(time.monotonic() - t1, 1),
    }
    return report


def ttd_by_kind(findings: list[Any], truth: Path, interval_s: int, fleet: FleetConfig) -> dict[str, Any]:
    """Median windows from onset (or the run's start) to the first finding, persistent and intermittent
    slow hosts apart (windows: 5 minutes, or the sample interval when longer)."""
    window_ms = max(5 * 60_000, interval_s * 1000)
    first: dict[str, int] = {}
    for f in findings:
        if f.detector == "slow_host":
            first[f.host_id] = min(first.get(f.host_id, f.ts), f.ts)
    manifest = json.loads((truth / "manifest.json").read_text())
    out: dict[str, Any] = {}
    for h in pl.read_parquet(truth / "hosts.parquet").filter(pl.col("slow_cause").is_not_null()).to_dicts():
        if h["host_id"] in first:
            onset = max(h["slow_onset_ts"] or manifest["start_ts"], manifest["start_ts"])
            kind = "intermittent" if h["slow_intermittent"] else "persistent"
            out.setdefault(kind, []).append((first[h["host_id"]] - onset) / window_ms)
    return {
        k: {"n": len(v), "median_windows": round(float(sorted(v)[len(v) // 2]), 2)} for k, v in out.items()
    }


def fn_reasons(fn_hosts: list[str], truth: Path, min_job_peers: int = 4) -> dict[str, int]:
    """Why slow hosts were missed: intermittent, alone in a job too small for peers, or neither."""
    hosts = pl.read_parquet(truth / "hosts.parquet").filter(pl.col("host_id").is_in(fn_hosts))
    sizes = dict(pl.read_parquet(truth / "jobs.parquet").select("slot", "hosts").unique().iter_rows())
    out: dict[str, int] = {}
    for h in hosts.to_dicts():
        small = sizes.get(h["job_id"], 0) < min_job_peers
        why = "small job" if small else ("intermittent" if h["slow_intermittent"] else "persistent")
        why += f" ({h['slow_factor']:.0%}" + (
            f", duty {h['slow_duty']:.2f})" if h["slow_intermittent"] else ")"
        )
        out[why] = out.get(why, 0) + 1
    return out


def _f(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def line(report: dict[str, Any]) -> str:
    run, d = report["run"], report["detectors"]
    ro, sh, cf = d["repeat_offender"], d["slow_host"], d["critical_fault"]
    return (
        f"{run['preset']} seed {run['seed']} {run['days']:g} d @ {run['interval_s']} s ({run['hosts']} hosts): "
        f"repeat P {_f(ro['precision'])} R {_f(ro['recall'])} tp/fp/rule-met/fn "
        f"{ro['tp']}/{ro['fp']}/{ro['rule_met']}/{ro['fn']} FP/d/1k {_f(ro['fp_per_day_per_1k_hosts'])} | "
        f"slow P {_f(sh['precision'])} R {_f(sh['recall'])} tp/fp/fn {sh['tp']}/{sh['fp']}/{sh['fn']} "
        f"FP/d/1k {_f(sh['fp_per_day_per_1k_hosts'])} TTD windows p50/p90 "
        f"{_f(sh['ttd_median_windows'], 1)}/{_f(sh['ttd_p90_windows'], 1)} "
        f"(from busy: {_f(sh['ttd_busy_median_windows'], 1)}/{_f(sh['ttd_busy_p90_windows'], 1)}) | "
        f"critical P {_f(cf['precision'])} R {_f(cf['recall'])} | "
        f"sim {run['simulate_s']} s, replay {run['replay_s']} s"
        + (f"\n  lemons to be found: {ro['truth_definition']}" if ro.get("truth_definition") else "")
        + (f"\n  slow hosts to be found: {sh['truth_definition']}" if sh.get("truth_definition") else "")
        + (f"\n  slow hosts missed: {report['slow_fn_reasons']}" if report.get("slow_fn_reasons") else "")
        + (
            f"\n  time to detect by kind: {report['slow_ttd_by_kind']}"
            if report.get("slow_ttd_by_kind")
            else ""
        )
    )


def pooled(reports: list[dict[str, Any]]) -> str:
    out = []
    for name in ("repeat_offender", "slow_host"):
        rows = [r["detectors"][name] for r in reports]
        tp, fp, fn = (sum(x[k] for x in rows) for k in ("tp", "fp", "fn"))
        met = sum(x["rule_met"] or 0 for x in rows)
        found = sum(x["detectable"] - x["fn"] for x in rows)
        detectable = sum(x["detectable"] for x in rows)
        fp_n = sum(x["fp_findings"] for x in rows)
        host_days = sum(r["run"]["hosts"] * r["run"]["days"] for r in reports)
        out.append(
            f"{name}: precision {_f(tp / (tp + fp) if tp + fp else None)} ({tp} TP, {fp} FP, {met} rule met), "
            f"recall {_f(found / detectable if detectable else None)} ({found}/{detectable}), "
            f"{fp_n} FP findings = {_f(fp_n / host_days * 1000 if host_days else None)} per day per 1,000 hosts"
        )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="demo")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--days", type=float, default=30)
    parser.add_argument(
        "--interval", type=int, default=None, help="sample interval, s (default: fast-forward's)"
    )
    parser.add_argument("--duty", type=float, nargs=2, default=None, help="intermittent duty range")
    parser.add_argument(
        "--intermittent-factor", type=float, nargs=2, default=None, help="their slowdown range"
    )
    parser.add_argument("--host-only", type=float, default=0.0, help="failures.host_only_fraction")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    fleet = fleet_of(args.preset, args.duty, args.intermittent_factor, args.host_only)
    reports = []
    for seed in args.seeds:
        with tempfile.TemporaryDirectory(prefix="detect-quality-") as tmp:
            reports.append(one_run(fleet, seed, args.days, args.interval, Path(tmp)))
        print(line(reports[-1]), flush=True)
    print(pooled(reports))
    if args.json is not None:
        args.json.write_text(json.dumps(reports, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
