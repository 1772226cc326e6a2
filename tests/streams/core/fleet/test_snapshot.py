"""Bounded fleet state: forgetting old ids changes no decision, snapshots round-trip or are ignored."""

from __future__ import annotations

import copy
import threading
from pathlib import Path

import pytest

from streams.core.actions import Action
from streams.core.fleet import snapshot as fleet_snapshot
from streams.core.fleet.lifecycle import FleetState, apply
from streams.core.fleet.outages import MAX_DURATIONS, Outages
from streams.core.fleet.retention import forget
from streams.core.fleet.snapshot import (
    FleetSnapshot,
    FleetSnapshots,
    read_snapshot,
    write_atomically,
    write_snapshot,
)
from streams.core.log_mark import LogMark
from streams.core.planning.planner import Planner
from streams.core.policy import load_policy
from tests.streams import factories as f
from tests.streams.core.fleet.test_outages import HOUR, T0, incident

DAY = 24 * HOUR


def planned(n_days: int = 60, hosts: int = 40) -> tuple[Planner, FleetState]:
    """Two months of findings on a 40-host fleet in 4 domains, every repair carried to the end."""
    planner, state = Planner(load_policy()), FleetState()
    for day in range(n_days):
        ts = f.START_TS + day * DAY
        for n in range(day % 3, hosts, 9):
            finding = f.finding(f"h{n}", ts=ts + n, action=("rma", "reboot")[n % 2])
            planner.on_finding(state, finding, f"d{n % 4}", hosts // 4)
        for d in range(4):
            planner.reconcile(state, f"d{d}", hosts // 4, ts + DAY - 1)
    return planner, state


def test_forgetting_old_ids_changes_no_later_decision() -> None:
    planner, state = planned()
    assert state.count > 500
    kept = copy.deepcopy(state)
    gone = forget(state, keep_ids=50, ended_horizon_ms=DAY)
    assert gone > 0 and len(state.applied) == 50 and len(state.findings) <= 50
    assert list(state.applied) == list(kept.applied)[-50:], "the newest ids are the ones kept"
    open_ops = {
        op.op_id for h in state.hosts.values() for op in ([h.current] if h.current else []) + h.waiting
    }
    assert set(state.op_hosts) == open_ops and len(kept.op_hosts) > len(open_ops)
    ts = f.START_TS + 61 * DAY
    newest = next(reversed(kept.findings))
    for finding, domain in (
        (f.finding("h3", ts=ts, action="rma"), "d3"),
        (f.finding("h8", ts=ts + 1, action="reboot"), "d0"),
        (f.finding("h5", ts=ts + 2, fid=newest), "d1"),  # a re-delivery of a finding still remembered
    ):
        assert planner.on_finding(state, finding, domain, 10) == planner.on_finding(kept, finding, domain, 10)
    for d in range(4):
        assert planner.reconcile(state, f"d{d}", 10, ts + 9 * DAY) == planner.reconcile(
            kept, f"d{d}", 10, ts + 9 * DAY
        )
    assert {h: (x.status, x.completed) for h, x in state.hosts.items()} == {
        h: (x.status, x.completed) for h, x in kept.hosts.items()
    }


def test_ended_outages_before_the_horizon_are_forgotten_open_ones_kept() -> None:
    state = FleetState()
    state.outages.apply(incident("old", "h1", T0, T0 + HOUR))
    state.outages.apply(incident("open", "h1", T0, None))
    state.outages.apply(incident("recent", "h2", T0 + 9 * DAY, T0 + 10 * DAY))
    state.clock = T0 + 10 * DAY
    forget(state, keep_ids=10_000, ended_horizon_ms=2 * DAY)
    assert {h: sorted(o) for h, o in state.outages.by_host.items()} == {"h1": ["open"], "h2": ["recent"]}
    assert state.outages.repair_time_ms("hbm3", 1) is not None, "measured repair times stay"


def test_measured_repair_times_are_bounded_and_keep_their_median() -> None:
    o = Outages()
    n = 3 * MAX_DURATIONS
    for i in range(n):
        o.apply(incident(f"i{i}", f"h{i}", T0, T0 + (i * 7919 % n + 1) * 1000))
    kept = o.durations["hbm3"]
    assert MAX_DURATIONS <= len(kept) < 2 * MAX_DURATIONS
    true_median = (n + 1) / 2 * 1000
    assert abs(o.repair_time_ms("hbm3", 1) - true_median) <= 2_000  # type: ignore[operator]


def test_a_snapshot_round_trips_and_a_bad_one_is_ignored(tmp_path: Path) -> None:
    _, state = planned(n_days=10)
    path = tmp_path / "snap"
    marks = {0: LogMark(120, 77), 2: LogMark(9, 3)}
    write_snapshot(path, FleetSnapshot("fleet.actions", marks, state))
    back = read_snapshot(path, "fleet.actions")
    assert back is not None and back.state == state and back.marks == marks
    assert read_snapshot(path, "other.actions") is None
    assert read_snapshot(tmp_path / "absent", "fleet.actions") is None
    path.write_bytes(path.read_bytes()[:-40])  # cut short
    assert read_snapshot(path, "fleet.actions") is None


def test_snapshots_wait_for_enough_records_and_for_acknowledged_actions(tmp_path: Path) -> None:
    busy = [True]
    keeper = FleetSnapshots(
        tmp_path / "snap",
        "fleet.actions",
        every=100,
        keep_ids=10_000,
        ended_horizon_ms=DAY,
        busy=lambda: busy[0],
    )
    state = FleetState()
    for i in range(99):
        apply(state, _suspected(i))
    assert not keeper.progress(state, {0: LogMark(99, 1)})  # 99 < every
    apply(state, _suspected(99))
    assert not keeper.progress(state, {0: LogMark(100, 1)}), "busy: actions not yet acknowledged"
    busy[0] = False
    assert keeper.progress(state, {0: LogMark(100, 1)})
    assert not keeper.progress(state, {0: LogMark(100, 1)})
    keeper.flush()
    assert keeper.written == 1
    loaded, marks = FleetSnapshots(
        tmp_path / "snap", "fleet.actions", every=100, keep_ids=10_000, ended_horizon_ms=DAY
    ).load()
    assert loaded == state and marks == {0: LogMark(100, 1)}


def test_after_a_rewind_the_new_log_is_snapshotted_as_soon_as_it_is_due(tmp_path: Path) -> None:
    old = FleetState()
    for i in range(1_000):
        apply(old, _suspected(i))
    write_snapshot(tmp_path / "snap", FleetSnapshot("fleet.actions", {0: LogMark(1_000, 1)}, old))
    keeper = FleetSnapshots(
        tmp_path / "snap", "fleet.actions", every=100, keep_ids=10_000, ended_horizon_ms=DAY
    )
    assert keeper.load()[0].count == 1_000
    keeper.rewound()  # the saved state was of another log: the worker folds this one from the start
    fresh = FleetState()
    for i in range(150):
        apply(fresh, _suspected(10_000 + i))
    assert keeper.progress(fresh, {0: LogMark(150, 2)})


def test_a_snapshot_is_written_off_the_callers_thread_one_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release, writers = threading.Event(), []

    def slow_write(path: Path, data: bytes) -> int:
        writers.append(threading.current_thread())
        release.wait(10)
        return write_atomically(path, data)

    monkeypatch.setattr(fleet_snapshot, "write_atomically", slow_write)
    keeper = FleetSnapshots(
        tmp_path / "snap", "fleet.actions", every=10, keep_ids=10_000, ended_horizon_ms=DAY
    )
    state = FleetState()
    for i in range(10):
        apply(state, _suspected(i))
    assert keeper.progress(state, {0: LogMark(10, 1)})  # returns while the write waits
    for i in range(10, 30):
        apply(state, _suspected(i))
    assert not keeper.progress(state, {0: LogMark(30, 1)}), "the last snapshot is still being written"
    release.set()
    keeper.flush()
    assert writers and writers[0] is not threading.current_thread()
    loaded, marks = FleetSnapshots(
        tmp_path / "snap", "fleet.actions", every=10, keep_ids=10_000, ended_horizon_ms=DAY
    ).load()
    assert loaded.count == 10 and marks == {0: LogMark(10, 1)}  # the state as it was when progress took it
    assert keeper.progress(state, {0: LogMark(30, 1)})  # due again once written


def _suspected(i: int) -> Action:
    return Action(
        action_id=f"a{i}",
        kind="suspected",
        host_id=f"h{i}",
        cluster="c0",
        domain="d0",
        operation="reboot",
        ts=f.START_TS + i,
        finding_id=f"f{i}",
        rule="r",
    )
