"""Polars batch jobs over the lake (early-life, fabric A/B, offenders, domain sizing, interruptions), reports and plots.

Names are imported on first use (PEP 562), so ``fleetpulse --help`` does not pay for polars and scipy.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS: dict[str, str] = {
    "JOBS": "analytics.jobs.runner",
    "run_job": "analytics.jobs.runner",
    "JobResult": "analytics.jobs.result",
    "write_result": "analytics.jobs.result",
    "build_report": "analytics.jobs.report",
    "Report": "analytics.jobs.report",
    "plot_job": "analytics.jobs.plots",
    "truth_checks": "analytics.jobs.truth",
    "classify_faults": "analytics.jobs.inferred_faults",
    "load_faults": "analytics.jobs.inferred_faults",
    "scan": "analytics.jobs.source",
    "latest_inventory": "analytics.jobs.source",
    "fit_power_law": "analytics.jobs.survival",
    "kaplan_meier": "analytics.jobs.survival",
    "PowerLawFit": "analytics.jobs.survival",
    "KaplanMeier": "analytics.jobs.survival",
    "compare": "analytics.jobs.stats",
    "compare_rates": "analytics.jobs.stats",
    "Comparison": "analytics.jobs.stats",
    "DomainModel": "analytics.jobs.domain_sizing",
    "JobError": "analytics.jobs.errors",
    "MissingTableError": "analytics.jobs.errors",
    "InsufficientDataError": "analytics.jobs.errors",
    "UnknownJobError": "analytics.jobs.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'analytics.jobs' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
