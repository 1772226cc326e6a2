"""A batch of HostSampled records column by column, in source order: what the host windows fold of each.

The samples stage builds one from the records of a fetched batch (``of_records``); the backtest builds
one straight from a lake's columns, without making a record of each row. ``SampleFolder.fold_columns``
folds it for every runner.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ground.slow_peers import sample_degraded
from schemas.events import job_step_time


@dataclass(frozen=True, slots=True)
class SampleColumns:
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
        payloads = [r["payload"] for r in records]
        steps = [job_step_time(p.get("step_time_ms")) for p in payloads]
        return cls(
            ts=[r["ts"] for r in records],
            host_id=[r["host_id"] for r in records],
            cluster=[r["cluster"] for r in records],
            interval_s=[p.get("interval_s", 0) for p in payloads],
            job_id=[p.get("job_id") for p in payloads],
            step_ms=steps,
            bus_bw=[p.get("bus_bw_gbps") for p in payloads],
            degraded=[
                step is not None and sample_degraded(p.get("gpus") or (), p.get("nics") or ())
                for p, step in zip(payloads, steps, strict=True)
            ],
        )
