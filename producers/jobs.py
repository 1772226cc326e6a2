"""Jobs over time: each job slot (a fixed group of hosts) runs one job after another, each at its
own pace, with idle gaps between. Peers of a host are the hosts of its current job, not its cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from producers.fleet import DAY_MS, HOUR_MS, Fleet
from producers.randomness import Purpose, stream


@dataclass(frozen=True, eq=False)
class JobTimeline:
    """Every job run of the fleet: ``ids[r]`` ran on slot ``slot[r]`` over [start_ts, end_ts)."""

    ids: list[str]
    slot: np.ndarray
    start_ts: np.ndarray  # int64 ms
    end_ts: np.ndarray  # int64 ms; the slot idles from here to its next run's start
    pace: np.ndarray  # step time multiplier of the fabric's
    bw_pace: np.ndarray  # bus bandwidth multiplier of the fabric's
    slot_runs: list[np.ndarray]  # per slot, its run indices in time order

    def __len__(self) -> int:
        return len(self.ids)

    def latest(self, t: int) -> np.ndarray:
        """Per slot, the newest run started at or before ``t`` (-1 if none)."""
        out = np.full(len(self.slot_runs), -1, dtype=np.int64)
        for s, runs in enumerate(self.slot_runs):
            k = int(np.searchsorted(self.start_ts[runs], t, side="right")) - 1
            if k >= 0:
                out[s] = runs[k]
        return out

    def running(self, t: int) -> np.ndarray:
        """Per slot, the run in progress at ``t``, or -1 while the slot idles."""
        latest = self.latest(t)
        ok = latest >= 0
        ok[ok] = self.end_ts[latest[ok]] > t
        return np.where(ok, latest, -1)


def _slot_runs(
    rng: np.random.Generator, origin: int, horizon: int, run_days: float, idle_hours: float
) -> list[tuple[int, int]]:
    """(start, end) of a slot's runs from before ``origin`` until one starts after ``horizon``.

    Drawn in order from the slot's own stream, so a longer horizon (a continuation) only appends.
    """
    out = []
    length = max(HOUR_MS, int(rng.exponential(run_days * DAY_MS)))
    start = origin - int(rng.uniform() * length)
    while start <= horizon:
        end = start + length
        out.append((start, end))
        gap = int(rng.exponential(idle_hours * HOUR_MS)) if idle_hours > 0 else 0
        start = end + gap
        length = max(HOUR_MS, int(rng.exponential(run_days * DAY_MS)))
    return out


def job_timeline(fleet: Fleet) -> JobTimeline:
    """The fleet's job runs from its first segment's start to its end (same runs in every segment)."""
    spec = fleet.config.jobs
    ids: list[str] = []
    cols: dict[str, list[float]] = {k: [] for k in ("slot", "start", "end", "pace", "bw")}
    slot_runs: list[np.ndarray] = []
    for s, slot_id in enumerate(fleet.job_ids):
        rng = stream(fleet.seed, Purpose.JOBS, s)
        runs = _slot_runs(rng, fleet.origin_ts, fleet.end_ts, spec.run_days, spec.idle_hours)
        if s < len(fleet.job_spare) and fleet.job_spare[s]:
            runs = []  # spares: in service, never running a job (no job id, no step time)
        paces = rng.uniform(*spec.pace, size=len(runs))
        bws = rng.uniform(*spec.bw_pace, size=len(runs))
        slot_runs.append(np.arange(len(ids), len(ids) + len(runs), dtype=np.int64))
        for n, ((start, end), pace, bw) in enumerate(zip(runs, paces, bws, strict=True)):
            ids.append(f"{slot_id}-{n:03d}")
            cols["slot"].append(s)
            cols["start"].append(start)
            cols["end"].append(end)
            cols["pace"].append(round(float(pace), 4))
            cols["bw"].append(round(float(bw), 4))
    return JobTimeline(
        ids=ids,
        slot=np.asarray(cols["slot"], dtype=np.int64),
        start_ts=np.asarray(cols["start"], dtype=np.int64),
        end_ts=np.asarray(cols["end"], dtype=np.int64),
        pace=np.asarray(cols["pace"], dtype=float),
        bw_pace=np.asarray(cols["bw"], dtype=float),
        slot_runs=slot_runs,
    )
