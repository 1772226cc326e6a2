"""The suite files: one per lake table, loadable, in step with the event schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analytics.errors import QualityError
from analytics.quality.suites import load_suite, suite_tables
from analytics.quality.view import view_columns
from analytics.tables import TABLES


def test_every_table_has_a_suite() -> None:
    assert suite_tables() == sorted(TABLES)


@pytest.mark.parametrize("table", sorted(TABLES))
def test_suite_columns_match_the_schema(table: str) -> None:
    """A schema change without a suite update fails here, not as a quarantined batch in production."""
    spec = load_suite(table)
    assert spec.version >= 1
    assert spec.column_set == view_columns(TABLES[table])


@pytest.mark.parametrize("table", sorted(TABLES))
def test_suites_cover_the_keys(table: str) -> None:
    spec = load_suite(table)
    kinds = {(e["type"], e["kwargs"].get("column")) for e in spec.expectations}
    assert ("expect_column_values_to_be_unique", "event_id") in kinds
    assert ("expect_column_values_to_not_be_null", "event_id") in kinds
    ts = [e for e in spec.expectations if e["kwargs"].get("column") == "ts"]
    assert any(e["kwargs"].get("max_value") == {"$PARAMETER": "max_ts_ms"} for e in ts)


def test_error_and_sample_tables_check_known_hosts() -> None:
    for table in (
        "host_sampled",
        "xid_raised",
        "ecc_error_observed",
        "pcie_aer_reported",
        "link_event_observed",
        "job_interrupted",
    ):
        spec = load_suite(table)
        assert any(spec.requires(e) == "known_hosts" for e in spec.expectations), table
    assert not any(load_suite("alert_raised").requires(e) for e in load_suite("alert_raised").expectations)


def test_broken_suites_are_reported(tmp_path: Path) -> None:
    with pytest.raises(QualityError, match="no expectation suite"):
        load_suite("xid_raised", tmp_path)
    (tmp_path / "xid_raised.json").write_text("{not json")
    with pytest.raises(QualityError, match="not valid JSON"):
        load_suite("xid_raised", tmp_path)
    raw = json.loads(json.dumps(load_suite("xid_raised").raw))
    raw["expectations"][0]["kwargs"]["column_set"] = {"$PARAMETER": "whatever"}
    (tmp_path / "xid_raised.json").write_text(json.dumps(raw))
    with pytest.raises(QualityError, match="unknown parameter"):
        load_suite("xid_raised", tmp_path)
