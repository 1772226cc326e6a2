"""Hostile history files: every out-of-bounds cell is a bad row with its number, never an abort or a wrapped value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleetpulse.cli import app as cli
from producers.importer import HistoryMapping, SourceFileError, plan_import
from producers.importer.encoding import IncidentEncoder
from producers.importer.incidents import parse_start
from producers.importer.mapping import TimeFormat
from schemas import Codec, EncodeError, IncidentReported
from schemas.bounds import MAX_TEXT_CHARS

START = parse_start("2024-01-01")
EPOCH_MS = HistoryMapping(time=TimeFormat(epoch="ms"))
HEADER = "host,start,end,class,text,component\n"


def write(tmp_path: Path, text: str, name: str = "h.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_importers_writer_refuses_values_beyond_a_long() -> None:
    """Finding 3: 1e300 and 2^63 were written as over-long varints that read back as other numbers."""
    encoder = IncidentEncoder(Codec())
    record = IncidentReported(
        event_id="inc-1",
        host_id="n1",
        cluster="c",
        ts=START,
        payload={
            "cause": "psu",
            "source_class": "x",
            "source_text": "",
            "component": None,
            "component_kind": None,
            "start_ts": START,
            "end_ts": None,
        },
    ).to_record()
    assert Codec().decode(encoder.encode(record)).record["ts"] == START
    for bad in (2**63, -(2**63) - 1, 10**300):
        with pytest.raises(EncodeError):
            encoder.encode({**record, "ts": bad})
        with pytest.raises(EncodeError):
            encoder.encode({**record, "payload": {**record["payload"], "end_ts": bad}})


@pytest.mark.parametrize(
    ("start", "why"),
    [
        ("1e300", "beyond any date"),
        ("9223372036854775808", "beyond any date"),
        ("nan", "not a finite"),
        ("inf", "not a finite"),
        ("-1", "before 2000"),
        ("1", "before 2000"),
        ("32503680000000", "after now"),  # year 3000
    ],
)
def test_epoch_times_outside_the_bounds_are_bad_rows(tmp_path: Path, start: str, why: str) -> None:
    """Findings 3, 4 and 5: an absurd or non-finite time is one bad row; the other rows import."""
    path = write(tmp_path, HEADER + f"n1,{start},,GPU,,\nn2,{START},,GPU,,\n")
    plan = plan_import(path, EPOCH_MS, start_ms=None)
    assert [r["host_id"] for r in plan.records] == ["n2"]
    assert [b.number for b in plan.summary.bad_rows] == [2]
    assert why in plan.summary.bad_rows[0].reason


@pytest.mark.parametrize("when", ["0001-01-01", "9999-12-31", "1999-12-31T23:59:59Z", "3000-01-01"])
def test_iso_times_outside_the_bounds_are_bad_rows_and_install_dates_stay_sane(
    tmp_path: Path, when: str
) -> None:
    """Finding 4: one year-1 row made every imported host's install date year 1."""
    path = write(tmp_path, HEADER + f"n1,{when},,GPU,,\nn2,2024-03-01,,GPU,,\nn3,2024-03-02,,GPU,,\n")
    plan = plan_import(path, HistoryMapping(), start_ms=None)
    assert [b.number for b in plan.summary.bad_rows] == [2]
    installs = {r["payload"]["install_ts"] for r in plan.inventory}
    assert installs == {parse_start("2024-03-01")}


@pytest.mark.parametrize("start", ["0001-01-01", "9999-12-31", "1970-01-01"])
def test_start_outside_the_bounds_is_refused(start: str) -> None:
    with pytest.raises(ValueError, match="2000-01-01|after now"):
        parse_start(start)


def test_relative_times_far_beyond_start_are_bad_rows(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "n1,1e15,,GPU,,\nn2,1,,GPU,,\n")
    plan = plan_import(path, HistoryMapping(), start_ms=START)
    assert [r["host_id"] for r in plan.records] == ["n2"]


