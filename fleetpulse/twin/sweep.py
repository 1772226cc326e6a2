"""Policy variants judged by what they do to training: each variant run closed loop over the same seeds.

Every variant sees the same fleets and the same random faults (a seed fixes them); only the
policy's answers differ, so a difference between variants is the policy's. Figures are means over
seeds with a 95 % Student-t confidence interval (a single seed has no interval).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from scipy import stats

from fleetpulse.backtest.sweep import Variant
from fleetpulse.twin.engine import run_twin
from fleetpulse.twin.outcome import CAUSES, summary
from fleetpulse.twin.settings import TwinSettings
from producers.config import FleetConfig

# Figures of a run summary given with a confidence interval in the sweep table.
FIGURES = (
    "ettr_mean",
    "goodput",
    "interruptions",
    "pages",
    "pages_per_true_incident",
    "precision",
    "lemon_recall",
    "findings_per_lemon_median",
    "rmas",
    "retired",
)


@dataclass(frozen=True, slots=True)
class Interval:
    mean: float
    half_width: float | None  # None with one seed
    n: int

    def text(self, digits: int = 4) -> str:
        if self.half_width is None:
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {self.half_width:.{digits}f}"


def interval(values: Sequence[float], level: float = 0.95) -> Interval | None:
    """Mean and the half width of its Student-t confidence interval (None without values)."""
    if not values:
        return None
    mean = statistics.fmean(values)
    if len(values) < 2:
        return Interval(mean, None, 1)
    t = float(stats.t.ppf(0.5 + level / 2, len(values) - 1))
    return Interval(mean, t * statistics.stdev(values) / len(values) ** 0.5, len(values))


@dataclass(frozen=True, slots=True)
class VariantOutcome:
    variant: Variant
    runs: list[dict[str, Any]]  # one summary per seed, in seed order

    def figure(self, name: str) -> Interval | None:
        return interval([r[name] for r in self.runs if r.get(name) is not None])

    def versus(self, base: VariantOutcome, name: str) -> Interval | None:
        """This variant's figure minus ``base``'s, seed by seed (same fleets and faults: a paired difference)."""
        pairs = zip(self.runs, base.runs, strict=True)
        return interval(
            [a[name] - b[name] for a, b in pairs if a.get(name) is not None and b.get(name) is not None]
        )

    def lost(self, cause: str) -> Interval | None:
        return interval([r["lost_gpu_h"][cause] for r in self.runs])

    def row(self) -> dict[str, Any]:
        """One flat row: the values the variant set, then each figure's mean and half width."""
        row: dict[str, Any] = {k: str(v) for k, v in self.variant.values}
        for name in FIGURES:
            ci = self.figure(name)
            row[name] = None if ci is None else round(ci.mean, 6)
            row[f"{name} ±"] = None if ci is None or ci.half_width is None else round(ci.half_width, 6)
        for cause in CAUSES:
            ci = self.lost(cause)
            row[f"lost {cause} GPU-h"] = None if ci is None else round(ci.mean, 1)
        return row


def run_sweep(
    config: FleetConfig,
    variants: Sequence[Variant],
    settings: TwinSettings,
    *,
    seeds: Sequence[int],
    start_ts: int,
    days: float,
    progress: Callable[[str], None] = lambda _: None,
) -> list[VariantOutcome]:
    """Every variant under every seed, closed loop; pure over its inputs."""
    out = []
    for v in variants:
        runs = []
        for seed in seeds:
            progress(f"{v.label}, seed {seed}")
            runs.append(
                summary(run_twin(config, v.policy, settings, seed=seed, start_ts=start_ts, days=days))
            )
        out.append(VariantOutcome(v, runs))
    return out
