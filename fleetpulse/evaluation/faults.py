"""Detection quality of one run: ``fleetpulse.evaluation.detection`` over a findings topic, configured as ``fleetpulse score`` is."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleetpulse.evaluation.sources import findings_from_kafka, load_truth, score_with_policy
from streams.core.policy import load_policy

if TYPE_CHECKING:
    from ground.settings import Settings


def detection_score(settings: Settings, findings_topic: str, truth_dir: Path) -> dict[str, Any]:
    """``{detector: {precision, recall, tp, fp, fn}}`` for the findings in ``findings_topic``."""

    policy = load_policy(settings.detect.policy_file)
    truth = load_truth(truth_dir)
    report = score_with_policy(findings_from_kafka(settings, findings_topic), truth, policy)
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
