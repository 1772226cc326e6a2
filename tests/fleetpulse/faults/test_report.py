"""The results table in docs/RELIABILITY.md: goals judged, rows merged by scenario, hand-written text kept."""

from __future__ import annotations

from pathlib import Path

from fleetpulse.faults.report import BEGIN, END, cells, write_reliability
from fleetpulse.faults.results import ScenarioResult


def row(name: str, **fields: object) -> ScenarioResult:
    return ScenarioResult(
        scenario=name,
        injected="x",
        command=f"fleetpulse faults run -s {name}",
        ran_at="2026-01-01 00:00 UTC",
        **fields,
    )  # type: ignore[arg-type]


def test_misses_name_each_goal_not_met() -> None:
    r = row(
        "poison",
        dlq_share=0.999,
        findings_extra=2,
        events_lost=0,
        precision={"slow_host": 0.5},
        reference_precision={"slow_host": 1.0},
    )
    assert r.misses() == [
        "extra findings: 2",
        "poison in the DLQ with a reason: 99.90%",
        "slow_host precision 0.500 < reference 1.000",
    ]
    assert row(
        "receiver-down", alerts_lost=0, alerts_wire_duplicates=3, alerts_accepted_twice=0
    ).met  # wire dups: no miss


def test_new_file_gets_table_and_default_explanation(tmp_path: Path) -> None:
    doc = tmp_path / "RELIABILITY.md"
    write_reliability(
        doc, [row("worker-kill", actions_lost=0, actions_broken=0, findings_lost=0, duplicate_rmas=0)]
    )
    text = doc.read_text()
    assert BEGIN in text and END in text and "## How to read this table" in text
    assert (
        "| worker-kill |" in text
        and "every goal met" in text
        and "fleetpulse faults run -s worker-kill" in text
    )


def test_rewrite_keeps_hand_written_text_and_other_rows(tmp_path: Path) -> None:
    doc = tmp_path / "RELIABILITY.md"
    write_reliability(
        doc, [row("worker-kill", actions_lost=3, actions_broken=0), row("poison", dlq_share=1.0)]
    )
    doc.write_text(doc.read_text().replace("## How to read this table", "## Our own notes\n\nkeep me"))
    write_reliability(doc, [row("poison", dlq_share=0.5)])
    text = doc.read_text()
    assert "keep me" in text and "## Our own notes" in text
    assert "| worker-kill |" in text and "50.00%" in text and "100.00%" not in text
    assert "- **worker-kill**: missed — actions lost: 3" in text
    assert text.index("| worker-kill |") < text.index("| poison |")


def test_cells_show_not_measured_as_dash() -> None:
    c = cells(row("receiver-down", alerts_lost=0, alerts_wire_duplicates=2, alerts_accepted_twice=0))
    assert c[2] == "—" and c[7] == "0 / 2 / 0" and c[10] == "yes"
