"""The report's closed-loop section: from the truth manifest's ``closed_loop`` when the run has one, else none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analytics.jobs import build_report
from analytics.jobs.closed_loop import closed_loop
from tests.analytics.jobs.factories import SyntheticFleet

Lake = tuple[Path, dict[str, Any], SyntheticFleet]

# The shape ``fleetpulse loop`` writes (fleetpulse/twin/response.py ``FleetResponse.report``).
ANSWER = {
    "actions_read": 31,
    "repairs": 8,
    "failed_repairs": 2,
    "lemons_cured": {"h007": 1_767_300_000_000, "h003": 1_767_310_000_000},
    "slow_hosts_cured": {"h011": 1_767_320_000_000},
    "retired": ["h005"],
    "out_of_service_at_end": ["h005", "h009"],
    "held_by_operators_at_end": ["h009"],
    "gpu_h_out_of_service": {"drains": 40.0, "repairs": 960.5, "retired": 200.0},
    "gpu_h_out_by_domain": {
        "drains/md1": 40.0,
        "repairs/md0": 600.5,
        "repairs/md1": 360.0,
        "retired/md0": 200.0,
    },
}


def test_the_section_counts_repairs_cures_retirements_and_hours_by_cause_and_domain() -> None:
    loop = closed_loop({"run_id": "r", "closed_loop": ANSWER})
    assert loop is not None
    assert "8 repair(s), 2 did not hold (75% held)" in loop.lines[0]
    assert (
        "2 lemon(s) and 1 slow host(s) cured; 1 host(s) retired; 2 out of service at the end" in loop.lines[1]
    )
    assert loop.lines[2] == "GPU-hours out of service: 1,200.5 (drains 40.0, repairs 960.5, retired 200.0)"
    assert loop.by_cause.rows() == [("drains", 40.0), ("repairs", 960.5), ("retired", 200.0)]
    assert loop.by_domain.rows(named=True) == [
        {
            "maintenance_domain": "md0",
            "drains_gpu_h": 0.0,
            "repairs_gpu_h": 600.5,
            "retired_gpu_h": 200.0,
            "total_gpu_h": 800.5,
        },
        {
            "maintenance_domain": "md1",
            "drains_gpu_h": 40.0,
            "repairs_gpu_h": 360.0,
            "retired_gpu_h": 0.0,
            "total_gpu_h": 400.0,
        },
    ]
    assert loop.hosts.filter(loop.hosts["what"] == "retired")["host_id"].to_list() == ["h005"]
    assert loop.hosts.filter(loop.hosts["host_id"] == "h009")["what"].to_list() == [
        "held by operators at the end",
        "out of service at the end",
    ]
    assert closed_loop({"run_id": "r"}) is None and closed_loop(None) is None  # open loop: no section


def test_the_report_shows_the_closed_loop_only_for_a_closed_loop_run(
    synthetic_lake: Lake, tmp_path: Path
) -> None:
    lake, _, _ = synthetic_lake
    truth = tmp_path / "truth"
    truth.mkdir()
    (truth / "manifest.json").write_text(json.dumps({"run_id": "r", "closed_loop": ANSWER}))
    rep = build_report(lake, tmp_path / "out", truth, jobs=("interruptions",), show_progress=False)
    assert rep.closed_loop is not None
    page, md = rep.html.read_text(), rep.markdown.read_text()
    for text in (page, md):
        assert "Closed loop: the fleet's answer to the planner" in text
        assert (
            "8 repair(s), 2 did not hold" in text and "GPU-hours out of service by maintenance domain" in text
        )
    assert "| md0 | 0 | 600.5 | 200 | 800.5 |" in md and "<td>h005</td><td>retired</td>" in page
    (truth / "manifest.json").write_text(json.dumps({"run_id": "r"}))
    rep = build_report(lake, tmp_path / "open", truth, jobs=("interruptions",), show_progress=False)
    assert rep.closed_loop is None and "Closed loop" not in rep.html.read_text() + rep.markdown.read_text()


# The ``jobs`` the live loop adds (fleetpulse/twin/live_goodput.py, the keys of ``goodput.figures``).
JOBS = {
    "jobs": 2,
    "ettr_mean": 0.75,
    "ettr_gpu_weighted": 0.8,
    "ettr_min": 0.5,
    "goodput": 0.7,
    "useful_gpu_h": 700.0,
    "available_gpu_h": 1000.0,
    "lost_gpu_h": {"failures": 50.0, "deferrals": 0.0, "waiting": 150.0, "repairs": 100.0},
    "idle_gpu_h": 0.0,
    "lost_by_domain": {"md0": {"failures": 50.0, "repairs": 100.0}, "md1": {"waiting": 150.0}},
    "ettr_by_job": {"c-job001": 0.5, "c-job000": 1.0},
    "interruptions": 3,
}


def test_the_section_shows_the_jobs_ettr_goodput_and_training_lost_by_cause() -> None:
    loop = closed_loop({"run_id": "r", "closed_loop": {**ANSWER, "jobs": JOBS}})
    assert loop is not None
    assert loop.lines[3] == (
        "2 job(s), 3 interrupted by a fault: ETTR mean 75.0%, GPU-weighted 80.0%, min 50.0%; "
        "fleet goodput 70.0% (700 useful of 1,000 available GPU-hours)"
    )
    assert loop.lines[4] == "GPU-hours lost to training: 300.0 (failures 50.0, waiting 150.0, repairs 100.0)"
    assert loop.ettr.rows() == [("c-job000", 1.0), ("c-job001", 0.5)]
    assert loop.lost_by_domain["maintenance_domain"].to_list() == ["md0", "md1"]
    without = closed_loop({"run_id": "r", "closed_loop": ANSWER})
    assert without is not None and len(without.lines) == 3 and without.ettr.is_empty()
