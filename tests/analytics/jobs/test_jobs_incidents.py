"""Incidents and repair times: unclassified is a row, shares are over all, medians from real start/end pairs."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
from deltalake import DeltaTable
from typer.testing import CliRunner

from analytics.jobs import build_report, run_job
from analytics.jobs.errors import InsufficientDataError
from analytics.jobs.incidents import cause_table, unclassified_classes
from analytics.jobs.inferred_faults import classify_faults, incident_faults
from analytics.jobs.offenders import offenders
from analytics.jobs.repairs import (
    incident_intervals,
    operator_intervals,
    planner_intervals,
    repair_times_by_operation,
)
from fleetpulse.cli import app
from tests.analytics.jobs.factories import HOUR, START
from tests.analytics.jobs.trace_lake import (
    FAULTY_GPU_MEDIAN_H,
    INCIDENTS,
    POWER_MEDIAN_H,
    POWER_P90_H,
    build_trace_lake,
)


@pytest.fixture(scope="module")
def trace_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lake = tmp_path_factory.mktemp("trace")
    build_trace_lake(lake)
    return lake


def test_cause_table_keeps_unclassified_as_a_row_and_shares_over_all() -> None:
    frame = pl.LazyFrame({"cause": ["faulty_gpu"] * 3 + ["power", None, "unclassified"]})
    got = dict(cause_table(frame).collect().select("cause", "pct").iter_rows())
    assert got == pytest.approx({"faulty_gpu": 50.0, "unclassified": 100 / 3, "power": 100 / 6})
    empty = cause_table(pl.LazyFrame({"cause": ["power"]})).collect()
    assert empty.filter(pl.col("cause") == "unclassified")["count"].to_list() == [0]


def test_unclassified_classes_name_the_source_classes() -> None:
    frame = pl.LazyFrame(
        {
            "cause": ["unclassified", None, "power", "unclassified"],
            "source_class": ["other/unknown", "other/unknown", "hw/psu", "stress/fail"],
            "source_text": ["unknown error", "unknown error", "psu", "stress test failed"],
        }
    )
    got = unclassified_classes(frame).collect()
    assert got.rows() == [("other/unknown", 2, "unknown error"), ("stress/fail", 1, "stress test failed")]


def test_incident_faults_take_gpu_and_port_components() -> None:
    frame = pl.LazyFrame(
        {
            "host_id": ["a", "b", "c"],
            "cluster": "x",
            "start_ts": [1, 2, 3],
            "cause": ["faulty_gpu", "network", None],
            "component": ["3", "4", "GPU-uuid"],
            "component_kind": ["gpu", "port", "gpu"],
        }
    )
    got = incident_faults(frame).collect()
    assert got["gpu"].to_list() == [3, None, None] and got["port"].to_list() == [None, 4, None]
    assert got["kind"].to_list() == ["faulty_gpu", "network", "unclassified"]


def test_operator_spells_pair_out_of_service_with_returned() -> None:
    events = pl.LazyFrame(
        {
            "host_id": ["a", "a", "a", "b", "b", "c"],
            "ts": [0, 1 * HOUR, 5 * HOUR, 0, 2 * HOUR, 0],
            "kind": [
                "out_of_service",
                "repair_started",
                "returned_to_service",
                "out_of_service",
                "returned_to_service",
                "out_of_service",
            ],
            "cause": ["fan", None, None, None, None, "power"],
            "ticket_id": ["T1", "T1", "T1", None, None, "T3"],
        }
    )
    got = operator_intervals(events).collect().sort("host_id", "start_ts")
    # a's repair (1 h → 5 h) is a spell of its own, closed by the return; c is still out
    assert got.select("host_id", "cause").rows() == [
        ("a", "fan"),
        ("a", "unclassified"),
        ("b", "unclassified"),
        ("c", "power"),
    ]
    assert got["hours"].to_list() == [pytest.approx(5.0), pytest.approx(4.0), pytest.approx(2.0), None]


def test_operator_steps_pair_by_kind_and_ticket_and_repeats_change_nothing() -> None:
    events = pl.LazyFrame(
        {
            "host_id": ["a"] * 8,
            "ts": [0, HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR, 5 * HOUR, 7 * HOUR, 9 * HOUR],
            "kind": [
                "rma_shipped",
                "repair_started",
                "rma_shipped",
                "repair_finished",
                "rma_shipped",
                "rma_replaced",
                "rma_replaced",
                "repair_finished",
            ],
            "cause": ["faulty_gpu", "psu", None, None, None, None, None, None],
            "ticket_id": ["R1", "P1", "R1", "P1", "R2", "R9", "R1", None],
        }
    )
    got = operator_intervals(events).collect().sort("start_ts")
    # R1 shipped twice while open: one spell 0 → 7 h; P1 1 → 3 h; R9's replacement does not close R2;
    # the ticketless finish at 9 h finds no repair open
    assert got.select("cause", "start_ts", "end_ts").rows() == [
        ("faulty_gpu", 0, 7 * HOUR),
        ("psu", HOUR, 3 * HOUR),
        ("unclassified", 4 * HOUR, None),
    ]


def test_a_return_to_service_ends_an_open_incident() -> None:
    incidents = pl.LazyFrame(
        {
            "event_id": ["i1", "i2", "i3"],
            "host_id": ["a", "a", "b"],
            "cause": ["power", "fan", "fan"],
            "start_ts": [0, 10 * HOUR, 0],
            "end_ts": [None, 11 * HOUR, 20 * HOUR],
        }
    )
    back = pl.LazyFrame(
        {
            "host_id": ["a", "b"],
            "ts": [4 * HOUR, 6 * HOUR],
            "kind": ["returned_to_service"] * 2,
            "cause": [None, None],
            "ticket_id": [None, None],
        }
    )
    got = incident_intervals(incidents, back).collect().sort("host_id", "start_ts")
    # a's open incident ends at the return; the later one is untouched; b was back before its recorded end
    assert got["end_ts"].to_list() == [4 * HOUR, 11 * HOUR, 6 * HOUR]


def test_planner_episodes_start_at_a_drain_and_take_the_rule_cause() -> None:
    actions = pl.LazyFrame(
        {
            "host_id": ["a"] * 4 + ["b"] * 3 + ["c"],
            "ts": [0, HOUR, 3 * HOUR, 4 * HOUR, 0, HOUR, 2 * HOUR, 0],
            "kind": [
                "drain_requested",
                "drained",
                "repaired",
                "returned",
                "suspected",
                "drain_requested",
                "returned",
                "suspected",
            ],
            "rule": ["fell_off_bus_repeat_gpu"] * 4 + ["row_remap_failure"] * 3 + [None],
        }
    )
    got = planner_intervals(actions).collect().sort("host_id")
    # b's episode starts at its drain, not at the suspicion; c was never taken out
    assert got.select("host_id", "cause").rows() == [("a", "faulty_gpu"), ("b", "hbm3")]
    assert got["hours"].to_list() == [pytest.approx(4.0), pytest.approx(1.0)]


def test_time_to_repair_matches_hand_computed_medians(trace_lake: Path) -> None:
    result = run_job("incidents", trace_lake)
    ttr = result.tables["time_to_repair"]
    power = ttr.filter((pl.col("cause") == "power") & (pl.col("source") == "incident")).row(0, named=True)
    assert (power["outages"], power["closed"]) == (5, 4)
    assert power["ttr_median_h"] == pytest.approx(POWER_MEDIAN_H)
    assert power["ttr_p90_h"] == pytest.approx(POWER_P90_H)
    gpu = ttr.filter(pl.col("cause") == "faulty_gpu").row(0, named=True)
    assert gpu["ttr_median_h"] == pytest.approx(FAULTY_GPU_MEDIAN_H)
    fan = ttr.filter((pl.col("cause") == "fan") & (pl.col("source") == "operator")).row(0, named=True)
    assert (fan["outages"], fan["closed"], fan["ttr_median_h"]) == (2, 1, pytest.approx(5.0))


def test_incidents_job_counts_each_incident_once_and_gives_coverage(trace_lake: Path) -> None:
    result = run_job("incidents", trace_lake)
    total = len(INCIDENTS)  # the lake holds 3 duplicates of an at-least-once re-delivery
    unclassified = sum(1 for row in INCIDENTS if row[1] in (None, "unclassified"))
    causes = result.tables["causes"]
    assert int(causes["count"].sum()) == total
    assert causes.filter(pl.col("cause") == "unclassified")["count"].item() == unclassified
    assert causes["pct"].sum() == pytest.approx(100.0)
    cov = result.summary["coverage"]["causes"]
    assert (cov["counted"], cov["total"]) == (total - unclassified, total)
    assert cov["text"] == f"{total - unclassified} of {total} incidents classified (75.0%)"
    assert result.tables["unclassified_classes"]["source_class"].to_list() == ["other/unknown", "stress/fail"]
    ttr_cov = result.summary["coverage"]["time_to_repair"]
    open_incidents, spells, open_spells = 2, 4, 1  # node004's repair is a spell of its own
    closed = total - open_incidents + spells - open_spells
    assert (ttr_cov["counted"], ttr_cov["total"]) == (closed, total + spells)


def test_early_life_without_install_dates_is_skipped_and_says_why(trace_lake: Path) -> None:
    with pytest.raises(InsufficientDataError, match="none of the 8 hosts has a real install date"):
        run_job("early-life", trace_lake)


def test_domain_sizing_measures_repair_time_and_says_what_it_assumed(trace_lake: Path) -> None:
    result = run_job("maintenance-domain", trace_lake)
    inputs, model = result.summary["inputs"], result.summary["model"]
    # closed outages, none of a no-repair cause: ten incidents, then the operator's three closed spells
    # (node004 out 5 h with its repair 4 h inside, node005 out 2 h); the 0.5 h one was a reset, no repair
    closed = [4.0, 8, 12, 1, 2, 3, 10, 6, 2, 5, 4, 2]
    assert model["repair_hours"] == pytest.approx(float(pl.Series(closed).median()))
    assert inputs["repair_hours"].startswith(f"measured: median of {len(closed)} closed outages")
    assert inputs["job_hosts"].startswith("assumed") and model["job_hosts"] == 8
    assert any("job size assumed" in n for n in result.notes)
    assert result.summary["coverage"]["sensitivity"]["total"] == len(INCIDENTS)


def test_report_on_a_trace_lake_states_coverage_and_skips(trace_lake: Path, tmp_path: Path) -> None:
    rep = build_report(trace_lake, tmp_path / "out", show_progress=False)
    assert "incidents" in rep.results and "maintenance-domain" in rep.results
    assert "real install date" in rep.skipped["early-life"]
    md = rep.markdown.read_text()
    assert "coverage: 9 of 12 incidents classified (75.0%)" in md
    assert "| unclassified | 3 |" in md and "N^nan" not in md and "| nan" not in md
    assert "job_hosts: assumed" in md


def test_a_host_without_install_date_is_left_out_of_the_fit(tmp_path: Path) -> None:
    build_trace_lake(tmp_path, install_ts=START - 100 * 24 * HOUR)
    DeltaTable(str(tmp_path / "host_inventoried")).update(
        {"install_ts": "0"}, predicate="host_id = 'node000'"
    )
    result = run_job("early-life", tmp_path)
    assert any("1 of 8 hosts have no real install date" in n for n in result.notes)
    assert result.summary["hosts_without_install_date"] == 1
    cov = result.summary["coverage"]["hazard_by_mode"]
    # node000's two incidents fall out; every other host's incidents are counted
    assert (cov["counted"], cov["total"]) == (len(INCIDENTS) - 2, len(INCIDENTS))


def test_cli_analyze_incidents_prints_coverage(trace_lake: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["analyze", "incidents", "--lake", str(trace_lake), "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert (
        "9 of 12 incidents classified" in res.output
        and "coverage: 9 of 12 incidents classified" in res.output
    )
    assert (tmp_path / "incidents" / "incident_causes.png").is_file()
    assert (tmp_path / "incidents" / "time_to_repair.csv").is_file()


def test_incidents_job_without_any_outage_source_says_what_is_missing(tmp_path: Path) -> None:
    build_trace_lake(tmp_path)
    for table in ("incidents", "operator_events"):
        shutil.rmtree(tmp_path / table)
    with pytest.raises(
        InsufficientDataError, match="no incidents, operator_events or maintenance_action_recorded"
    ):
        run_job("incidents", tmp_path)


def test_incidents_naming_failed_hardware_make_repeat_offenders() -> None:
    incidents = pl.LazyFrame(
        {
            "host_id": ["a", "a", "a", "b", "b"],
            "cluster": "x",
            "start_ts": [1, 2, 3, 4, 5],
            "cause": ["faulty_gpu", "faulty_gpu", "faulty_gpu", "psu", "psu"],
            "component": ["3", "3", "5", None, None],
            "component_kind": ["gpu", "gpu", "gpu", None, None],
        }
    )
    found = offenders(classify_faults(None, None, None, incidents), min_events=2).collect()
    # a's GPU 3 twice and the host thrice; psu is a signal-free cause too, so b's incidents say nothing of a unit
    assert sorted(found.select("scope", "scope_key", "events").rows()) == [
        ("gpu", "a/3", 2),
        ("host", "a", 3),
    ]


def test_time_to_repair_per_operation_kind_never_counts_a_reset_as_a_repair(trace_lake: Path) -> None:
    ttr = run_job("incidents", trace_lake).tables["time_to_repair_by_operation"]
    rows = {(r["cause"], r["operation"]): r for r in ttr.iter_rows(named=True)}
    assert (rows["network", "reset"]["closed"], rows["network", "reset"]["ttr_median_h"]) == (
        1,
        pytest.approx(0.5),
    )
    assert ("network", "repair") not in rows  # its one outage, 30 min, was a reset
    power = rows["power", "repair"]
    assert (power["outages"], power["closed"], power["ttr_median_h"]) == (5, 4, pytest.approx(POWER_MEDIAN_H))
    custom = run_job("incidents", trace_lake, reset_within_hours=2.5).tables["time_to_repair_by_operation"]
    resets = custom.filter((pl.col("cause") == "power") & (pl.col("operation") == "reset"))
    assert resets["closed"].to_list() == [2]  # 1 h and 2 h


def test_an_rma_is_its_own_operation_kind_for_the_planner_and_for_operators() -> None:
    actions = pl.LazyFrame(
        {
            "host_id": ["a", "a", "a", "b", "b", "b"],
            "ts": [0, 1, 50 * HOUR, 0, 1, 3 * HOUR],
            "kind": [
                "drain_requested",
                "rma_opened",
                "returned",
                "drain_requested",
                "reboot_requested",
                "returned",
            ],
            "rule": ["dram_uce_repeat_gpu"] * 6,
            "operation": ["drain", "rma", "rma", "drain", "reboot", "reboot"],
        }
    )
    got = repair_times_by_operation(planner_intervals(actions), reset_within_h=1.0).collect()
    assert sorted(got.select("operation", "closed", "ttr_median_h").rows()) == [
        ("repair", 1, pytest.approx(3.0)),
        ("rma", 1, pytest.approx(50.0)),
    ]
    ops = pl.LazyFrame(
        {
            "host_id": ["c", "c"],
            "ts": [0, 20 * HOUR],
            "kind": ["rma_shipped", "rma_replaced"],
            "cause": ["faulty_gpu", None],
            "ticket_id": ["T", "T"],
        }
    )
    spells = repair_times_by_operation(operator_intervals(ops), reset_within_h=1.0).collect()
    assert spells.select("cause", "operation", "closed").rows() == [("faulty_gpu", "rma", 1)]
