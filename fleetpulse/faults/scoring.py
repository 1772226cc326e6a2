"""Detection quality of one run: ``streams.scoring`` over a findings topic, configured as ``fleetpulse score`` is."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fleetpulse.settings import Settings


def detection_score(settings: Settings, findings_topic: str, truth_dir: Path) -> dict[str, Any]:
    """``{detector: {precision, recall, tp, fp, fn}}`` for the findings in ``findings_topic``."""
    from streams.policy import load_policy
    from streams.scoring import score
    from streams.scoring_cli import (
        critical_kinds_from_policy,
        findings_from_kafka,
        load_truth,
        rules_from_policy,
    )

    policy = load_policy(settings.detect.policy_file)
    hosts, faults, manifest = load_truth(truth_dir)
    window_s = policy.slow_host.window / 1000
    interval = manifest.get("sample_interval_s")
    if isinstance(interval, int | float):  # as `fleetpulse score`: a window is at least one sample
        window_s = max(window_s, float(interval))
    found = findings_from_kafka(settings, findings_topic)
    report = score(
        found,
        hosts,
        faults,
        manifest,
        rules=rules_from_policy(policy),
        slow_k=policy.slow_host.k,
        window_s=window_s,
        critical_kinds=critical_kinds_from_policy(policy),
    )
    return {
        name: {k: getattr(d, k) for k in ("precision", "recall", "tp", "fp", "fn", "detectable")}
        for name, d in report.detectors.items()
    }


def split(scores: dict[str, Any]) -> tuple[dict[str, float | None], dict[str, float | None]]:
    """(precision per detector, recall per detector)."""
    return (
        {k: v["precision"] for k, v in scores.items()},
        {k: v["recall"] for k, v in scores.items()},
    )