def test_a_csv_field_over_the_csv_limit_is_a_bad_row(tmp_path: Path) -> None:
    """Finding 5: a 128 KiB+ field aborted the import."""
    huge = "x" * (200 * 1024)
    path = write(tmp_path, HEADER + f'n1,1,,GPU,"{huge}",\nn2,2,,GPU,,\n')
    plan = plan_import(path, HistoryMapping(), start_ms=START)
    assert [r["host_id"] for r in plan.records] == ["n2"]
    assert len(plan.summary.bad_rows) == 1 and "CSV" in plan.summary.bad_rows[0].reason


def test_deep_json_lines_are_bad_rows_and_a_deep_array_is_one_error(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    good = json.dumps({"host": "n2", "start": 1, "class": "GPU"})
    path = write(tmp_path, deep + "\n" + good + "\n", "h.jsonl")
    plan = plan_import(path, HistoryMapping(), start_ms=START)
    assert [r["host_id"] for r in plan.records] == ["n2"]
    assert [b.number for b in plan.summary.bad_rows] == [1]
    with pytest.raises(SourceFileError, match="nested too deeply"):
        plan_import(write(tmp_path, deep, "h.json"), HistoryMapping(), start_ms=START)


def test_nan_and_infinity_json_cells_are_bad_rows(tmp_path: Path) -> None:
    lines = [
        '{"host":"n1","start":NaN,"class":"GPU"}',
        '{"host":"n3","start":Infinity,"class":"GPU"}',
        '{"host":"n4","start":1e999,"class":"GPU"}',
        '{"host":"n2","start":1,"class":"GPU"}',
    ]
    plan = plan_import(write(tmp_path, "\n".join(lines), "h.jsonl"), HistoryMapping(), start_ms=START)
    assert [r["host_id"] for r in plan.records] == ["n2"]
    assert [b.number for b in plan.summary.bad_rows] == [1, 2, 3]


@pytest.mark.parametrize("host", ["h" * 200, "../../etc", "node\x1b[31m", "a b", "nöde", "a/../b"])
def test_hosts_outside_the_id_rule_are_bad_rows(tmp_path: Path, host: str) -> None:
    lines = [
        json.dumps({"host": host, "start": 1, "class": "GPU"}),
        json.dumps({"host": "n2", "start": 1, "class": "GPU"}),
    ]
    plan = plan_import(write(tmp_path, "\n".join(lines), "h.jsonl"), HistoryMapping(), start_ms=START)
    assert [r["host_id"] for r in plan.records] == ["n2"]
    assert [b.number for b in plan.summary.bad_rows] == [1]


def test_texts_are_cut_and_stripped_of_controls(tmp_path: Path) -> None:
    text = "\x1b]0;owned\x07" + "\u202e" + "t" * 20_000
    line = json.dumps({"host": "n1", "start": 1, "class": "GPU\x00", "text": text, "component": "3\x1b"})
    plan = plan_import(write(tmp_path, line, "h.jsonl"), HistoryMapping(), start_ms=START)
    (record,) = plan.records
    p = record["payload"]
    assert (
        len(p["source_text"]) <= MAX_TEXT_CHARS
        and "\x1b" not in p["source_text"]
        and "\u202e" not in p["source_text"]
    )
    assert p["source_class"] == "GPU" and p["component"] == "3"


def test_the_cli_prints_no_terminal_controls(tmp_path: Path) -> None:
    """Finding 13: host ids, classes and reasons with ESC and NUL reached the terminal raw."""
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        json.dumps({"host": "evil\x1b[2J\x00", "start": 1, "class": "GPU"})
        + "\n"
        + json.dumps({"host": "n1", "start": 1, "class": "Odd\x1b[31m\u202eclass"})
        + "\n"
    )
    result = CliRunner().invoke(cli, ["import", str(trace), "--start", "2024-01-01", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x00" not in result.output and "\u202e" not in result.output
    assert "bad row 1" in result.output
