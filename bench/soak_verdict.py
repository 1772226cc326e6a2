"""The soak's judgement, pure: memory against the 10-minute mark, lag bounded or growing, and how it is printed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

MEMORY_LIMIT = 1.10
WARMUP_MIN = 10.0
LAG_TOLERANCE = 0.01
LAG_FLOOR = 1_000
BAND = 5  # samples: a part whose RSS swings with its work (a flush) is judged on the band it moves in

RULES = (
    "memory: each part's RSS (its whole process tree) at the end is at most 1.10× its RSS at the reference mark "
    "(10 minutes; half the run when the run is shorter than 20 minutes). Lag bounded: over the last half of the "
    "run, the least-squares trend of a group's lag grows by less than 1 % of the records written to its topics in "
    "that half (the group keeps up with at least 99 % of its input) or by fewer than 1,000 records (a quiet "
    "topic); a group whose lag is unknown in that half, or with fewer than three samples in it, is not bounded. "
    "Band (shown beside, for parts whose RSS swings with their work): the lowest and the highest RSS of the five "
    "samples around the mark against those of the last five; within when neither rose by more than 10 %."
)


def reference_minute(minutes: float, warmup: float = WARMUP_MIN) -> float:
    return warmup if minutes >= 2 * warmup else minutes / 2


def slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of ``ys`` over ``xs`` (0 for fewer than two distinct ``xs``)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    return 0.0 if sxx == 0 else sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx


def band(samples: Sequence[Mapping[str, Any]], name: str) -> tuple[float, float]:
    """Lowest and highest RSS of ``name`` over ``samples`` (0s when it was never sampled)."""
    rss = [s["parts"][name]["rss_mb"] for s in samples if name in s["parts"]]
    return (min(rss), max(rss)) if rss else (0.0, 0.0)


def memory_rows(samples: Sequence[Mapping[str, Any]], ref_min: float) -> list[dict[str, Any]]:
    """Per part: RSS and open files at the reference mark and at the last sample, their ratio, and the band's."""
    i = next((k for k, s in enumerate(samples) if s["t_min"] >= ref_min), len(samples) - 1)
    ref, end = samples[i], samples[-1]
    around = samples[max(0, i - BAND // 2) : i + BAND // 2 + 1]
    rows = []
    for name, at_end in end["parts"].items():
        at_ref = ref["parts"].get(name, {"rss_mb": 0.0, "fds": 0})
        ratio = at_end["rss_mb"] / at_ref["rss_mb"] if at_ref["rss_mb"] else None
        peak = max(s["parts"].get(name, {}).get("rss_mb", 0.0) for s in samples)
        span_s = (end["t_min"] - ref["t_min"]) * 60
        cpu = at_end.get("cpu_s", 0.0) - at_ref.get("cpu_s", 0.0)
        queued = at_end.get("queued_s", 0.0) - at_ref.get(
            "queued_s", 0.0
        )  # absent in soaks before it was sampled
        (lo_ref, hi_ref), (lo_end, hi_end) = band(around, name), band(samples[-BAND:], name)
        floor = lo_end / lo_ref if lo_ref else None
        ceiling = hi_end / hi_ref if hi_ref else None
        rows.append(
            {
                "floor_ratio": floor,
                "ceiling_ratio": ceiling,
                "band_within": floor is not None
                and ceiling is not None
                and max(floor, ceiling) <= MEMORY_LIMIT,
                "part": name,
                "ref_t_min": ref["t_min"],
                "rss_ref_mb": at_ref["rss_mb"],
                "rss_end_mb": at_end["rss_mb"],
                "rss_peak_mb": peak,
                "ratio": ratio,
                "fds_ref": at_ref["fds"],
                "fds_end": at_end["fds"],
                "cores": cpu / span_s if span_s > 0 else None,
                "queued": queued / span_s if span_s > 0 else None,  # threads waiting for a core, in cores
                "within": ratio is not None and ratio <= MEMORY_LIMIT,
            }
        )
    return rows


def lag_row(group: str, samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One group's lag behaviour over the run and the bounded test over its last half."""
    points = [(s["t_min"], s["lags"][group]) for s in samples if group in s["lags"]]
    half = points[-1][0] / 2
    window = [(t, g) for t, g in points if t >= half]
    known = [(t, g["lag"]) for t, g in window if g["lag"] is not None]
    row: dict[str, Any] = {
        "group": group,
        "max_first_half": max(
            (g["lag"] for t, g in points if t < half and g["lag"] is not None), default=None
        ),
        "max_last_half": max((lag for _, lag in known), default=None),
        "last": points[-1][1]["lag"],
        "trend_per_min": None,
        "input_per_min": None,
        "bounded": False,
    }
    if len(known) < 3 or len(known) < len(window):
        return row
    span = known[-1][0] - known[0][0]
    written = window[-1][1]["produced"] - window[0][1]["produced"]
    trend = slope([t for t, _ in known], [float(lag) for _, lag in known])
    row["trend_per_min"] = trend
    row["input_per_min"] = written / span if span else 0.0
    row["bounded"] = trend * span < max(LAG_TOLERANCE * written, LAG_FLOOR)
    return row


def judge(samples: Sequence[Mapping[str, Any]], minutes: float) -> dict[str, Any]:
    ref_min = reference_minute(minutes)
    memory = memory_rows(samples, ref_min)
    groups = list(samples[-1]["lags"])
    lags = [lag_row(g, samples) for g in groups]
    memory_ok = all(r["within"] for r in memory)
    band_ok = all(r["band_within"] for r in memory)
    lag_ok = all(r["bounded"] for r in lags)
    return {
        "reference_min": ref_min,
        "memory": memory,
        "lags": lags,
        "memory_ok": memory_ok,
        "band_ok": band_ok,
        "lag_ok": lag_ok,
        "met": memory_ok and lag_ok,
    }


def _n(value: Any, spec: str = ",.0f") -> str:
    return "n/a" if value is None else f"{value:{spec}}"


def minute_table(sample: Mapping[str, Any]) -> str:
    lines = [
        f"--- {sample['t_min']:.0f} min  load {sample['load'][0]:.2f} {sample['load'][1]:.2f} {sample['load'][2]:.2f}"
    ]
    lines += [
        f"  {name:<16} RSS {p['rss_mb']:8.1f} MB  fds {p['fds']:5d}  CPU {p['cpu_s']:8.1f} s  "
        f"waiting {p.get('queued_s', 0.0):8.1f} s  pids {len(p['pids'])}"
        for name, p in sample["parts"].items()
    ]
    lines += [
        f"  lag {group:<40} {_n(g['lag']):>12}  of {g['produced']:,}" for group, g in sample["lags"].items()
    ]
    return "\n".join(lines)


def markdown(meta: Mapping[str, Any], verdict: Mapping[str, Any]) -> str:
    ref = verdict["reference_min"]
    out = [
        f"# Whole-pipeline soak — {meta['preset']} at {meta['speed']:g}× for {meta['minutes']:g} min",
        "",
        f"Command: `{meta['command']}`  ",
        f"Started {meta['started_utc']} on {meta['host']} ({meta['cpus']} CPUs); "
        f"load average over the run {meta['load_min']:.2f}–{meta['load_max']:.2f} (mean {meta['load_mean']:.2f}).",
        "",
        f"| part | RSS at {ref:g} min | RSS at end | end / ref | peak | fds at {ref:g} min | fds at end "
        "| CPU cores used after the mark | cores' worth of waiting for a CPU | within 10 % | band: floor, ceiling "
        "end / ref | band within 10 % |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in verdict["memory"]:
        out.append(
            f"| {r['part']} | {r['rss_ref_mb']:.0f} MB | {r['rss_end_mb']:.0f} MB | {_n(r['ratio'], '.3f')} | "
            f"{r['rss_peak_mb']:.0f} MB | {r['fds_ref']} | {r['fds_end']} | {_n(r['cores'], '.2f')} | "
            f"{_n(r['queued'], '.2f')} | {'yes' if r['within'] else 'no'} | "
            f"{_n(r.get('floor_ratio'), '.3f')}, {_n(r.get('ceiling_ratio'), '.3f')} | "
            f"{'yes' if r.get('band_within') else 'no'} |"
        )
    out += [
        "",
        "| consumer group | max lag, first half | max lag, last half | last | trend, last half (records/min) "
        "| input (records/min) | bounded |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in verdict["lags"]:
        out.append(
            f"| {r['group']} | {_n(r['max_first_half'])} | {_n(r['max_last_half'])} | {_n(r['last'])} | "
            f"{_n(r['trend_per_min'], '+,.0f')} | {_n(r['input_per_min'])} | {'yes' if r['bounded'] else 'no'} |"
        )
    out += [
        "",
        f"Verdict: memory within 10 % of the {ref:g}-minute mark: **{'met' if verdict['memory_ok'] else 'missed'}**; "
        f"lag bounded: **{'met' if verdict['lag_ok'] else 'missed'}**; memory band within 10 %: "
        f"**{'met' if verdict.get('band_ok') else 'missed'}**.",
        "",
        f"Rules: {RULES}",
    ]
    return "\n".join(out) + "\n"
