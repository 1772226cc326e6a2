"""The durable outbox: alerts are stored here before their Kafka offset is committed.

One SQLite file (WAL, synchronous=FULL). Each alert has a delivery row per URL with its
own state, attempt count and next-attempt time, so one failing receiver never holds up
another, and a restarted dispatcher resumes exactly where the last one stopped.

The methods block (an fsync per new batch; up to the busy timeout while another process, such
as ``fleetpulse outbox --requeue-dead``, holds the write lock). Code on an event loop calls
them through ``off_loop``, on the outbox's one thread, so that the loop (Kafka heartbeats,
deliveries in flight) never waits for the disk and calls on the one connection never overlap.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Literal, NamedTuple, ParamSpec, TypeVar

from webhooks.errors import OutboxError
from webhooks.payload import Notification

DeliveryState = Literal["pending", "delivered", "dead"]

OUTBOX_FILE = "outbox.sqlite3"
BUSY_TIMEOUT_S = 10.0  # how long a call waits for another process's write lock before it fails

P = ParamSpec("P")
T = TypeVar("T")

# New alerts are committed with synchronous=FULL: once Kafka's offset moves on, the outbox is the
# only copy, so it must survive power loss. Delivery outcomes use NORMAL (WAL: safe against a
# process crash); losing one after power loss only means a re-send the receiver drops as a repeat.
_DURABLE, _RELAXED = "FULL", "NORMAL"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS alerts (
    alert_id   TEXT PRIMARY KEY,
    alertname  TEXT NOT NULL,
    body       BLOB NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS deliveries (
    alert_id        TEXT NOT NULL REFERENCES alerts(alert_id) ON DELETE CASCADE,
    url             TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL NOT NULL,
    last_status     INTEGER,
    last_error      TEXT,
    updated_at      REAL NOT NULL,
    PRIMARY KEY (alert_id, url)
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (state, next_attempt_at);
CREATE INDEX IF NOT EXISTS deliveries_due_by_url ON deliveries (url, state, next_attempt_at);
"""


class Delivery(NamedTuple):
    """A due (alert, URL) pair with the body to send."""

    alert_id: str
    url: str
    attempts: int
    body: bytes


class DeliveryRow(NamedTuple):
    alert_id: str
    url: str
    state: DeliveryState
    attempts: int
    next_attempt_at: float
    last_status: int | None
    last_error: str | None


class OutboxStats(NamedTuple):
    alerts: int
    pending: int
    delivered: int
    dead: int


