"""Fault classification from error events: one row per fault, noise ignored, NIC vs cable told apart."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import polars as pl
from deltalake import DeltaTable

from analytics.jobs import run_job
from analytics.jobs.inferred_faults import classify_faults, load_faults
from ground.delta import DATE, DeltaTables
from schemas.taxonomy import incident_signal_id


def _xid(rows: list[tuple[str, int, int, int]]) -> pl.LazyFrame:
    return pl.LazyFrame(rows, schema=["host_id", "ts", "gpu", "xid"], orient="row").with_columns(
        pl.lit("c1").alias("cluster")
    )


def test_primary_xids_become_faults_and_noise_does_not() -> None:
    xid = _xid(
        [
            ("h1", 1, 0, 79),
            ("h1", 2, 1, 48),
            ("h1", 2, 1, 63),
            ("h2", 3, 2, 13),
            ("h2", 4, 3, 95),
            ("h2", 5, 0, 120),
            ("h3", 6, 0, 74),
            ("h3", 7, 0, 62),
            ("h3", 8, 0, 64),
            ("h3", 9, 0, 31),
        ]
    )
    got = classify_faults(xid, None, None).collect()
    assert got["kind"].to_list() == [
        "fell_off_bus",
        "dram_uce",
        "sram_uce",
        "gsp_error",
        "nvlink",
        "pmu_halt",
        "row_remap_failure",
    ]
    assert got["cause"].to_list() == [
        "faulty_gpu",
        "hbm3",
        "gpu_sram",
        "gpu_system_processor",
        "faulty_gpu",
        "faulty_gpu",
        "hbm3",
    ]
    assert got["gpu"].to_list() == [0, 1, 3, 0, 0, 0, 0]


def test_link_down_is_nic_when_the_interruption_says_so() -> None:
    link = pl.LazyFrame(
        {
            "host_id": ["h1", "h2", "h3", "h3"],
            "cluster": "c",
            "ts": [10, 20, 30, 31],
            "port": [1, 2, 3, 3],
            "kind": ["down", "down", "flap", "up"],
            "count": [1, 1, 2, 1],
        }
    )
    inter = pl.LazyFrame(
        {
            "host_id": ["h1", "h2", "h9"],
            "cluster": "c",
            "ts": [10, 20, 40],
            "cause": ["network", "nic", "software"],
            "gpu": [None, None, 1],
            "job_id": "j",
            "job_gpus": 8,
        }
    )
    got = classify_faults(None, link, inter).collect().sort("ts")
    assert got.select("host_id", "kind", "cause").rows() == [
        ("h1", "link_down", "network"),
        ("h2", "nic", "nic"),
        ("h3", "link_flap", "network"),
        ("h9", "software", "software"),
    ]
    assert got["port"].to_list()[:3] == [1, 2, 3]


def test_no_tables_gives_an_empty_frame_with_the_columns() -> None:
    got = classify_faults(None, None, None).collect()
    assert got.height == 0 and "kind" in got.columns


def test_a_record_delivered_twice_is_one_fault(synthetic_lake: Any, tmp_path: Path) -> None:
    lake = synthetic_lake[0]
    twice = tmp_path / "lake"
    shutil.copytree(lake, twice)
    tables = DeltaTables(twice)
    for table in ("xid_raised", "link_event_observed", "job_interrupted"):
        again = DeltaTable(tables.uri(table)).to_pyarrow_table()  # the same events again
        tables.append(table, again, partition_by=[DATE])
    once = load_faults(lake).collect()
    assert (
        load_faults(twice).collect().sort("ts", "host_id", "kind").equals(once.sort("ts", "host_id", "kind"))
    )
    assert (
        run_job("interruptions", twice).summary["interruptions"]
        == run_job("interruptions", lake).summary["interruptions"]
    )


def test_an_imported_incident_and_the_signal_it_generated_are_one_fault() -> None:
    """584 incidents became 679 faults: the generated signal was counted beside its incident (item 3)."""
    incidents = pl.LazyFrame(
        {
            "event_id": ["inc-1", "inc-2", "inc-3"],
            "host_id": ["h1", "h2", "h3"],
            "cluster": "c",
            "start_ts": [10, 20, 30],
            "cause": ["faulty_gpu", "network", "psu"],
            "component": ["3", None, None],
            "component_kind": ["gpu", None, None],
        }
    )
    xid = _xid([("h1", 10, 3, 79), ("h9", 50, 0, 79)]).with_columns(
        pl.Series("event_id", [incident_signal_id("inc-1"), "live-xid"])
    )
    link = pl.LazyFrame(
        {
            "event_id": [incident_signal_id("inc-2")],
            "host_id": ["h2"],
            "cluster": "c",
            "ts": [20],
            "port": [None],
            "kind": ["down"],
            "count": [1],
        }
    )
    got = classify_faults(xid, link, None, incidents).collect().sort("ts")
    assert got.select("host_id", "kind", "cause").rows() == [
        ("h1", "fell_off_bus", "faulty_gpu"),
        ("h2", "link_down", "network"),
        ("h3", "psu", "psu"),
        ("h9", "fell_off_bus", "faulty_gpu"),
    ]
