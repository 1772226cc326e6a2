"""A batch of HostSampled records column by column, in source order: what the host windows fold of each.

The samples stage builds one from the records of a fetched batch (``of_records``); the backtest builds
one straight from a lake's columns, without making a record of each row. ``SampleFolder.fold_columns``
folds it for every runner.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ground.degraded import sample_degraded
from schemas.events import job_step_time


class SampleColumns(msgspec.Struct, frozen=True):
    """Valid HostSampled records, one list per field the host windows read (row ``i`` is record ``i``)."""

    ts: Sequence[int]
    host_id: Sequence[str]
    cluster: Sequence[str]
    interval_s: Sequence[int]
    job_id: Sequence[str | None]
    step_ms: Sequence[float | None]  # ``job_step_time``: None when no job reported one
    bus_bw: Sequence[float]
    degraded: Sequence[bool]  # ``sample_degraded`` (only read where there is a job and a step time)

    def __len__(self) -> int:
        return len(self.ts)

    @classmethod
    def of_records(cls, records: Sequence[Mapping[str, Any]]) -> SampleColumns:
        """From decoded, validated HostSampled records."""
        if not records:
            return cls((), (), (), (), (), (), (), ())
        ts, host, cluster, interval, job, step, bus_bw, degraded = zip(*map(_row, records), strict=True)
        return cls(ts, host, cluster, interval, job, step, bus_bw, degraded)


Row = tuple[int, str, str, int, str | None, float | None, float, bool]


def _row(record: Mapping[str, Any]) -> Row:
    """What the host windows read of one record, in ``SampleColumns``' field order."""
    p = record["payload"]
    step = job_step_time(p.get("step_time_ms"))
    degraded = step is not None and sample_degraded(p.get("gpus") or (), p.get("nics") or ())
    return (
        record["ts"],
        record["host_id"],
        record["cluster"],
        p.get("interval_s", 0),
        p.get("job_id"),
        step,
        p.get("bus_bw_gbps"),
        degraded,
    )
