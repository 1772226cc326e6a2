"""The demo's closed-loop figures: pages per paged truth incident, by the alert that opened each page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from fleetpulse.demo_loop import loop_figures


def alert(
    host: str, name: str, group: str, ts: int, rule: str = "r", status: str = "firing"
) -> dict[str, Any]:
    payload = {
        "alert_id": f"{name}-{host}-{ts}",
        "alertname": name,
        "status": status,
        "labels": {"group_key": group, "rule": rule},
    }
    return {"host_id": host, "ts": ts, "payload": payload}


def test_pages_count_alert_groups_on_truth_hosts(tmp_path: Path) -> None:
    truth = tmp_path / "truth"
    truth.mkdir()
    pl.DataFrame(
        {
            "host_id": ["a", "b", "c", "d"],
            "lemon_kind": ["dram_uce", "sram_uce", None, None],
            "slow_cause": [None, None, "thermal_throttling", None],
        }
    ).write_parquet(truth / "hosts.parquet")
    findings = [{"host_id": h} for h in ("a", "a", "b", "c", "d")]
    alerts = [
        alert("a", "NewRMA", "a/f1", 1),
        alert("a", "NewRMA", "a/f1", 2),  # the same group: one page
        alert("a", "NewRMA", "a/f1", 3, status="resolved"),
        alert("b", "NewRMA", "b/f2", 1),
        alert("b", "RepeatAfterRepair", "b/f3", 9),  # the repair did not hold: a new page
        alert("c", "SlowHost", "c/f4", 4, rule="slow_host"),
        alert("d", "SlowHost", "d/f5", 4, rule="slow_host"),  # not in the truth
        alert("-", "TrainHalted", "x", 5),
    ]
    out = loop_figures([truth], findings, alerts)
    assert out["incidents_paged"] == 3 and out["pages_on_incidents"] == 4
    assert out["pages_per_true_incident"] == round(4 / 3, 3) and out["max_pages_per_incident"] == 2
    assert out["pages_by_opening_alert"] == {"NewRMA/r": 2, "RepeatAfterRepair/r": 1, "SlowHost/slow_host": 1}
    assert out["pages_elsewhere"] == 1
    assert (out["findings_per_lemon_median"], out["findings_per_lemon_max"]) == (1.5, 2)


def test_a_page_after_a_repair_that_did_not_cure_is_a_new_incident(tmp_path: Path) -> None:
    """The fleet's truth splits a host's pages: ``a`` came back still faulty at 5 (the manifest's relapses),
    so its page at 9 is a second incident's; ``c`` was paged twice with no failed repair between."""
    truth = tmp_path / "truth"
    truth.mkdir()
    pl.DataFrame(
        {"host_id": ["a", "c"], "lemon_kind": ["dram_uce", None], "slow_cause": [None, "thermal_throttling"]}
    ).write_parquet(truth / "hosts.parquet")
    (truth / "manifest.json").write_text(json.dumps({"closed_loop": {"relapses": {"a": [5]}}}))
    alerts = [
        alert("a", "NewRMA", "a/f1", 1),
        alert("a", "RepeatAfterRepair", "a/f2", 9),
        alert("c", "SlowHost", "c/f3", 1, rule="slow_host"),
        alert("c", "SlowHost", "c/f4", 7, rule="slow_host"),
    ]
    out = loop_figures([truth], [], alerts)
    assert (out["incidents_paged"], out["relapses_paged"], out["hosts_paged"], out["pages_on_incidents"]) == (
        3,
        1,
        2,
        4,
    )
    assert out["pages_per_true_incident"] == round(4 / 3, 3) and out["pages_per_paged_host"] == 2.0
