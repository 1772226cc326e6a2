"""A record on ``fleet.actions`` timed beyond the shared bound is skipped, never the worker's fleet clock.

Issue 36, finding 4: the fleet clock is the newest event time folded, so one year-3000 record (from
any writer the ACLs let on the log, not only this project's tools) moved it forward for good.
"""

from __future__ import annotations

import time
from pathlib import Path

from schemas import Codec
from schemas.bounds import FUTURE_TOLERANCE_MS
from streams.core.fleet.lifecycle import LOG_EVENT_TYPES
from streams.core.fleet.snapshot import SNAPSHOT_NAME, FleetSnapshots
from streams.fleet_fold import FleetFold
from streams.operator_events import operator_record, parse_step
from streams.tailer import LogTailer

NOW_MS = int(time.time() * 1000)
CODEC = Codec()


def step_at(ts: int, ticket: str) -> bytes:
    step = parse_step(
        {"host_id": "node-1", "kind": "out_of_service", "actor": "dc-tech", "ticket_id": ticket}, NOW_MS
    )
    return CODEC.encode({**operator_record(step, cluster="c0", now_ms=NOW_MS), "ts": ts})


def test_a_record_beyond_a_day_ahead_is_skipped_and_the_clock_stays(tmp_path: Path) -> None:
    snapshots = FleetSnapshots(
        tmp_path / SNAPSHOT_NAME, "fleet.actions", every=1000, keep_ids=1000, ended_horizon_ms=86_400_000
    )
    worker = FleetFold(snapshots, clock=lambda: NOW_MS / 1000)
    tailer = LogTailer(
        "fleet.actions",
        {},
        worker.apply,
        CODEC,
        event_type=LOG_EVENT_TYPES,
    )
    tailer.feed(step_at(NOW_MS - 60_000, "T-1"))
    assert worker.fleet.clock == NOW_MS - 60_000
    tailer.feed(step_at(32_503_680_000_000, "T-2"))  # year 3000
    tailer.feed(step_at(NOW_MS + FUTURE_TOLERANCE_MS + 60_000, "T-3"))
    assert worker.fleet.clock == NOW_MS - 60_000
    assert (tailer.records, tailer.rejected) == (1, 2)
    tailer.feed(step_at(NOW_MS + 60_000, "T-4"))  # within the tolerance every way in allows
    assert worker.fleet.clock == NOW_MS + 60_000
