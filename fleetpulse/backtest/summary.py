"""The backtest's answer on the terminal: one line per policy variant (the report has the rest)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from fleetpulse.backtest.run import VariantResult


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def summary_table(results: Sequence[VariantResult]) -> Table:
    """Findings against the live run, capacity drained, and precision / recall when a truth was given."""
    scored = all(r.score is not None for r in results)
    params = next((r.score.params for r in results if r.score), {})
    against = [
        f"{what} P / R against the {d}"
        for what, key in (("repeat", "lemon_truth"), ("slow", "slow_truth"))
        if (d := params.get(key, {}).get("definition"))
    ]
    caption = "\n".join(against) if scored and against else None
    table = Table(title="backtest", caption=caption)
    columns = ["variant", "findings", "same as live", "appear", "disappear", "host-days drained"]
    columns += ["peak drained", "halts", "RMAs"]
    if scored:
        columns += ["repeat P / R", "slow P / R"]
    for name in columns:
        table.add_column(name, justify="left" if name == "variant" else "right")
    for r in results:
        c, cap = r.counts(), r.capacity
        row = [r.variant.label, str(len(r.replay.findings)), str(c["both"]), str(c["backtest only"])]
        row += [str(c["live only"]), f"{cap.drained_host_days:.2f}", str(cap.peak_drained)]
        row += [str(cap.trains_halted), str(cap.rmas_opened)]
        if r.score is not None:
            for name in ("repeat_offender", "slow_host"):
                d = r.score.detectors[name]
                row.append(f"{_ratio(d.precision)} / {_ratio(d.recall)}")
        table.add_row(*row)
    return table
