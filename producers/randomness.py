"""Named, independent random streams derived from the run seed.

Each stream is keyed by (seed, purpose, index...), so a host's faults never depend on how
many other hosts exist or in which order they are generated.
"""

from __future__ import annotations

import hashlib
from enum import IntEnum

import numpy as np


class Purpose(IntEnum):
    FLEET = 1  # layout choices: cohorts, lemons, slow hosts
    HOST_FAULTS = 2  # per host: early-life, flat and wear-out faults, noise
    LEMON = 3  # per host: lemon repeats
    TICK = 4  # per tick: sample noise over all hosts
    LATE = 5  # per tick: late-delivery choices
    HOST_TRAITS = 6  # per host: persistent offsets
    JOBS = 7  # per job slot: its runs, their paces and idle gaps
    DELIVERY = 8  # per tick: sample drop-outs and duplicated deliveries
    REPORTING = 9  # per fleet: which hosts report faults naming only the host
    CHANGES = 10  # per host and rollout: the faults a bad version adds


def stream(seed: int, purpose: Purpose, *index: int) -> np.random.Generator:
    """An independent generator for one purpose (and optional indices such as a host number)."""
    return np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFF, int(purpose), *index]))


def run_id(
    seed: int, preset: str, mode: str, start_ts: int, end_ts: int, interval_s: int, content: str
) -> str:
    """A short id that makes event ids unique across runs while staying deterministic per request.

    Event ids and Parquet file names start with it, so anything that changes the events (window,
    interval, ``content``: the fleet config as text) must change it.
    """

    digest = hashlib.sha1(content.encode()).hexdigest()
    key = f"{seed}|{preset}|{mode}|{start_ts}|{end_ts}|{interval_s}|{digest}"
    return hashlib.sha1(key.encode()).hexdigest()[:8]
