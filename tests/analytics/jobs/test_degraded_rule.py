"""The degraded-telemetry rule is one table (``ground.degraded.DEGRADED``): its per-record form
(``sample_degraded``, the samples fold of every runner) and its column form (``slow_view.degraded_expr``,
the backtest's lake columns and the batch view) are both read off it."""

from __future__ import annotations

import random
from typing import Any

import polars as pl

from analytics.jobs.slow_view import degraded_expr
from ground.degraded import DEGRADED, AnyBit, BelowMax, DegradedRule, PortDrop, sample_degraded
from tests.streams import factories as f

GPU_FIELDS = {
    "pcie_link_gen": pl.Int64,
    "pcie_link_gen_max": pl.Int64,
    "pcie_link_width": pl.Int64,
    "pcie_link_width_max": pl.Int64,
    "throttle_reasons": pl.Int64,
}
NIC_FIELDS = {"rx_gbps": pl.Float64}
# another rule of the same shape: one link test, another throttle bit, a larger drop over at least 3 ports
OTHER = DegradedRule(
    below_max=(BelowMax("pcie_link_width", "pcie_link_width_max"),),
    bits=(AnyBit("throttle_reasons", 0x4),),
    port=PortDrop("rx_gbps", 0.2, min_ports=3),
)


def _degraded_both_ways(
    records: list[dict[str, Any]], rule: DegradedRule = DEGRADED
) -> tuple[list[bool], list[bool]]:
    """The rule's column form over a frame of the payloads, and its per-record form over each payload."""
    frame = pl.DataFrame(
        {"gpus": [r["gpus"] for r in records], "nics": [r["nics"] for r in records]},
        schema={"gpus": pl.List(pl.Struct(GPU_FIELDS)), "nics": pl.List(pl.Struct(NIC_FIELDS))},
    )
    columns = frame.select(degraded_expr(frame.columns, rule))["degraded"].to_list()
    return columns, [sample_degraded(r["gpus"], r["nics"], rule) for r in records]


def test_the_one_degraded_rule_reads_a_sample_alike_record_by_record_and_by_column() -> None:
    """``DEGRADED``, case by case: its column form (``degraded_expr``) over lake columns is its per-record
    form (``sample_degraded``) over a payload, and both are what the table says."""
    cases = {
        "healthy": {},
        "gen": {"pcie_link_gen": 4},
        "width": {"pcie_link_width": 8},
        "thermal": {"throttle_reasons": 0x40},
        "idle": {"throttle_reasons": 0x1},
    }
    records = []
    for name, change in cases.items():
        r = f.sample(host=name)
        r["payload"]["gpus"][2] |= change
        records.append(r)
    nic = f.sample(host="nic")
    nic["payload"]["nics"] = [
        {**nic["payload"]["nics"][0], "port": p, "rx_gbps": 0.9 if p == 5 else 1.0} for p in range(8)
    ]
    records.append(nic)
    frame = pl.DataFrame(
        {
            "host_id": [r["host_id"] for r in records],
            "gpus": [r["payload"]["gpus"] for r in records],
            "nics": [r["payload"]["nics"] for r in records],
        }
    )
    batch = dict(zip(frame["host_id"], frame.select(degraded_expr(frame.columns))["degraded"], strict=True))
    stream = {r["host_id"]: sample_degraded(r["payload"]["gpus"], r["payload"]["nics"]) for r in records}
    assert (
        batch
        == stream
        == {"healthy": False, "gen": True, "width": True, "thermal": True, "idle": False, "nic": True}
    )


def _payloads(n: int, seed: int) -> list[dict[str, Any]]:
    """Payloads with missing fields, empty lists, near-bound NIC ports and stray throttle bits."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        gpus = [
            {
                "pcie_link_gen": rng.choice([None, 3, 4, 5]),
                "pcie_link_gen_max": rng.choice([None, 4, 5, 5, 5]),
                "pcie_link_width": rng.choice([None, 8, 16, 16]),
                "pcie_link_width_max": rng.choice([None, 16, 16]),
                "throttle_reasons": rng.choice([None, 0, 0, 0x1, 0x4, 0x20, 0x40, 0x24]),
            }
            for _ in range(rng.randrange(3))
        ]
        base = rng.choice([0.0, 1.0, 100.0])
        nics = [
            {"rx_gbps": rng.choice([None, base, base, base * rng.choice([0.5, 0.7, 0.85, 0.94, 0.95, 0.96])])}
            for _ in range(rng.randrange(6))
        ]
        out.append({"gpus": gpus, "nics": nics})
    return out


def test_both_forms_of_the_degraded_rule_are_read_off_its_one_table() -> None:
    """On random payloads, the column and the per-record forms agree for ``DEGRADED`` and for another table:
    neither form holds a field or a bound of its own."""
    payloads = _payloads(600, seed=3)
    columns, records = _degraded_both_ways(payloads)
    assert columns == records and 0 < sum(records) < len(records)
    other_columns, other_records = _degraded_both_ways(payloads, OTHER)
    assert other_columns == other_records and other_records != records
