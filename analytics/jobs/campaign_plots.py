"""The campaigns job's plot: per campaign, hosts per version over time above hosts out per domain against
the domain's buffer, with its halts marked (a rollback is drawn on the campaign it rolls back)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from matplotlib.ticker import MaxNLocator

from analytics.jobs.figures import pyplot, save
from analytics.jobs.result import JobResult

DAY_MS = 86_400_000
PLOTTED = 4  # campaigns drawn (the first started); every one is in the tables


def _days(ts: pl.Series, start: int) -> list[float]:
    return [(t - start) / DAY_MS for t in ts.to_list()]


def plot_campaigns(result: JobResult, folder: Path) -> list[Path]:
    t, out = result.tables, list[Path]()
    table = t["campaigns"]
    if not table.height:
        return out
    plt = pyplot()
    buffers = dict(t["buffers"].select("domain", "buffer").iter_rows())
    for camp in table.filter(pl.col("rollback_of").is_null()).head(PLOTTED).to_dicts():
        cid, start = camp["campaign_id"], camp["started_ts"]
        group = table.filter((pl.col("campaign_id") == cid) | (pl.col("rollback_of") == cid))
        ids = group["campaign_id"].to_list()
        moments = [
            t[name].filter(pl.col("campaign_id").is_in(ids))["ts"] for name in ("versions", "out", "steps")
        ]
        end = max([start, *(int(m.max()) for m in moments if m.len())])  # type: ignore[arg-type]
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
        versions = t["versions"].filter(pl.col("campaign_id") == cid)
        for (version,), series in versions.partition_by("version", as_dict=True, maintain_order=True).items():
            x, y = _days(series["ts"], start), series["hosts"].to_list()
            if x[0] > 0:  # none of the hosts ran it when the campaign started
                x, y = [0.0, *x], [0, *y]
            top.step([*x, (end - start) / DAY_MS], [*y, y[-1]], where="post", label=str(version))
        top.set(ylabel="hosts it changed", title=f"Campaign {cid}: {camp['change']}, {camp['state']}")
        top.legend(title="version", fontsize=8)
        spans = t["out"].filter(pl.col("campaign_id").is_in(ids))
        worst = 0
        for (domain,), series in spans.partition_by("domain", as_dict=True, maintain_order=True).items():
            x, y = _days(series["ts"], start), series["out"].to_list()
            line = bottom.step([*x, (end - start) / DAY_MS], [*y, y[-1]], where="post", label=str(domain))
            buffer = buffers.get(domain)
            if buffer is not None:
                bottom.axhline(buffer, ls=":", color=line[0].get_color(), lw=0.8)
                worst = max(worst, buffer)
            worst = max(worst, int(series["out"].max()))  # type: ignore[arg-type]
        steps = t["steps"].filter(pl.col("campaign_id").is_in(ids))
        marks = [(ts, "halt", "#c00") for ts in steps.filter(pl.col("step") == "campaign_halted")["ts"]]
        marks += [(ts, "rollback", "grey") for ts in group.filter(pl.col("rollback_of") == cid)["started_ts"]]
        for ts, what, color in marks:
            for ax in (top, bottom):
                ax.axvline((ts - start) / DAY_MS, color=color, lw=1, ls="-" if what == "halt" else "--")
            at = (
                (ts - start) / DAY_MS,
                0.9 if what == "halt" else 0.78,
            )  # a rollback often starts at its halt
            top.annotate(
                what,
                at,
                xycoords=top.get_xaxis_transform(),
                xytext=(3, 0),
                textcoords="offset points",
                color=color,
            )
        for ax in (top, bottom):
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        bottom.set(
            xlabel="days since the campaign started",
            ylabel="hosts out for the change",
            ylim=(0, worst + 1),
            title="Hosts out per maintenance domain (dotted: its capacity buffer)",
        )
        if spans.height:
            bottom.legend(title="domain", fontsize=8)
        out.append(save(fig, folder / f"campaign_{cid}.png"))
    return out
