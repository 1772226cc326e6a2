"""A closed-loop run's truth says what the fleet did in answer; the score carries and prints it."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from rich.console import Console

from fleetpulse.evaluation.render import render
from fleetpulse.evaluation.report import ScoreReport
from fleetpulse.evaluation.sources import join_segments

ANSWER = {
    "repairs": 5,
    "failed_repairs": 2,
    "lemons_cured": {"h1": 10},
    "slow_hosts_cured": {},
    "retired": [],
    "gpu_h_out_of_service": {"drains": 80.0, "repairs": 960.0},
}


def test_the_last_segment_s_answer_covers_the_run() -> None:
    hosts = pl.DataFrame({"host_id": ["h1", "h2"]})
    faults = pl.DataFrame({"ts": [1]})
    history = {"run_id": "a", "start_ts": 0, "end_ts": 10, "closed_loop": {"repairs": 3}}
    live = {"run_id": "b", "continues_run_id": "a", "start_ts": 10, "end_ts": 20, "closed_loop": ANSWER}
    _, _, manifest = join_segments([(hosts, faults, history), (hosts, faults, live)], [Path("a"), Path("b")])
    assert manifest["closed_loop"] == ANSWER
    _, _, open_loop = join_segments(
        [
            (hosts, faults, {k: v for k, v in history.items() if k != "closed_loop"}),
            (hosts, faults, {k: v for k, v in live.items() if k != "closed_loop"}),
        ],
        [Path("a"), Path("b")],
    )
    assert "closed_loop" not in open_loop


def test_the_score_carries_and_prints_the_fleet_s_answer() -> None:
    report = ScoreReport(detectors={}, period={}, params={}, fleet_answer=ANSWER)
    assert report.to_dict()["fleet_answer"] == ANSWER
    assert "fleet_answer" not in ScoreReport(detectors={}, period={}, params={}).to_dict()
    console = Console(record=True, width=200)
    render(report, console)
    text = console.export_text()
    assert "5 repair(s), 2 did not hold; 1 lemon(s) and 0 slow host(s) cured" in text
    assert "80 GPU-h drains, 960 GPU-h repairs" in text


def test_the_score_prints_the_closed_loop_s_ettr_and_goodput() -> None:
    jobs = {
        "jobs": 8,
        "interruptions": 9,
        "ettr_mean": 0.8415,
        "ettr_min": 0.2432,
        "goodput": 0.8415,
        "lost_gpu_h": {"failures": 123.4, "deferrals": 0.0, "waiting": 7662.9},
    }
    report = ScoreReport(detectors={}, period={}, params={}, fleet_answer={**ANSWER, "jobs": jobs})
    console = Console(record=True, width=400)
    render(report, console)
    text = console.export_text()
    assert "8 job(s), 9 interrupted: ETTR mean 0.842, min 0.243; goodput 0.842" in text
    assert "training lost: 123 GPU-h failures, 7,663 GPU-h waiting" in text


def test_a_run_of_several_segments_shows_each_segment_s_training_and_the_whole_run_s_goodput() -> None:
    """Each segment replays its own window: the score shows them all, not the last one alone, and the run's
    goodput is the segments' useful over their available GPU-hours."""
    hosts = pl.DataFrame({"host_id": ["h1", "h2"]})
    faults = pl.DataFrame({"ts": [1]})
    day = 86_400_000

    def jobs(useful: float, available: float, failures: float) -> dict[str, object]:
        figures = {
            "jobs": 2,
            "interruptions": 1,
            "ettr_mean": 0.9,
            "ettr_min": 0.8,
            "goodput": useful / available,
        }
        return figures | {
            "useful_gpu_h": useful,
            "available_gpu_h": available,
            "lost_gpu_h": {"failures": failures},
        }

    history = {"run_id": "a", "mode": "fast-forward", "start_ts": 0, "end_ts": 30 * day}
    history["closed_loop"] = {"repairs": 3, "jobs": jobs(700.0, 1000.0, 200.0)}
    live = {"run_id": "b", "continues_run_id": "a", "mode": "live", "start_ts": 30 * day, "end_ts": 31 * day}
    live["closed_loop"] = ANSWER | {"jobs": jobs(90.0, 100.0, 5.0)}
    _, _, manifest = join_segments([(hosts, faults, history), (hosts, faults, live)], [Path("a"), Path("b")])
    answer = manifest["closed_loop"]
    assert [s["mode"] for s in answer["jobs_by_segment"]] == ["fast-forward", "live"]
    assert answer["jobs_whole_run"]["goodput"] == round(790 / 1100, 6)
    assert answer["jobs_whole_run"]["lost_gpu_h"] == {"failures": 205.0}
    console = Console(record=True, width=600)
    render(ScoreReport(detectors={}, period={}, params={}, fleet_answer=answer), console)
    text = console.export_text()
    assert "fast-forward 30 d: 2 job(s), 1 interrupted, ETTR mean 0.900, min 0.800, goodput 0.700" in text
    assert "live 1 d:" in text and "goodput 0.900" in text
    assert "whole run: goodput 0.718, training lost: 205 GPU-h failures" in text
