"""The manifest of a simulator run: its settings, the resolved failure model and what it sent."""

from __future__ import annotations

from collections import Counter
from typing import Any

from producers.config import FleetConfig
from producers.fleet import DAY_MS


def run_manifest(
    config: FleetConfig,
    mode: str,
    speed: float,
    seed: int,
    run_id: str,
    start_ts: int,
    end_ts: int,
    interval_s: int,
    fleet: Any,
    cal: Any,
    faults: Any,
    dropped: int,
    counts: dict[str, int],
    by_topic: dict[str, int],
    *,
    interrupted: bool,
    late: Any,
) -> dict[str, Any]:
    """What a run was and what it sent, as written beside its truth (``manifest.json``)."""
    phases = Counter(faults.phase.tolist())
    mix_total = sum(config.failures.cause_mix.values())
    return {
        "run_id": run_id,
        "seed": seed,
        "preset": config.name,
        "mode": mode,
        "days": (end_ts - start_ts) / DAY_MS,
        "start_ts": start_ts,
        "end_ts": end_ts,
        "sample_interval_s": interval_s,
        "speed": speed if mode == "live" else None,
        "interrupted": interrupted,
        "n_hosts": fleet.n_hosts,
        "n_gpus": fleet.n_hosts * config.gpus_per_host,
        "hosts_installed_by_end": int((fleet.install_ts < end_ts).sum()),
        "hosts_installed_during_run": int(
            ((fleet.install_ts > start_ts) & (fleet.install_ts < end_ts)).sum()
        ),
        "fleet": config.model_dump(mode="json"),
        "resolved": {
            "weibull_shape": cal.weibull_shape,
            "weibull_scale_days": cal.weibull_scale_days,
            "weibull_scale_calibrated": config.failures.weibull_scale_days is None,
            "interruptions_per_host_day": cal.rate_per_host_day,
            "expected_interruptions": cal.expected_interruptions,
            "cause_mix": {c: w / mix_total for c, w in sorted(config.failures.cause_mix.items())},
            "modes": [
                {"cause": m.cause, "kind": m.kind, "share": m.share, "early_life": m.early} for m in cal.modes
            ],
            "early_life_share": cal.early_share,
            "link_fault_weight": cal.link_weight,
            "lemon_fraction": config.lemons.fraction,
            "lemons": sum(k is not None for k in fleet.lemon_kind),
            "slow_fraction": config.slow.fraction,
            "slow_hosts": int((fleet.slow_factor > 0).sum()),
            "late_fraction": late.late_fraction,
            "late_max_delay_s": late.late_max_delay_s,
        },
        "faults": {"total": len(faults), "by_phase": dict(sorted(phases.items())), "guard_dropped": dropped},
        "counts": counts,
        "counts_by_topic": by_topic,
        "total_events": sum(counts.values()),
    }
