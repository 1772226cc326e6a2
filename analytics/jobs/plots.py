"""PNG plots of each job's result (matplotlib, Agg backend): what the report and notebooks show."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

from analytics.jobs.campaign_plots import plot_campaigns
from analytics.jobs.figures import pyplot as _pyplot
from analytics.jobs.figures import save as _save
from analytics.jobs.inferred_faults import EARLY_LIFE_KINDS
from analytics.jobs.result import JobResult
from analytics.jobs.survival import power_law_intensity


def _smooth_rate(frame: pl.DataFrame, width: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Age (days) and hazard per host-year over a rolling window of bins (sparse bins are noisy)."""
    ev = frame["events"].to_numpy().astype(float)
    hd = frame["host_days"].to_numpy()
    k = np.ones(width)
    num, den = np.convolve(ev, k, "same"), np.convolve(hd, k, "same")
    return frame["age_start_d"].to_numpy(), np.where(den > 0, num / np.maximum(den, 1e-12) * 365.25, np.nan)


def plot_early_life(result: JobResult, folder: Path) -> list[Path]:
    plt, out = _pyplot(), []
    t = result.tables
    fits = {r["mode"]: r for r in t["power_law_fit"].to_dicts()} if t["power_law_fit"].height else {}
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for (group,), g in t["bathtub"].partition_by("group", as_dict=True).items():
        x, y = _smooth_rate(g.sort("age_bin"))
        ax.plot(x, y, label=str(group), lw=2 if group == "all" else 1)
    if "early_life_modes" in fits:
        f = fits["early_life_modes"]
        age = np.linspace(1.0, float(t["bathtub"]["age_start_d"].max() or 1.0), 200)  # type: ignore[arg-type]
        ax.plot(
            age,
            power_law_intensity(age, f["shape"], f["scale"]) * 365.25,
            "k--",
            label=f"power-law fit β={f['shape']:.2f} [{f['shape_lo']:.2f}, {f['shape_hi']:.2f}]",
        )
    ax.set(xlabel="host age (days)", ylabel="failures per host-year", title="Bathtub: hazard vs host age")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    out.append(_save(fig, folder / "bathtub.png"))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for (kind,), g in t["hazard_by_mode"].partition_by("kind", as_dict=True).items():
        x, y = _smooth_rate(g.sort("age_bin"))
        ax.plot(x, y, label=str(kind), lw=2 if kind in EARLY_LIFE_KINDS else 0.8)
    ax.set(xlabel="host age (days)", ylabel="failures per host-year", title="Hazard vs age per failure mode")
    ax.set_yscale("log")
    ax.legend(fontsize=7, ncol=2)
    out.append(_save(fig, folder / "hazard_by_mode.png"))
    if t["hazard_by_cohort"].height:
        cohort = (
            t["hazard_by_cohort"]
            .group_by("cohort")
            .agg(
                pl.col("events").sum(),
                pl.col("host_days").sum(),
                pl.col("age_start_d").min().alias("first_age"),
            )
            .sort("cohort")
        )
        fig, ax = plt.subplots(figsize=(8, 4))
        ax.bar(cohort["cohort"], cohort["events"] / cohort["host_days"] * 365.25)
        ax.set(
            xlabel="install month (cohort)",
            ylabel="early-life failures per host-year",
            title="Early-life hazard per cohort (younger cohorts fail more)",
        )
        ax.tick_params(axis="x", rotation=60, labelsize=7)
        out.append(_save(fig, folder / "hazard_by_cohort.png"))
    if t["kaplan_meier"].height:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for (group,), g in t["kaplan_meier"].partition_by("group", as_dict=True).items():
            ax.step(g["time"], g["survival"], where="post", label=str(group))
            ax.fill_between(g["time"], g["lower"], g["upper"], step="post", alpha=0.2)
        ax.set(
            xlabel="host age (days)",
            ylabel="P(no failure yet)",
            title="Kaplan–Meier: time to first failure",
            ylim=(0, 1.02),
        )
        ax.legend()
        out.append(_save(fig, folder / "kaplan_meier.png"))
    return out