class Outbox:
    """SQLite-backed outbox; open with ``Outbox.open(path)`` (creates the file and its directory)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path
        self._thread: ThreadPoolExecutor | None = None

    async def off_loop(self, method: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run one of this outbox's methods on its own thread and await the result."""
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="outbox")
        call = functools.partial(method, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._thread, call)

    @classmethod
    def open(cls, path: Path | str) -> Outbox:
        path = Path(path)
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            _owner_only(path)
            # One user at a time, but not always the opening thread (a dispatcher built on one
            # thread may run on another); the module is in serialized mode (threadsafety 3).
            conn = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                "PRAGMA synchronous=FULL"
            )  # an acknowledged alert survives power loss, not only a crash
            conn.execute("PRAGMA foreign_keys=ON")
            conn.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise OutboxError(path, f"cannot open: {exc}") from exc
        return cls(conn, path)

    @classmethod
    def in_dir(cls, data_dir: Path | str) -> Outbox:
        return cls.open(Path(data_dir) / OUTBOX_FILE)

    def close(self) -> None:
        if self._thread is not None:
            self._thread.shutdown(wait=True)
            self._thread = None
        self._conn.close()

    def __enter__(self) -> Outbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self, what: str, durable: bool = False) -> Iterator[sqlite3.Connection]:
        try:
            if durable:
                self._conn.execute(f"PRAGMA synchronous={_DURABLE}")
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise OutboxError(self.path, f"{what} failed: {exc}") from exc
        try:
            yield self._conn
            self._conn.execute("COMMIT")
        except BaseException as exc:
            with suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise OutboxError(self.path, f"{what} failed: {exc}") from exc
            raise
        finally:
            if durable:
                with suppress(sqlite3.Error):
                    self._conn.execute(f"PRAGMA synchronous={_RELAXED}")

    def add(self, notifications: Iterable[Notification], urls: Sequence[str], now: float) -> int:
        """Store alerts with a pending delivery per URL, in one transaction; return how many were new.

        An alert already present (same ``alert_id``: a replay, or a batch re-read after a
        crash before the offset commit) is left as it is, so it is never delivered twice.
        """
        added = 0
        with self._tx("add", durable=True) as conn:
            for n in notifications:
                cur = conn.execute(
                    "INSERT OR IGNORE INTO alerts (alert_id, alertname, body, created_at) VALUES (?, ?, ?, ?)",
                    (n.alert_id, n.alertname, n.body, now),
                )
                if cur.rowcount == 0:
                    continue
                added += 1
                conn.executemany(
                    "INSERT INTO deliveries (alert_id, url, state, next_attempt_at, updated_at)"
                    " VALUES (?, ?, 'pending', ?, ?)",
                    [(n.alert_id, url, now, now) for url in urls],
                )
        return added

    def urls(self) -> list[str]:
        """Every URL with deliveries in the outbox (a skip-scan of the index: cheap however many rows)."""
        rows = self._conn.execute(
            "WITH RECURSIVE u(url) AS (SELECT MIN(url) FROM deliveries UNION ALL"
            " SELECT (SELECT MIN(url) FROM deliveries WHERE url > u.url) FROM u WHERE u.url IS NOT NULL)"
            " SELECT url FROM u WHERE url IS NOT NULL"
        ).fetchall()
        return [r[0] for r in rows]

    def due(self, url: str, now: float, limit: int, exclude: Iterable[str] = ()) -> list[Delivery]:
        """Due deliveries to ``url``, oldest first, skipping the alert ids in ``exclude`` (in flight)."""
        skip = set(exclude)
        rows = self._conn.execute(
            "SELECT d.alert_id, d.url, d.attempts, a.body FROM deliveries d JOIN alerts a USING (alert_id)"
            " WHERE d.url = ? AND d.state = 'pending' AND d.next_attempt_at <= ?"
            " ORDER BY d.next_attempt_at LIMIT ?",
            (url, now, limit + len(skip)),
        ).fetchall()
        return [Delivery(*r) for r in rows if r[0] not in skip][:limit]

    def next_due_at(self) -> float | None:
        """When the earliest pending delivery is due (None if nothing is pending)."""
        row = self._conn.execute(
            "SELECT MIN(next_attempt_at) FROM deliveries WHERE state = 'pending'"
        ).fetchone()
        return row[0]

    def record_success(self, alert_id: str, url: str, now: float, status: int) -> None:
        with self._tx("record success") as conn:
            conn.execute(
                "UPDATE deliveries SET state = 'delivered', attempts = attempts + 1, last_status = ?,"
                " last_error = NULL, updated_at = ? WHERE alert_id = ? AND url = ?",
                (status, now, alert_id, url),
            )

    def record_failure(
        self, alert_id: str, url: str, now: float, error: str, status: int | None, retry_at: float | None
    ) -> None:
        """Count a failed attempt; ``retry_at`` None marks the delivery dead (kept, never dropped)."""
        state = "pending" if retry_at is not None else "dead"
        with self._tx("record failure") as conn:
            conn.execute(
                "UPDATE deliveries SET state = ?, attempts = attempts + 1, next_attempt_at = ?,"
                " last_status = ?, last_error = ?, updated_at = ? WHERE alert_id = ? AND url = ?",
                (state, retry_at if retry_at is not None else now, status, error[:500], now, alert_id, url),
            )

    def requeue_dead(self, now: float) -> int:
        """Give every dead delivery a fresh set of attempts; return how many."""
        with self._tx("requeue") as conn:
            cur = conn.execute(
                "UPDATE deliveries SET state = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ?"
                " WHERE state = 'dead'",
                (now, now),
            )
        return cur.rowcount

    def prune(self, before: float) -> int:
        """Forget alerts created before ``before`` whose deliveries all succeeded; return how many."""
        with self._tx("prune") as conn:
            cur = conn.execute(
                "DELETE FROM alerts WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM deliveries d"
                " WHERE d.alert_id = alerts.alert_id AND d.state != 'delivered')",
                (before,),
            )
        return cur.rowcount

    def depth(self) -> int:
        """Pending deliveries (the outbox-depth gauge)."""
        return self._count("pending")

    def dead(self) -> int:
        """Dead deliveries (kept for inspection and ``requeue_dead``)."""
        return self._count("dead")

    def _count(self, state: DeliveryState) -> int:
        row = self._conn.execute("SELECT COUNT(*) FROM deliveries WHERE state = ?", (state,)).fetchone()
        return int(row[0])

    def stats(self) -> OutboxStats:
        counts = dict(self._conn.execute("SELECT state, COUNT(*) FROM deliveries GROUP BY state").fetchall())
        alerts = self._conn.execute("SELECT COUNT(*) FROM alerts").fetchone()[0]
        return OutboxStats(
            alerts, counts.get("pending", 0), counts.get("delivered", 0), counts.get("dead", 0)
        )

    def deliveries(self, alert_id: str | None = None) -> list[DeliveryRow]:
        sql = (
            "SELECT alert_id, url, state, attempts, next_attempt_at, last_status, last_error FROM deliveries"
        )
        args: tuple[str, ...] = ()
        if alert_id is not None:
            sql += " WHERE alert_id = ?"
            args = (alert_id,)
        return [DeliveryRow(*r) for r in self._conn.execute(sql + " ORDER BY alert_id, url", args)]


def _owner_only(path: Path) -> None:
    """Create (or tighten) the outbox file as 0600: its rows hold webhook URLs, which may carry tokens.

    SQLite creates its -wal and -shm files with the database file's mode, so they follow.
    """
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    for existing in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if existing.exists():
            existing.chmod(0o600)
