from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from webhooks import Notification, Outbox, OutboxError

A, B = "http://a.example/hook", "http://b.example/hook"


def note(i: int) -> Notification:
    return Notification(f"alert-{i}", "NewRMA", f'{{"n":{i}}}'.encode())


def test_alerts_survive_a_reopen_with_their_delivery_state(tmp_path: Path) -> None:
    path = tmp_path / "box" / "outbox.sqlite3"
    with Outbox.open(path) as box:
        assert box.add([note(1), note(2)], [A, B], now=100.0) == 2
        box.record_success("alert-1", A, 101.0, 200)
        box.record_failure("alert-1", B, 101.0, "HTTP 503", 503, retry_at=160.0)
    with Outbox.open(path) as box:  # a new process would see exactly this
        assert box.stats() == (2, 3, 1, 0)
        rows = {(r.alert_id, r.url): r for r in box.deliveries()}
        assert rows[("alert-1", A)].state == "delivered"
        assert rows[("alert-1", B)].attempts == 1 and rows[("alert-1", B)].next_attempt_at == 160.0
        assert rows[("alert-1", B)].last_error == "HTTP 503"
        assert [d.alert_id for d in box.due(B, now=150.0, limit=10)] == ["alert-2"]
        assert {d.alert_id for d in box.due(B, now=160.0, limit=10)} == {"alert-1", "alert-2"}
        assert box.due(A, now=150.0, limit=10)[0].body == b'{"n":2}'


def test_outbox_uses_wal_and_syncs_new_alerts_fully(tmp_path: Path) -> None:
    with Outbox.in_dir(tmp_path) as box:
        seen: list[str] = []
        box._conn.set_trace_callback(seen.append)
        box.add([note(1)], [A], 1.0)
        box.record_success("alert-1", A, 2.0, 200)
        box._conn.set_trace_callback(None)
    mode = sqlite3.connect(tmp_path / "outbox.sqlite3").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    # FULL is on for the add (before the Kafka commit) and back to NORMAL before the outcome write
    assert (
        seen.index("PRAGMA synchronous=FULL") < seen.index("COMMIT") < seen.index("PRAGMA synchronous=NORMAL")
    )
    assert seen.count("PRAGMA synchronous=FULL") == 1


def test_adding_the_same_alert_again_is_ignored(tmp_path: Path) -> None:
    with Outbox.in_dir(tmp_path) as box:
        box.add([note(1)], [A], 1.0)
        box.record_success("alert-1", A, 2.0, 200)
        assert box.add([note(1), note(2)], [A], 3.0) == 1  # a re-read batch after a crash before commit
        assert box.stats() == (2, 1, 1, 0)  # alert-1 stays delivered: it is not sent again


def test_due_respects_limit_and_exclusions(tmp_path: Path) -> None:
    with Outbox.in_dir(tmp_path) as box:
        box.add([note(i) for i in range(5)], [A, B], 1.0)
        assert box.urls() == sorted([A, B])
        assert box.due(A, 0.5, limit=10) == []  # not due yet
        got = box.due(A, 1.0, limit=2, exclude={"alert-0"})
        assert [d.alert_id for d in got] == ["alert-1", "alert-2"]


def test_dead_deliveries_are_kept_and_can_be_requeued(tmp_path: Path) -> None:
    with Outbox.in_dir(tmp_path) as box:
        box.add([note(1)], [A], 1.0)
        box.record_failure("alert-1", A, 2.0, "HTTP 404", 404, retry_at=None)
        assert box.stats().dead == 1 and box.depth() == 0 and box.next_due_at() is None
        assert box.requeue_dead(3.0) == 1
        assert box.depth() == 1 and box.deliveries()[0].attempts == 0


def test_prune_forgets_only_fully_delivered_old_alerts(tmp_path: Path) -> None:
    with Outbox.in_dir(tmp_path) as box:
        box.add([note(1), note(2)], [A], 1.0)
        box.add([note(3)], [A], 50.0)
        box.record_success("alert-1", A, 2.0, 200)
        box.record_success("alert-3", A, 51.0, 200)
        assert box.prune(before=10.0) == 1  # alert-2 is still pending, alert-3 is recent
        assert box.stats() == (2, 1, 1, 0)


def test_unwritable_location_raises_outbox_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(OutboxError) as info:
        Outbox.open(blocker / "outbox.sqlite3")
    assert str(blocker) in str(info.value)


def test_the_outbox_files_are_private_to_their_owner(tmp_path: Path) -> None:
    """Rows hold webhook URLs, and URLs may carry tokens."""
    old = tmp_path / "old" / "outbox.sqlite3"
    old.parent.mkdir()
    old.touch(mode=0o644)
    old.chmod(0o644)  # a file written by an earlier version, whatever the umask
    for folder in (tmp_path / "new", old.parent):
        with Outbox.in_dir(folder) as box:
            box.add([], ["http://a.example/hook?token=t"], 0.0)
            files = list(folder.glob("outbox.sqlite3*"))
            assert len(files) >= 2  # the database and its WAL
            for f in files:
                assert f.stat().st_mode & 0o777 == 0o600, f
    assert (tmp_path / "new").stat().st_mode & 0o077 == 0
