from __future__ import annotations

from pathlib import Path

from producers.agent.spool import Entry, Spool


def entry(fault: bool, n: int, size: int = 100) -> Entry:
    return Entry(fault, "XidRaised" if fault else "HostSampled", b"h1", bytes([n % 256]) * size)


def test_state_and_events_commit_together(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "a.db", max_bytes=1 << 20)
    spool.commit([entry(True, 1), entry(False, 2)], {"seq": 2})
    spool.close()
    again = Spool(tmp_path / "a.db", max_bytes=1 << 20)
    assert again.state() == {"seq": 2}
    rows = again.peek(10)
    assert [r.event_type for r in rows] == ["XidRaised", "HostSampled"]
    again.ack(rows[0].id)
    assert len(again) == 1
    assert again.bytes == 100


def test_full_spool_drops_samples_before_faults_and_counts(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "a.db", max_bytes=64 * 1024)
    for i in range(400):
        spool.commit([entry(i % 4 == 0, i, 1000)], {"seq": i})
    assert spool.bytes <= 64 * 1024
    rows = spool.peek(1000)
    faults = [r for r in rows if r.event_type == "XidRaised"]
    assert len(faults) == 65  # 64 KiB hold 65 faults of 1000 bytes once every sample is gone
    dropped = spool.dropped()
    assert dropped["samples"] == 300 and dropped["faults"] == 35
    assert [r.id for r in rows] == sorted(r.id for r in rows)