def plot_fabric(result: JobResult, folder: Path) -> list[Path]:
    plt, out, t = _pyplot(), [], result.tables
    med = t["host_medians"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, metric in zip(axes, ("step_time_ms", "bus_bw_gbps"), strict=True):
        groups = med.partition_by("fabric", as_dict=True)
        names = sorted(str(k[0]) for k in groups)
        ax.boxplot([groups[(n,)][metric].to_numpy() for n in names], tick_labels=names, showfliers=True)
        ax.set(title=f"per-host median {metric}", ylabel=metric)
    out.append(_save(fig, folder / "fabric_distributions.png"))
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    lr = t["link_rates"]
    axes[0].bar(lr["fabric"], lr["downs_per_host_day"] * 1000, label="downs")
    axes[0].bar(
        lr["fabric"], lr["flaps_per_host_day"] * 1000, bottom=lr["downs_per_host_day"] * 1000, label="flaps"
    )
    axes[0].set(title="link events per 1,000 host-days")
    axes[0].legend()
    si = t["slow_incidence"]
    axes[1].bar(si["fabric"], si["slow_per_1000_hosts"])
    axes[1].set(title="slow hosts per 1,000 hosts")
    if "repair" in t:
        rp = t["repair"]
        axes[2].bar(rp["fabric"], rp["ttr_p50_h"], label="p50")
        axes[2].scatter(rp["fabric"], rp["ttr_p90_h"], color="k", label="p90", zorder=3)
        axes[2].legend()
    axes[2].set(title="time to repair (h)")
    out.append(_save(fig, folder / "fabric_rates.png"))
    return out


def plot_offenders(result: JobResult, folder: Path) -> list[Path]:
    plt = _pyplot()
    share = result.tables["share"].filter(pl.col("kind") != "all")
    fig, ax = plt.subplots(figsize=(9, 4.5))
    scopes = share["scope"].unique().sort().to_list()
    kinds = share["kind"].unique().sort().to_list()
    width = 0.8 / max(len(scopes), 1)
    for i, scope in enumerate(scopes):
        s = {r["kind"]: r["share_of_faults"] for r in share.filter(pl.col("scope") == scope).to_dicts()}
        ax.bar(np.arange(len(kinds)) + i * width, [s.get(k, 0.0) * 100 for k in kinds], width, label=scope)
    ax.set_xticks(np.arange(len(kinds)) + width * (len(scopes) - 1) / 2, kinds, rotation=45, ha="right")
    ax.set(ylabel="% of the class's faults", title="Share of faults from repeat offenders")
    ax.legend(title="scope")
    return [_save(fig, folder / "offender_share.png")]


def plot_maintenance_domain(result: JobResult, folder: Path) -> list[Path]:
    plt, t = _pyplot(), result.tables
    curve, best = t["cost_curve"], result.summary["optimum"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for col, style in (("buffer", ":"), ("interruption", "--"), ("total", "-")):
        ax.plot(curve["domain_hosts"], curve[col], style, label=col)
    ax.axvline(best["size"], color="grey", lw=0.8)
    ax.annotate(
        f"optimum {best['size']} hosts",
        (best["size"], best["cost_hosts"]),
        textcoords="offset points",
        xytext=(8, 12),
    )
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="maintenance-domain size (hosts)",
        ylabel="capacity lost (hosts)",
        title="Maintenance cost vs domain size",
    )
    ax.legend()
    out = [_save(fig, folder / "domain_cost.png")]
    sens = t["sensitivity"]
    lam, rep = sorted(sens["failure_rate_factor"].unique()), sorted(sens["repair_time_factor"].unique())
    grid = np.array(
        [
            [
                sens.filter((pl.col("failure_rate_factor") == a) & (pl.col("repair_time_factor") == b))[
                    "optimal_domain_hosts"
                ].item()
                for b in rep
            ]
            for a in lam
        ]
    )
    fig, ax = plt.subplots(figsize=(5, 4))
    im = ax.imshow(grid, cmap="viridis", origin="lower")
    for (i, j), v in np.ndenumerate(grid):
        ax.text(j, i, str(v), ha="center", va="center", color="w")
    ax.set_xticks(range(len(rep)), [f"×{r:g}" for r in rep])
    ax.set_yticks(range(len(lam)), [f"×{r:g}" for r in lam])
    ax.set(xlabel="repair time", ylabel="failure rate", title="Optimal domain size (hosts)")
    fig.colorbar(im, ax=ax)
    out.append(_save(fig, folder / "domain_sensitivity.png"))
    return out


def plot_interruptions(result: JobResult, folder: Path) -> list[Path]:
    plt, t = _pyplot(), result.tables
    rc = t["root_causes"]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    x = np.arange(rc.height)
    ax.bar(x - 0.2, rc["pct"], 0.4, label="observed")
    ax.bar(x + 0.2, rc["llama3_pct"].fill_null(0), 0.4, label="Llama 3 Table 5")
    ax.set_xticks(x, rc["cause"].to_list(), rotation=45, ha="right")
    ax.set(ylabel="% of interruptions", title="Root causes of job interruptions")
    ax.legend()
    out = [_save(fig, folder / "root_causes.png")]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    proj = t["projected_mttf"]
    ax.plot(proj["size_gpus"], proj["projected_mttf_hours"], "--", label="fleet rate × N (∝ 1/N)")
    meta = proj.filter(pl.col("meta_mttf_hours").is_not_null())
    ax.scatter(meta["size_gpus"], meta["meta_mttf_hours"], marker="x", color="k", label="Meta (published)")
    if "mttf_by_size" in t:
        m = t["mttf_by_size"].filter(pl.col("interruptions") > 0)
        ax.scatter(m["size_gpus"], m["mttf_hours"], label=f"observed ({result.summary['mttf_vs_size']})")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="job size (GPUs)",
        ylabel="job MTTF (hours)",
        title="Job MTTF vs size",
    )
    ax.legend(fontsize=8)
    out.append(_save(fig, folder / "mttf_vs_size.png"))
    return out


