"""PNG plots of a backtest (matplotlib, Agg): hosts out per day, and a sweep's precision/recall vs capacity drained."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import polars as pl

from fleetpulse.backtest.run import VariantResult

DETECTOR_MARKERS = {"repeat_offender": "o", "slow_host": "s", "critical_fault": "^"}
# No timestamps or version strings in the file: the same backtest writes the same bytes.
PNG_METADATA = {"Software": None}


def _pyplot() -> Any:
    matplotlib.use("Agg")
    return plt


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata=PNG_METADATA)
    _pyplot().close(fig)
    return path


def plot_capacity(result: VariantResult, folder: Path) -> Path:
    """Hosts out per day across the fleet: the policy's drains beside incidents and operators' steps."""
    _pyplot()
    per_day = (
        result.capacity.daily.group_by("day").agg(pl.col("drained").sum(), pl.col("outage").sum()).sort("day")
    )
    fig, ax = plt.subplots(figsize=(8, 4))
    days = per_day["day"].to_list()
    ax.bar(days, per_day["outage"].to_list(), label="out for incidents / operators' steps", color="#bbb")
    ax.bar(
        days, per_day["drained"].to_list(), bottom=per_day["outage"].to_list(), label="drained by the policy"
    )
    ax.set(
        xlabel="day", ylabel="hosts out at some time of the day", title=f"Capacity: {result.variant.label}"
    )
    ax.legend(fontsize=8)
    fig.autofmt_xdate()
    return _save(fig, folder / "capacity.png")


def plot_sweep(results: Sequence[VariantResult], folder: Path) -> Path:
    """Each variant at its capacity drained: precision and recall per detector (or findings without a truth)."""
    _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    x = [r.capacity.drained_host_days for r in results]
    if all(r.score is not None for r in results):
        for name, marker in DETECTOR_MARKERS.items():
            for metric, fill in (("precision", "full"), ("recall", "none")):
                y = [getattr(r.score.detectors[name], metric) if r.score else None for r in results]
                points = [(a, b) for a, b in zip(x, y, strict=True) if b is not None]
                if points:
                    ax.plot(
                        *zip(*points, strict=True),
                        marker=marker,
                        fillstyle=fill,
                        ls="none",
                        label=f"{name} {metric}",
                    )
        ax.set(ylabel="precision / recall (filled / open)", ylim=(-0.05, 1.05))
    else:
        ax.plot(x, [len(r.replay.findings) for r in results], "o:", label="findings")
        ax.set(ylabel="findings")
    for r, xv in zip(results, x, strict=True):
        ax.annotate(
            ", ".join(str(v) for _, v in r.variant.values),
            (xv, ax.get_ylim()[0]),
            rotation=90,
            fontsize=7,
            va="bottom",
            ha="center",
            alpha=0.7,
        )
    ax.set(xlabel="capacity drained (host-days)", title="Sweep: detection against capacity drained")
    ax.legend(fontsize=7, ncol=2)
    return _save(fig, folder / "sweep.png")
