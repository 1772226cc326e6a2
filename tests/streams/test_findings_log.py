"""``/findings`` lists the findings raised in the fleet, not the hosts with open work."""

from __future__ import annotations

from streams.core.findings import Finding
from streams.findings_log import FindingsLog


def finding(n: int, host: str = "h1") -> Finding:
    return Finding(
        finding_id=f"fnd-{n}",
        detector="repeat_offender",
        rule="psu_repeat_host",
        scope="host",
        scope_key=host,
        host_id=host,
        cluster="c1",
        ts=1_000 + n,
        error_class="psu_fault",
        count=2,
        window_start=0,
        window_end=1_000 + n,
        recommended_action="diagnostics",
        evidence={"event_ids": "a,b"},
    )


def test_every_finding_once_in_arrival_order_with_what_the_planner_did() -> None:
    log = FindingsLog()
    for f in (finding(1), finding(2, "h2"), finding(1), finding(3)):
        log.apply(f.to_record())
    seen = log.view({"fnd-2": None})
    assert [(x["finding_id"], x["host_id"], x["planned"]) for x in seen] == [
        ("fnd-1", "h1", False),
        ("fnd-2", "h2", True),
        ("fnd-3", "h1", False),
    ]
    assert seen[0]["rule"] == "psu_repeat_host" and seen[0]["evidence"] == {"event_ids": "a,b"}
    assert [x["finding_id"] for x in log.view({}, host_id="h2")] == ["fnd-2"]


def test_the_oldest_are_forgotten_first() -> None:
    log = FindingsLog(max_kept=2)
    for n in range(5):
        log.apply(finding(n).to_record())
    assert [x["finding_id"] for x in log.view({})] == ["fnd-3", "fnd-4"] and len(log) == 2