def plot_incidents(result: JobResult, folder: Path) -> list[Path]:
    """Causes of the recorded incidents (``unclassified`` in red) and time to repair per cause."""
    plt, t, out = _pyplot(), result.tables, []
    if "causes" in t and t["causes"].height:
        rc = t["causes"]
        fig, ax = plt.subplots(figsize=(9, 4.5))
        colors = ["#c00" if c == "unclassified" else "#1f77b4" for c in rc["cause"].to_list()]
        ax.bar(np.arange(rc.height), rc["pct"], color=colors)
        ax.set_xticks(np.arange(rc.height), rc["cause"].to_list(), rotation=45, ha="right")
        ax.set(ylabel="% of all incidents", title="Causes of recorded incidents")
        out.append(_save(fig, folder / "incident_causes.png"))
    ttr = t["time_to_repair"].filter(pl.col("closed") > 0)
    if ttr.height:
        fig, ax = plt.subplots(figsize=(9, 4.5))
        labels = [f"{c} ({s})" for c, s in ttr.select("cause", "source").iter_rows()]
        y = np.arange(ttr.height)
        ax.barh(y, ttr["ttr_p90_h"], color="#bbb", label="p90")
        ax.barh(y, ttr["ttr_median_h"], label="median")
        ax.set_yticks(y, labels)
        ax.set(xlabel="hours", title="Time to repair per cause (closed outages)")
        ax.legend()
        out.append(_save(fig, folder / "time_to_repair.png"))
    return out


PLOTTERS: dict[str, Callable[[JobResult, Path], list[Path]]] = {
    "early-life": plot_early_life,
    "fabric": plot_fabric,
    "offenders": plot_offenders,
    "maintenance-domain": plot_maintenance_domain,
    "interruptions": plot_interruptions,
    "incidents": plot_incidents,
    "campaigns": plot_campaigns,
}


def plot_job(result: JobResult, folder: Path) -> list[Path]:
    """Write the job's PNGs into ``folder``; return their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    return PLOTTERS[result.name](result, folder)
