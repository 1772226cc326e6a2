"""Rows → incidents: both file shapes, the three formats, times, pairing and bad rows with their numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from producers.importer import HistoryMapping, SourceFileError
from producers.importer.incidents import parse_start, parse_time, to_incidents
from producers.importer.mapping import Columns, TimeFormat
from producers.importer.sources import read_rows

START = parse_start("2024-01-01")
DAY = 86_400_000
EVENTS = HistoryMapping(
    columns=Columns(host="node", time="t", event="ev", source_class="type", source_text="text")
)


def test_times_read_relative_absolute_and_epoch() -> None:
    m = HistoryMapping()
    assert parse_time("1.5", m, START) == START + 36 * 3_600_000
    assert parse_time(2, m, START) == START + 2 * DAY
    assert parse_time("2024-01-02T00:00:00Z", m, None) == START + DAY
    assert parse_time("2024-01-02 00:00", m, None) == START + DAY  # no zone: UTC
    assert parse_time("", m, START) is None
    assert parse_time("1704067200", HistoryMapping(time=TimeFormat(epoch="s")), None) == START
    with pytest.raises(ValueError, match="needs --start"):
        parse_time("3", m, None)
    with pytest.raises(ValueError, match="unparseable"):
        parse_time("yesterday", m, START)


def test_interval_rows_become_incidents_and_bad_rows_keep_their_numbers(tmp_path: Path) -> None:
    path = tmp_path / "i.csv"
    path.write_text(
        "host,start,end,class,text,component\n"
        "h1,0,1,GPU/lost,gone,3\n"
        "h2,1,,NIC/lost,,\n"
        "h3,soon,2,GPU/lost,,\n"
        "h4,3,2,GPU/lost,,\n"
        ",1,2,GPU/lost,,\n"
        "h5,1\n"
    )
    rows, unreadable = read_rows(
        path, "csv", HistoryMapping().columns.required(), HistoryMapping().columns.wanted()
    )
    incidents, bad = to_incidents(rows, HistoryMapping(), START)
    assert [(b.number, b.reason) for b in unreadable] == [(7, "2 cells, the header has 6")]
    assert [(i.row, i.host_id, i.start_ts, i.end_ts, i.component) for i in incidents] == [
        (2, "h1", START, START + DAY, "3"),
        (3, "h2", START + DAY, None, None),
    ]
    assert [(b.number, b.reason.split(" ")[0]) for b in bad] == [(4, "unparseable"), (5, "ends"), (6, "no")]


def test_event_rows_pair_per_host_class_and_component(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    lines = [
        {"node": 7, "t": 0, "ev": "start", "type": "GPU/DBE", "text": "a"},
        {"node": 7, "t": 1, "ev": "start", "type": "Fan", "text": "b"},
        {"node": 7, "t": 2, "ev": "end", "type": "GPU/DBE"},
        {"node": 7, "t": 2, "ev": "start", "type": "GPU/DBE", "text": "c"},  # back to back
        {"node": 8, "t": 3, "ev": "end", "type": "Fan"},  # no start on this host
        {"node": 7, "t": 4, "ev": "END", "type": "gpu/dbe"},
        "not an object",
        {"node": 7, "t": 5, "ev": "paused", "type": "Fan"},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n{broken\n")
    rows, unreadable = read_rows(path, "jsonl", EVENTS.columns.required(), EVENTS.columns.wanted())
    incidents, bad = to_incidents(rows, EVENTS, START)
    got = sorted((i.host_id, i.source_class, i.source_text, i.start_ts, i.end_ts) for i in incidents)
    assert got == [
        ("7", "Fan", "b", START + DAY, None),
        ("7", "GPU/DBE", "a", START, START + 2 * DAY),
        ("7", "GPU/DBE", "c", START + 2 * DAY, START + 4 * DAY),
    ]
    reasons = {b.number: b.reason for b in unreadable + bad}
    assert set(reasons) == {5, 7, 8, 9}
    assert "no open start" in reasons[5] and "not an object" in reasons[7]
    assert "neither a start" in reasons[8] and "not JSON" in reasons[9]


def test_json_arrays_and_wrong_columns(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text(json.dumps([{"host": "h", "start": "2024-01-01", "class": "X"}, 3]))
    rows, unreadable = read_rows(path, "json", HistoryMapping().columns.required())
    assert [r.number for r in rows] == [1] and [b.number for b in unreadable] == [2]
    path.write_text('{"host": "h"}')
    with pytest.raises(SourceFileError, match="array"):
        read_rows(path, "json", ())
    csv = tmp_path / "w.csv"
    csv.write_text("server,when,what\nh,0,X\n")
    with pytest.raises(
        SourceFileError, match="wrong columns: missing host, start, class; the file has server"
    ):
        read_rows(csv, "csv", HistoryMapping().columns.required())


def test_a_zero_length_incident_pairs_its_start_and_end(tmp_path: Path) -> None:
    """Start and end at one time: the start sorts first, so the end closes it (issue 35, item 2)."""
    path = tmp_path / "z.csv"
    path.write_text("node_id,time,event,fault_type\n7,1.5,start,GPU/lost\n7,1.5,end,GPU/lost\n")
    mapping = HistoryMapping(
        columns=Columns(host="node_id", time="time", event="event", source_class="fault_type")
    )
    rows, _ = read_rows(path, "csv", mapping.columns.required(), mapping.columns.wanted())
    incidents, bad = to_incidents(rows, mapping, START)
    assert bad == []
    at = START + 36 * 3_600_000
    assert [(i.host_id, i.start_ts, i.end_ts) for i in incidents] == [("7", at, at)]
