"""Score the jobs against the simulator's ground truth (``--truth-out`` dir): did they recover it?

Each check is a row: what was configured, what the job measured, the interval it used, and a verdict:
yes, no, or insufficient data with its reason (a check that cannot say no is no check).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from scipy import stats

from analytics.jobs.early_life_fit import STRICT_CONFIDENCE
from analytics.jobs.result import JobResult
from analytics.jobs.slow_truth import Materiality, judge_slow_hosts, material_hosts, resolutions_of
from analytics.jobs.source import read_manifest


def find_key(doc: Any, key: str) -> Any:
    """The first value stored under ``key`` anywhere in a nested manifest (depth-first)."""
    if isinstance(doc, dict):
        if key in doc:
            return doc[key]
        for v in doc.values():
            got = find_key(v, key)
            if got is not None:
                return got
    elif isinstance(doc, list):
        for v in doc:
            got = find_key(v, key)
            if got is not None:
                return got
    return None


VERDICTS = {True: "yes", False: "no", None: "insufficient data"}


def _row(check: str, expected: Any, observed: Any, interval: str, ok: bool | None, detail: str = "") -> dict:
    """One check's row; an undecided one (``ok`` None) must say why, or it would read as a blank verdict."""
    if ok is None and not detail:
        raise ValueError(f"check {check!r} gave no verdict and no reason")
    return {
        "check": check,
        "expected": str(expected),
        "observed": str(observed),
        "interval": interval,
        "ok": ok,
        "verdict": VERDICTS[ok],
        "detail": detail,
    }


def weibull_check(result: JobResult, manifest: dict, tolerance: float = 0.10) -> list[dict]:
    """The early-life shape against the configured one: yes, no, or insufficient data (with why).

    The fit with a background term is the one scored (a power law alone is biased towards 1 by
    the constant-rate faults of the same kinds). "no" only when its strict (99.9 %) interval
    excludes the whole ±band; an estimate outside the band whose interval still reaches into it,
    or a fit the data cannot decide, is "insufficient data".
    """
    shape = find_key(manifest, "weibull_shape")
    fits = result.summary.get("early_life_fits") or result.summary.get("fits", {})
    fit = fits.get("early_life_modes")
    name = "weibull shape (early-life modes)"
    if shape is None:
        return [_row(name, None, None, "", None, "no configured shape")]
    if fit is None:
        why = next((n for n in result.notes if "early_life_modes" in n), "no fit of the early-life modes")
        return [_row(name, f"{shape:.3f}", "insufficient data", "", None, why)]
    interval = f"95% CI [{fit['shape_lo']:.3f}, {fit['shape_hi']:.3f}]"
    detail = f"±{tolerance:.0%} band; {fit['events']} events"
    if not fit.get("decided", True):
        return [_row(name, f"{shape:.3f}", "insufficient data", interval, None, fit["reason"])]
    band_lo, band_hi = shape * (1 - tolerance), shape * (1 + tolerance)
    strict_lo, strict_hi = fit.get("strict_lo", fit["shape_lo"]), fit.get("strict_hi", fit["shape_hi"])
    if band_lo <= fit["shape"] <= band_hi:
        ok: bool | None = True
    elif strict_hi < band_lo or strict_lo > band_hi:
        ok = False
    else:
        ok = None
        detail = (
            f"the estimate {fit['shape']:.3f} is outside the band but its {STRICT_CONFIDENCE:.1%} interval "
            f"[{strict_lo:.3f}, {strict_hi:.3f}] reaches into it; {detail}"
        )
    observed = f"{fit['shape']:.3f}" if ok is not None else f"insufficient data ({fit['shape']:.3f})"
    return [_row(name, f"{shape:.3f}", observed, interval, ok, detail)]


MIN_INTERRUPTIONS = 10
MONTE_CARLO_DRAWS = 20_000


