"""A columnar table of occurrences (faults and noise) on hosts, each with an event time.

The fault and noise generators fill it; the event builder turns each row into events; the
truth writer stores the fault rows. Columns are numpy arrays so a fleet's months fit easily.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from schemas.taxonomy import FAULT_KINDS

# Every fault kind interrupts the job on it but a single link flap (the job rides it out).
INTERRUPTING = frozenset(FAULT_KINDS) - {"link_flap"}


@dataclass(frozen=True, eq=False)
class Schedule:
    ts: np.ndarray  # int64 ms
    host: np.ndarray  # int64 host index
    gpu: np.ndarray  # int64, -1 when none
    port: np.ndarray  # int64, -1 when none
    kind: np.ndarray  # object: fault kind, or noise kind (ecc_ce, app_xid, aer_ce, flap)
    cause: np.ndarray  # object: Table 5 category ('' for noise)
    phase: np.ndarray  # object: early_life | random | wearout | lemon | noise
    aux1: np.ndarray  # int64, kind-specific detail (counts, XID variant, AER severity)
    aux2: np.ndarray  # int64, kind-specific detail

    def __len__(self) -> int:
        return len(self.ts)

    @classmethod
    def empty(cls) -> Schedule:
        return cls.from_columns({})

    @classmethod
    def from_columns(cls, cols: Mapping[str, Sequence[Any] | np.ndarray]) -> Schedule:
        out = {}
        for f in fields(cls):
            values = cols.get(f.name, [])
            dtype = object if f.name in ("kind", "cause", "phase") else np.int64
            out[f.name] = np.asarray(values, dtype=dtype)
        n = {len(v) for v in out.values()}
        if len(n) > 1:
            raise ValueError(f"schedule columns differ in length: { {k: len(v) for k, v in out.items()} }")
        return cls(**out)

    def take(self, index: np.ndarray) -> Schedule:
        return Schedule(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    def sorted(self) -> Schedule:
        """By time, then host: the order agents report in (stable, so ties keep insertion order)."""
        return self.take(np.lexsort((self.host, self.ts)))

    @staticmethod
    def concat(parts: list[Schedule]) -> Schedule:
        parts = [p for p in parts if len(p)]
        if not parts:
            return Schedule.empty()
        return Schedule(
            **{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(Schedule)}
        )

    @property
    def is_fault(self) -> np.ndarray:
        return self.phase != "noise"

    @property
    def interrupts(self) -> np.ndarray:
        return np.fromiter((k in INTERRUPTING for k in self.kind), dtype=bool, count=len(self))
