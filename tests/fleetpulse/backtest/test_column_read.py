"""The lake's history decoded column by column is the per-row decoding, record for record, and replays the same;
a replay runs with the garbage collector's young generation collected seldom.

The per-row path (Arrow rows, each unflattened, then sorted in Python) is kept here as the reference.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from analytics.lake import Lake
from fleetpulse.backtest import events
from fleetpulse.backtest.events import (
    ACTION_TABLE,
    FINDING_TABLE,
    INVENTORY_TABLE,
    OUTAGE_TABLES,
    REPLAYED_TABLES,
    History,
    Period,
    Record,
    in_order,
    read_history,
    read_tables,
)
from fleetpulse.backtest.replay import YOUNG_THRESHOLD, Replay, replay
from schemas.events import ENVELOPE_FIELDS
from streams.core.policy import load_policy
from tests.fleetpulse.backtest.simulated import simulated_lake

TABLES = (*REPLAYED_TABLES, INVENTORY_TABLE, *OUTAGE_TABLES, FINDING_TABLE, ACTION_TABLE)


def unflatten(row: Mapping[str, Any]) -> Record:
    record = {k: row[k] for k in ENVELOPE_FIELDS}
    record["payload"] = {k: v for k, v in row.items() if k not in record and k != "date"}
    return record


def per_row(lake: Lake, tables: Sequence[str], period: Period) -> list[Record]:
    rows = (
        unflatten(row)
        for table in tables
        for row in lake.scan(table).filter(period.expr()).collect().to_arrow().to_pylist()
    )
    return in_order(rows)


def shape(records: list[Record]) -> list[tuple[list[str], list[str]]]:
    return [(list(r), list(r["payload"])) for r in records]


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Lake:
    return Lake(simulated_lake(tmp_path_factory.mktemp("lake"), seed=4057, days=4))


def test_every_table_decodes_as_the_per_row_path_does(lake: Lake) -> None:
    ours, theirs = read_tables(lake, TABLES, Period()), per_row(lake, TABLES, Period())
    assert len(ours) > 400 and {r["event_type"] for r in ours} >= {"HostSampled", "HostInventoried"}
    assert ours == theirs
    assert shape(ours) == shape(theirs)  # the same keys in the same order, payloads too


def test_a_period_reads_as_before(lake: Lake) -> None:
    replayed = read_tables(lake, REPLAYED_TABLES, Period())
    first = replayed[len(replayed) // 2]["ts"]
    period = Period(first, first + 3_600_000)
    ours = read_tables(lake, REPLAYED_TABLES, period)
    assert 0 < len(ours) < len(replayed) and ours == per_row(lake, REPLAYED_TABLES, period)
    assert read_tables(lake, REPLAYED_TABLES, Period(0, 1)) == []


def test_the_replay_finds_and_decides_the_same_over_either_decoding(lake: Lake) -> None:
    history = read_history(lake)
    rows = History(
        events=per_row(lake, REPLAYED_TABLES, Period()),
        inventory=per_row(lake, (INVENTORY_TABLE,), Period()),
        outages=per_row(lake, OUTAGE_TABLES, Period()),
        live_findings=[],
        live_actions=[],
    )
    ours, theirs = replay(history, load_policy()), replay(rows, load_policy())
    assert ours.findings and ours.actions
    assert [f.to_record() for f in ours.findings] == [f.to_record() for f in theirs.findings]
    assert [a.to_record() for a in ours.actions] == [a.to_record() for a in theirs.actions]
    assert ours.replayed == theirs.replayed and ours.rejected == theirs.rejected


def test_a_replay_collects_garbage_seldom_and_restores_the_collector(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int, ...]] = []
    step = Replay.step

    def watched(self: Replay, record: Record) -> None:
        seen.append(gc.get_threshold())
        step(self, record)

    monkeypatch.setattr(Replay, "step", watched)
    before = gc.get_threshold()
    replay(read_history(lake), load_policy())
    assert seen and {t[0] for t in seen} == {YOUNG_THRESHOLD} and before[0] < YOUNG_THRESHOLD
    assert gc.get_threshold() == before


def test_days_read_on_their_date_partitions_are_the_period(lake: Lake) -> None:
    replayed = read_tables(lake, REPLAYED_TABLES, Period())  # no bound, no partition filter
    whole = events.DayByDay(lake, REPLAYED_TABLES, Period())
    assert list(whole) == replayed and len(whole) == len(replayed)
    start, end = replayed[len(replayed) // 5]["ts"] + 1, replayed[-len(replayed) // 5]["ts"]
    within = [r for r in replayed if start <= r["ts"] < end]
    assert (end - start) // events.DAY_MS >= 1 and list(
        events.DayByDay(lake, REPLAYED_TABLES, Period(start, end))
    ) == within
    midnight = start - start % events.DAY_MS + events.DAY_MS
    for period in (Period(start, midnight), Period(midnight - 1, midnight + 1), Period(midnight, end)):
        assert read_tables(lake, REPLAYED_TABLES, period) == [
            r
            for r in replayed
            if period.start <= r["ts"] < period.end  # type: ignore[operator]
        ]