def cause_mix_check(
    result: JobResult, manifest: dict, faults_truth: pl.DataFrame | None = None, alpha: float = 0.001
) -> list[dict]:
    """χ² of the interruption table against the configured mix (its p by Monte Carlo when a cell expects < 5).

    Lemon repeats are extra interruptions on top of the mix, so when ``faults.parquet`` is at hand
    the lemon-phase faults are subtracted per cause first (each interrupts once, at its own ts).
    """
    mix = find_key(manifest, "cause_mix")
    table = result.tables["root_causes"]
    if not mix:
        return [_row("cause mix", None, None, "", None, "manifest has no cause_mix")]
    counts = dict(zip(table["cause"].to_list(), table["count"].to_list(), strict=True))
    lemon_note = ""
    if faults_truth is not None and "phase" in faults_truth.columns:
        lemons = faults_truth.filter((pl.col("phase") == "lemon") & (pl.col("kind") != "link_flap"))
        for cause, n in lemons.group_by("cause").len().iter_rows():
            counts[cause] = counts.get(cause, 0) - n
        lemon_note = f"; {lemons.height} lemon repeats subtracted"
    dropped = find_key(manifest, "guard_dropped")
    if dropped:  # the simulator dropped repeats of hardware classes: the realised mix leans to software
        lemon_note += f"; simulator guard dropped {dropped} hardware repeats"
    causes = [c for c in mix if mix[c] > 0]
    observed = np.array([counts.get(c, 0) for c in causes], dtype=float)
    n = int(observed.sum())
    if n < MIN_INTERRUPTIONS:
        return [
            _row(
                "cause mix (χ² goodness of fit)",
                "configured mix",
                "insufficient data",
                f"p > {alpha}",
                None,
                f"{n} interruptions, {MIN_INTERRUPTIONS} needed{lemon_note}",
            )
        ]
    share = np.array([mix[c] for c in causes], dtype=float)
    share /= share.sum()
    expected = share * n
    chi2, p = stats.chisquare(observed, expected)
    test = "χ²"
    if expected.min() < 5:  # the χ² law is wrong for small cells: draw the statistic's law instead
        draws = np.random.default_rng(0).multinomial(n, share, size=MONTE_CARLO_DRAWS)
        law = ((draws - expected) ** 2 / expected).sum(axis=1)
        p, test = float((np.sum(law >= chi2 - 1e-9) + 1) / (MONTE_CARLO_DRAWS + 1)), "Monte Carlo"
    worst = max(causes, key=lambda c: abs(counts.get(c, 0) - expected[causes.index(c)]))
    return [
        _row(
            "cause mix (χ² goodness of fit)",
            "configured mix",
            f"χ²={chi2:.1f}, p={p:.3g} ({test})",
            f"p > {alpha}",
            bool(p > alpha),
            f"{n} interruptions; largest gap: {worst}{lemon_note}",
        )
    ]


def fabric_check(result: JobResult, manifest: dict) -> list[dict]:
    """The fabric A/B difference against the configured one; undecidable when every job ran at its own pace."""
    fabrics = find_key(manifest, "fabrics")
    comps = result.summary.get("comparisons", {})
    rows = []
    for metric in ("step_time_ms", "bus_bw_gbps"):
        c = comps.get(metric)
        if not fabrics or c is None or c["group_a"] not in fabrics or c["group_b"] not in fabrics:
            rows.append(_row(f"fabric {metric}", None, None, "", None, "not configured or not measured"))
            continue
        want = fabrics[c["group_b"]][metric] - fabrics[c["group_a"]][metric]
        spread = find_key(manifest, "pace" if metric == "step_time_ms" else "bw_pace")
        if isinstance(spread, list | tuple) and len(spread) == 2 and spread[0] != spread[1]:
            rows.append(
                _row(
                    f"fabric {metric} ({c['group_b']} − {c['group_a']})",
                    f"{want:+.2f}",
                    f"{c['diff']:+.2f}",
                    "",
                    None,
                    f"insufficient data: jobs run at their own pace (×{spread[0]:g}–{spread[1]:g}), "
                    "so the fabrics' difference is confounded with which jobs ran where",
                )
            )
            continue
        ok, detail = _fabric_verdict(c, want)
        rows.append(
            _row(
                f"fabric {metric} ({c['group_b']} − {c['group_a']})",
                f"{want:+.2f}",
                f"{c['diff']:+.2f}",
                f"95% CI [{c['diff_lo']:+.2f}, {c['diff_hi']:+.2f}]",
                ok,
                detail,
            )
        )
    return rows


def _fabric_verdict(c: dict, want: float) -> tuple[bool | None, str]:
    """Yes inside the 95 % interval; no only outside the strict one (normal approximation from the
    bootstrap's 95 % width: its 0.05 % tails would rest on one or two resamples); in between, undecided."""
    detail = f"p={c['p_value']:.2g}"
    if c["diff_lo"] <= want <= c["diff_hi"]:
        return True, detail
    z = stats.norm.ppf(0.5 + STRICT_CONFIDENCE / 2) / stats.norm.ppf(0.975)
    half = z * (c["diff_hi"] - c["diff_lo"]) / 2
    lo, hi = c["diff"] - half, c["diff"] + half
    if lo <= want <= hi:
        return (
            None,
            f"insufficient data: outside the 95% CI, inside the {STRICT_CONFIDENCE:.1%} one [{lo:+.2f}, {hi:+.2f}]; {detail}",
        )
    return False, f"outside the {STRICT_CONFIDENCE:.1%} CI [{lo:+.2f}, {hi:+.2f}]; {detail}"


