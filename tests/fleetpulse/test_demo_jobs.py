"""The demo summary's training figures: each closed-loop segment's ETTR and goodput, the history's losses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from fleetpulse.demo_loop import segment_jobs
from fleetpulse.demo_summary import _loop_rows

DAY = 86_400_000
JOBS = {
    "jobs": 4,
    "ettr_mean": 0.9,
    "ettr_gpu_weighted": 0.92,
    "ettr_min": 0.8,
    "goodput": 0.85,
    "useful_gpu_h": 850.0,
    "available_gpu_h": 1000.0,
    "lost_gpu_h": {"failures": 100.0, "deferrals": 0.0, "waiting": 50.0},
    "interruptions": 7,
}


def test_the_summary_shows_each_segment_s_ettr_goodput_and_the_history_s_losses(tmp_path: Path) -> None:
    segments = []
    for name, days, figures in (
        ("history", 30, JOBS),
        ("live", 0.5, {**JOBS, "goodput": 0.5}),
        ("open", 1, None),
    ):
        folder = tmp_path / name
        folder.mkdir()
        loop = {"repairs": 1, "jobs": figures} if figures else {}
        manifest = {"start_ts": 0, "end_ts": int(days * DAY), "closed_loop": loop}
        (folder / "manifest.json").write_text(json.dumps(manifest))
        segments.append(folder)
    jobs: list[dict[str, Any]] = segment_jobs(segments)
    assert [j["days"] for j in jobs] == [30, 0.5]  # an open-loop segment has no jobs
    table = Table()
    table.add_column("what")
    table.add_column("count")
    loop = {"incidents_paged": 0, "true_lemons": 0, "true_slow_hosts": 0, "lemons_found": 0}
    _loop_rows(table, {"loop": loop, "closed_loop": True, "score": {}, "jobs": jobs})
    console = Console(record=True, width=200)
    console.print(table)
    text = console.export_text()
    assert "history (30 days): ETTR of 4 job(s), mean / GPU-weighted / min │ 90.0% / 92.0% / 80.0%" in text
    assert "fleet goodput (850 useful of 1,000 GPU-h)" in text and "85.0%" in text and "50.0%" in text
    assert text.count("GPU-hours training lost: failures") == 1  # the history's, not the live phase's
    assert "GPU-hours training lost: deferrals" not in text
