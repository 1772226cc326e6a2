"""A lake's samples replayed as column batches decide what the same samples replayed record by record decide,
with rows the validator refuses in the middle of a run and outages between a run's rows; the columns read
from the lake are what the samples stage reads from each record."""

from __future__ import annotations

import dataclasses
from typing import Any

import polars as pl
import pytest

from analytics.lake import Lake
from fleetpulse.backtest.events import (
    REPLAYED_TABLES,
    SAMPLE_TABLE,
    DayByDay,
    History,
    Period,
    read_history,
    read_tables,
)
from fleetpulse.backtest.frames import nested
from fleetpulse.backtest.replay import Replay, replay
from fleetpulse.backtest.sample_runs import SampleRun, sample_columns, sample_items
from schemas.arrow import to_table
from streams.core.policy import Policy, load_policy
from streams.core.samples.columns import SampleColumns
from tests.fleetpulse.backtest.lake import incident
from tests.fleetpulse.backtest.simulated import simulated_lake
from tests.streams import factories as f


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Lake:
    return Lake(simulated_lake(tmp_path_factory.mktemp("lake"), seed=3301, days=2))


def outages(runs: list[SampleRun], hosts: list[str]) -> list[dict[str, Any]]:
    """Hosts taken out for two hours at a sample's own time and between two samples, inside runs of them."""
    out = []
    for n, run in enumerate(runs[:: max(1, len(runs) // 6)]):
        mid = (run.lo + run.hi) // 2
        for ts in (run.cols.ts[mid], run.cols.ts[mid] + 1):
            host = hosts[(n * 7 + ts) % len(hosts)]
            out.append(dict(incident(host, ts, ts + 7_200_000), cluster=run.cols.cluster[mid]))
    return sorted(out, key=lambda r: (r["ts"], r["event_id"]))


def strict(policy: Policy, max_temp_c: float) -> Policy:
    """The policy with a GPU temperature limit some of the simulated samples exceed."""
    limits = policy.validation.model_copy(update={"max_temp_c": max_temp_c})
    return policy.model_copy(update={"validation": limits})


def test_lake_columns_are_the_records_columns(lake: Lake) -> None:
    frame = lake.scan(SAMPLE_TABLE).drop("date", strict=False).collect()
    ours, theirs = sample_columns(frame), SampleColumns.of_records(nested(frame))
    assert len(ours) == frame.height > 100 and any(ours.degraded) and None in ours.job_id
    for field in SampleColumns.__struct_fields__:
        assert list(getattr(ours, field)) == list(getattr(theirs, field)), field


@pytest.mark.parametrize("max_temp_c", [None, 70.0])
def test_column_batches_decide_what_records_decide(
    lake: Lake, max_temp_c: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = load_policy() if max_temp_c is None else strict(load_policy(), max_temp_c)
    read = read_history(lake)
    assert isinstance(read.events, DayByDay)
    runs = [item for item in read.events.items(policy.validation) if isinstance(item, SampleRun)]
    assert runs and sum(run.hi - run.lo for run in runs) > 100
    hosts = sorted({r["host_id"] for r in read.inventory})
    history = dataclasses.replace(read, outages=outages(runs, hosts))
    records = History(
        events=read_tables(lake, REPLAYED_TABLES, Period()),
        inventory=history.inventory,
        outages=history.outages,
        live_findings=[],
        live_actions=[],
    )
    # what the core was handed, in order: each outage logged, with the offset and watermark the records read
    # before it had moved the core to (a stretch of rows is read in one step, so reads are not counted one by one)
    seen: list[tuple[int, int, int | None]] = []
    logged = Replay.logged

    def logging(self: Replay, record: dict[str, Any]) -> None:
        seen.append((record["ts"], self.offset, self.watermark))
        logged(self, record)

    monkeypatch.setattr(Replay, "logged", logging)
    ours = replay(history, policy)
    ours_seen, seen[:] = list(seen), []
    theirs = replay(records, policy)
    middle = runs[0].cols.ts[(runs[0].lo + runs[0].hi) // 2]
    assert ours_seen == seen and any(ts == middle for ts, _, _ in seen)
    assert ours.findings and ours.actions and len(history.outages) >= 10
    assert [f.to_record() for f in ours.findings] == [f.to_record() for f in theirs.findings]
    assert [a.to_record() for a in ours.actions] == [a.to_record() for a in theirs.actions]
    assert (ours.replayed, ours.rejected, ours.late) == (theirs.replayed, theirs.rejected, theirs.late)
    assert (ours.start_ts, ours.end_ts) == (theirs.start_ts, theirs.end_ts)
    if max_temp_c is not None:
        assert ours.rejected.get("absurd_value", 0) > 10  # refused rows fell inside runs of valid ones


def test_only_rows_the_validator_passes_fit_a_run() -> None:
    limits = load_policy().validation
    records = [f.sample(), f.sample(None, job=None), f.sample(), f.sample(), f.sample(host="bad host")]
    records[2]["payload"]["gpus"][5]["temp_c"] = limits.max_temp_c + 1
    records[3]["payload"]["nics"][0]["rx_gbps"] = float("nan")
    frame = pl.from_arrow(to_table("HostSampled", records))
    assert isinstance(frame, pl.DataFrame)
    cols, fits = sample_items(frame, limits)
    assert fits == [True, True, False, False, False] and len(cols) == 5
    assert sample_items(frame.drop("nics"), limits)[1] == [False] * 5  # each row goes the per-record way


def test_a_float32_value_just_over_a_bound_does_not_fit() -> None:
    """A lake's float32 value rounded up past a float64 bound is refused as the per-record check refuses it."""
    limits = load_policy().validation.model_copy(update={"max_temp_c": 60.2})
    records = [f.sample()]
    records[0]["payload"]["gpus"][0]["temp_c"] = 60.2  # stored as float32: 60.200000762939453
    frame = pl.from_arrow(to_table("HostSampled", records))
    assert isinstance(frame, pl.DataFrame)
    assert frame["gpus"][0][0]["temp_c"] > limits.max_temp_c  # the record is refused
    assert sample_items(frame, limits)[1] == [False]
