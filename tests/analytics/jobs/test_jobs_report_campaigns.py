"""The report's campaigns section: each campaign's row, plot and halt evidence; "no campaign" when none."""

from __future__ import annotations

import html
from pathlib import Path

from analytics.jobs import build_report
from fleetpulse.trains import Twin
from ground.halt_evidence import ROLLBACK
from streams.core.policy import load_policy
from tests.analytics.jobs.campaign_lake import halted_and_rolled_back, write_twin_lake
from tests.fleetpulse.trains.test_twin import DAY, SMALL, VERSIONS


def _section(page: str) -> str:
    start = page.index("<h2>campaigns</h2>")
    return page[start : page.index("<h2>", start + 1)]


def test_the_section_shows_each_campaign_its_numbers_and_its_halt(tmp_path: Path) -> None:
    twin, cid, people = halted_and_rolled_back()
    write_twin_lake(tmp_path / "lake", twin, people)
    rep = build_report(tmp_path / "lake", tmp_path / "out", jobs=("campaigns",), show_progress=False)
    assert not rep.skipped
    camp = twin.state.trains.campaigns[cid]
    back = next(c for c in twin.state.trains.campaigns.values() if c.rollback_of == cid)
    section = _section(rep.html.read_text())
    assert "2 campaign(s) (1 aborted, 1 completed), 1 halt(s)" in section
    assert "at most 1 domain(s) out for a change at once; no domain past its buffer" in section
    assert section.count("data:image/png;base64,") == 1  # the campaign, its rollback drawn on it
    rows = section[section.index("<h3>campaigns</h3>") : section.index("<h3>halts</h3>")]
    done = sum(v.done_ts is not None for v in camp.visits.values())
    cells = [cid, "driver=560.35", "aborted", str(done), str(len(twin.hosts))]
    assert all(f"<td>{c}</td>" in rows for c in cells), rows
    assert f"<td>{back.campaign_id}</td>" in rows and "<td>completed</td>" in rows
    assert html.escape(camp.halted_reason.split(ROLLBACK)[0]) in rows
    halts = section[section.index("<h3>halts</h3>") :]
    xid = camp.halted_reason.split(": ")[0]
    assert f"<td>{xid}</td>" in halts and "<td>rate ratio</td>" in halts
    md = rep.markdown.read_text()
    assert "## campaigns" in md and f"campaign_{cid}.png" in md


def test_a_lake_without_campaigns_says_no_campaign(tmp_path: Path) -> None:
    twin = Twin(load_policy(), SMALL, VERSIONS, seed=5)
    twin.run(twin.now + DAY)
    write_twin_lake(tmp_path / "lake", twin, [])
    rep = build_report(tmp_path / "lake", tmp_path / "out", jobs=("campaigns",), show_progress=False)
    section = _section(rep.html.read_text())
    assert not rep.skipped and "<li>no campaign in the lake</li>" in section
    assert "data:image/png" not in section and "<td>" not in section.split("<h3>halts</h3>")[0]
