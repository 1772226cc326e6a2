"""The agent's on-disk spool and state, in one SQLite file, written in one transaction per round.

Events and the positions that produced them (kmsg sequence, counter baselines, agent_seq) commit
together, so a kill -9 never loses an event nor emits one twice under another id. The spool is
bounded: samples are dropped before fault events, and every drop is counted. sqlite3 (stdlib)
rather than persist-queue: the state must commit atomically with the queued events, which a
separate queue file cannot do.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, NamedTuple

from producers.agent.errors import SpoolError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS spool (id INTEGER PRIMARY KEY AUTOINCREMENT, fault INTEGER NOT NULL,
                                  event_type TEXT NOT NULL, key BLOB NOT NULL, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
"""


class Spooled(NamedTuple):
    id: int
    event_type: str
    key: bytes
    value: bytes


class Entry(NamedTuple):
    fault: bool
    event_type: str
    key: bytes
    value: bytes


class Spool:
    def __init__(self, path: Path, max_bytes: int) -> None:
        self.path, self.max_bytes = path, max_bytes
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")  # WAL+NORMAL survives a killed process
            self.db.executescript(_SCHEMA)
            row = self.db.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM spool").fetchone()
        except (sqlite3.Error, OSError) as exc:
            raise SpoolError(str(exc), path=str(path)) from exc
        self.bytes = int(row[0])
        self._lock = threading.Lock()

    def _meta(self, key: str, default: str) -> str:
        row = self.db.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        return str(row[0]) if row else default

    def state(self) -> dict[str, Any]:
        with self._lock:
            return dict(json.loads(self._meta("state", "{}")))

    def dropped(self) -> dict[str, int]:
        with self._lock:
            return {
                "samples": int(self._meta("dropped_samples", "0")),
                "faults": int(self._meta("dropped_faults", "0")),
            }

    def commit(self, entries: list[Entry], state: dict[str, Any]) -> None:
        """Queue ``entries`` and save ``state`` atomically; then enforce the size bound."""
        with self._lock:
            try:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.executemany(
                    "INSERT INTO spool (fault, event_type, key, value) VALUES (?, ?, ?, ?)",
                    [(int(e.fault), e.event_type, e.key, e.value) for e in entries],
                )
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('state', ?)", (json.dumps(state),))
                self.bytes += sum(len(e.value) for e in entries)
                if self.bytes > self.max_bytes:
                    self._shrink()
                self.db.execute("COMMIT")
            except sqlite3.Error as exc:
                self.db.execute("ROLLBACK")
                raise SpoolError(str(exc), path=str(self.path)) from exc

    def _shrink(self) -> None:
        for fault, counter in ((0, "dropped_samples"), (1, "dropped_faults")):
            while self.bytes > self.max_bytes:
                rows = self.db.execute(
                    "SELECT id, LENGTH(value) FROM spool WHERE fault = ? ORDER BY id LIMIT 256", (fault,)
                ).fetchall()
                if not rows:
                    break
                freed, n, last = 0, 0, rows[0][0]
                for rid, size in rows:
                    freed, n, last = freed + size, n + 1, rid
                    if self.bytes - freed <= self.max_bytes:
                        break
                self.db.execute("DELETE FROM spool WHERE fault = ? AND id <= ?", (fault, last))
                self.bytes -= freed
                total = int(self._meta(counter, "0")) + n
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (counter, str(total)))

    def peek(self, limit: int) -> list[Spooled]:
        with self._lock:
            rows = self.db.execute(
                "SELECT id, event_type, key, value FROM spool ORDER BY id LIMIT ?", (limit,)
            )
            return [Spooled(int(r[0]), str(r[1]), bytes(r[2]), bytes(r[3])) for r in rows.fetchall()]

    def ack(self, up_to_id: int) -> None:
        """Delete everything up to ``up_to_id`` (delivered)."""
        with self._lock:
            row = self.db.execute(
                "SELECT COALESCE(SUM(LENGTH(value)), 0) FROM spool WHERE id <= ?", (up_to_id,)
            )
            self.bytes -= int(row.fetchone()[0])
            self.db.execute("DELETE FROM spool WHERE id <= ?", (up_to_id,))

    def __len__(self) -> int:
        with self._lock:
            return int(self.db.execute("SELECT COUNT(*) FROM spool").fetchone()[0])

    def close(self) -> None:
        self.db.close()
