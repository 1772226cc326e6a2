"""Repeat offenders per scope and their share of faults."""

from __future__ import annotations

import polars as pl

from analytics.jobs.offenders import offender_share, offenders


def _faults() -> pl.LazyFrame:
    rows = [("h1", 0, None, "dram_uce")] * 3 + [("h1", 1, None, "dram_uce")]  # GPU 0 of h1: 3 DRAM UCEs
    rows += [("h2", None, 4, "link_flap")] * 4  # port 4 of h2: 4 flaps
    rows += [
        ("h3", 2, None, "fell_off_bus"),
        ("h3", 5, None, "fell_off_bus"),
        ("h3", 6, None, "fell_off_bus"),
    ]
    rows += [("h4", None, None, "software")] * 5  # no hardware signal: never an offender
    return pl.LazyFrame(
        [(h, "c", i, g, p, k) for i, (h, g, p, k) in enumerate(rows)],
        schema={
            "host_id": pl.String,
            "cluster": pl.String,
            "ts": pl.Int64,
            "gpu": pl.Int32,
            "port": pl.Int32,
            "kind": pl.String,
        },
        orient="row",
    )


def test_offenders_at_each_scope() -> None:
    got = offenders(_faults(), min_events=3).collect()
    keys = set(zip(got["scope"].to_list(), got["scope_key"].to_list(), got["kind"].to_list(), strict=True))
    assert keys == {
        ("gpu", "h1/0", "dram_uce"),
        ("port", "h2/4", "link_flap"),
        ("host", "h1", "dram_uce"),
        ("host", "h2", "link_flap"),
        ("host", "h3", "fell_off_bus"),
    }


def test_share_of_faults() -> None:
    share = offender_share(_faults(), min_events=3).collect()
    row = lambda s, k: share.filter((pl.col("scope") == s) & (pl.col("kind") == k)).row(0, named=True)  # noqa: E731
    gpu_all = row("gpu", "all")
    assert (gpu_all["units"], gpu_all["offenders"], gpu_all["events"], gpu_all["offender_events"]) == (
        5,
        1,
        7,
        3,
    )
    host_all = row("host", "all")
    assert host_all["events"] == 11 and host_all["offender_events"] == 11 and host_all["offenders"] == 3
    assert row("port", "link_flap")["share_of_faults"] == 1.0
    assert share.filter(pl.col("kind") == "software").height == 0