def fault_count_check(faults_truth: pl.DataFrame, result: JobResult) -> list[dict]:
    """The offenders job's fault table vs faults.parquet, per kind (the classifier's recall).

    Link flaps are left out: the truth has one fault per lemon burst, the lake one event per flap
    (plus single noise flaps), and the jobs count events.
    """
    share = result.tables["share"].filter((pl.col("scope") == "host") & (pl.col("kind") != "all"))
    seen = dict(zip(share["kind"].to_list(), share["events"].to_list(), strict=True))
    truth = faults_truth.group_by("kind").len()
    rows = []
    for kind, n in sorted(zip(truth["kind"].to_list(), truth["len"].to_list(), strict=True)):
        if kind in seen and kind != "link_flap":
            rows.append(_row(f"faults of kind {kind}", n, seen[kind], "exact", seen[kind] == n))
    return rows


SLOW_GOAL = 0.9  # precision and recall both


def slow_host_check(
    hosts_truth: pl.DataFrame,
    result: JobResult,
    truth: Path,
    manifest: dict,
    materiality: Materiality | None = None,
) -> list[dict]:
    """The batch view's slow hosts against the truth's material ones: "yes" when precision and recall are
    both ≥ 0.9. A flagged slow host that is not material is no false alarm; recall counts material ones."""
    name = "slow hosts (batch view)"
    if "slow_cause" not in hosts_truth.columns:
        return [_row(name, None, None, "", None, "insufficient data: the truth has no slow_cause column")]
    if "start_ts" not in manifest or "end_ts" not in manifest:
        return [_row(name, None, None, "", None, "insufficient data: the manifest has no start_ts/end_ts")]
    m = materiality or Materiality()
    jobs = _optional(truth / "jobs.parquet", ["slot", "start_ts", "end_ts"])
    episodes = _optional(truth / "slow_episodes.parquet", None)
    judged = judge_slow_hosts(
        hosts_truth,
        int(manifest["start_ts"]),
        int(manifest["end_ts"]),
        jobs,
        episodes,
        m,
        resolutions_of(manifest),
    )
    slow = {t.host_id for t in judged}
    material = material_hosts(judged)
    flagged = set(result.tables["slow_hosts"].filter(pl.col("is_slow"))["host_id"].to_list())
    expected = f"{len(material)} material slow of {len(slow)}"
    observed = f"{len(flagged)} flagged"
    interval = f"precision, recall ≥ {SLOW_GOAL}"
    if not material:
        why = "; ".join(sorted({t.reason for t in judged})) or "no slow host"
        return [
            _row(
                name,
                expected,
                observed,
                interval,
                None,
                f"insufficient data: no material slow host ({why}); {m.describe()}",
            )
        ]
    tp = len(flagged & slow)
    precision = tp / len(flagged) if flagged else None
    recall = len(flagged & material) / len(material)
    ok = precision is not None and precision >= SLOW_GOAL and recall >= SLOW_GOAL
    shown = "n/a (nothing flagged)" if precision is None else f"{precision:.2f}"
    detail = f"precision={shown} recall={recall:.2f}; {len(flagged - slow)} healthy flagged; {m.describe()}"
    return [_row(name, expected, observed, interval, ok, detail)]


def _optional(path: Path, columns: list[str] | None) -> list[dict]:
    return pl.read_parquet(path, columns=columns).to_dicts() if path.is_file() else []


def truth_checks(results: dict[str, JobResult], truth: str | Path) -> pl.DataFrame:
    """All checks that the available results and truth files allow."""
    manifest = read_manifest(truth) or {}
    rows: list[dict] = []
    if "early-life" in results:
        rows += weibull_check(results["early-life"], manifest)
    faults_path = Path(truth) / "faults.parquet"
    faults = pl.read_parquet(faults_path) if faults_path.is_file() else None
    if "interruptions" in results:
        rows += cause_mix_check(results["interruptions"], manifest, faults)
    if "fabric" in results:
        rows += fabric_check(results["fabric"], manifest)
        hosts = Path(truth) / "hosts.parquet"
        if hosts.is_file():
            rows += slow_host_check(pl.read_parquet(hosts), results["fabric"], Path(truth), manifest)
    if "offenders" in results and faults is not None:
        rows += fault_count_check(faults, results["offenders"])
    schema = {k: pl.String for k in ("check", "expected", "observed", "interval", "verdict", "detail")} | {
        "ok": pl.Boolean
    }
    return pl.DataFrame(rows, schema=schema).select(
        "check", "expected", "observed", "interval", "ok", "verdict", "detail"
    )
