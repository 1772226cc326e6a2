"""Which of the truth's lemons a repeat-offender detector must find: fixed by the truth and a materiality setting.

A lemon is *material* when its fault came back within the period: at least ``min_faults`` faults of its
kind on its own part (its GPU or port; the whole host when its events name only the host) within
``within_ms``. One fault is no repeat, and no detector of repeats can tell it from a healthy host's
random fault; a second one on the same part is what any repeat rule, however set, sees first. Nothing
here reads a detection policy, so two policies compared on one run are judged against the same lemons:
a stricter threshold that finds fewer of them has a lower recall, never a smaller target. Every scorer
(``fleetpulse score``, backtest, bench, the twin) uses it, as ``slow_truth`` for slow hosts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from fleetpulse.evaluation.rule_met import threshold_reached_at

DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class LemonMateriality:
    """The evaluation's definition of a lemon that matters (not the policy's)."""

    min_faults: int = 2
    within_ms: int = 30 * DAY_MS

    def describe(self) -> str:
        return (
            f"materiality: a lemon with ≥ {self.min_faults} faults of its kind on its own GPU or port "
            f"(the host when its events name only the host) within {self.within_ms / DAY_MS:g} d "
            "in the period; not the policy's"
        )


def lemon_faults(
    faults: pl.DataFrame, host: Mapping[str, Any], kinds: Sequence[str], start: int, end: int
) -> list[int]:
    """Times of the faults of ``kinds`` in [start, end] on the lemon's own scope (its GPU, its port, or
    the whole host when its events name only the host, or the truth names no part)."""
    mine = faults.filter(pl.col("kind").is_in(list(kinds)) & pl.col("ts").is_between(start, end))
    scope = "host" if host.get("host_only") else host.get("lemon_scope") or "host"
    if scope == "gpu" and host.get("lemon_gpu") is not None:
        mine = mine.filter(pl.col("gpu") == host["lemon_gpu"])
    elif scope == "port" and host.get("lemon_port") is not None:
        mine = mine.filter(pl.col("port") == host["lemon_port"])
    return mine["ts"].to_list()


def material_lemons(
    hosts: pl.DataFrame,
    faults: pl.DataFrame,
    start: int,
    end: int,
    materiality: LemonMateriality | None = None,
) -> dict[str, int]:
    """Truth lemon -> when it became material (its ``min_faults``-th fault within ``within_ms``)."""
    m = materiality or LemonMateriality()
    lemons = hosts.filter(pl.col("lemon_kind").is_not_null())
    if not lemons.height or not faults.height:
        return {}
    own = faults.filter(pl.col("host_id").is_in(lemons["host_id"].to_list()))
    by_host = {key[0]: frame for key, frame in own.partition_by("host_id", as_dict=True).items()}
    out: dict[str, int] = {}
    for h in lemons.to_dicts():
        mine = by_host.get(h["host_id"])
        if mine is None:
            continue
        times = lemon_faults(mine, h, (h["lemon_kind"],), start, end)
        reached = threshold_reached_at(times, m.min_faults, m.within_ms)
        if reached is not None:
            out[h["host_id"]] = reached
    return out
