"""An inventory file lays out every host (fault-free ones too); nested fault types read by dotted paths."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from fleetpulse.cli import app as cli
from producers.importer import HistoryMapping, load_mapping, plan_import
from producers.importer.coverage import render
from producers.importer.incidents import parse_start
from producers.importer.kafka_io import FleetView
from producers.importer.mapping import Columns, InventoryDefaults
from producers.importer.records import layout_digest

START = parse_start("2024-01-01")
DAY = 86_400_000
MAPPING = HistoryMapping(
    columns=Columns(host="node_id", time="time", event="event", source_class="fault_type"),
    inventory=InventoryDefaults(host_prefix="node-", domain_size=2, cluster="c0"),
    causes={"GPU": "faulty_gpu"},
)
TRACE = "node_id,time,event,fault_type\n1,1,start,GPU/lost\n1,2,end,GPU/lost\n9,3,start,GPU/lost\n"
HOSTS = (
    "host,rack,domain,cluster,fabric,install_date\n"
    "1,r1,md-a,c1,roce,-30\n"
    "2,r1,md-a,c1,roce,-30\n"
    "3,r2,md-b,c1,infiniband,2023-06-01\n"
    "4,,,,,\n"
    "5,r3,md-b,c1,token-ring,\n"
)


def files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "t.csv").write_text(TRACE)
    (tmp_path / "hosts.csv").write_text(HOSTS)
    return tmp_path / "t.csv", tmp_path / "hosts.csv"


def test_every_listed_host_is_inventoried_with_its_layout(tmp_path: Path) -> None:
    trace, hosts = files(tmp_path)
    plan = plan_import(trace, MAPPING, start_ms=START, inventory=hosts)
    inv = {r["host_id"]: r for r in plan.inventory}
    # 4 readable rows (fault-free 2, 3, 4 included) and node-9, named by an incident only
    assert sorted(inv) == ["node-1", "node-2", "node-3", "node-4", "node-9"]
    one = inv["node-1"]
    assert (one["cluster"], one["payload"]["rack"], one["payload"]["maintenance_domain"]) == (
        "c1",
        "r1",
        "md-a",
    )
    assert (one["payload"]["fabric"], one["payload"]["install_ts"]) == ("roce", START - 30 * DAY)
    assert inv["node-3"]["payload"]["install_ts"] == parse_start("2023-06-01")
    # empty cells take the defaults; an unlisted host keeps the imported layout
    four, nine = inv["node-4"], inv["node-9"]
    assert (four["cluster"], four["payload"]["rack"], four["payload"]["fabric"]) == (
        "c0",
        "imported",
        "infiniband",
    )
    assert nine["payload"]["rack"] == "imported" and nine["payload"]["maintenance_domain"].startswith(
        "imported-md"
    )
    assert {r["host_id"]: r["cluster"] for r in plan.records} == {"node-1": "c1", "node-9": "c0"}
    s = plan.summary.inventory
    assert s is not None and (s.listed, s.fault_free, s.records) == (4, 3, 5)
    text = "\n".join(render(plan.summary, source="t.csv", dry_run=False))
    assert f"inventory {hosts}: 4 hosts, 3 with no incident, 1 bad row" in text
    assert "inventory row 6: fabric 'token-ring' is neither roce nor infiniband" in text


def test_a_known_host_is_sent_again_only_when_its_layout_changed(tmp_path: Path) -> None:
    trace, hosts = files(tmp_path)
    first = plan_import(trace, MAPPING, start_ms=START, inventory=hosts)
    fleet = FleetView(
        clusters={r["host_id"]: r["cluster"] for r in first.inventory},
        layouts={r["host_id"]: layout_digest(r["payload"], r["cluster"]) for r in first.inventory},
    )
    assert plan_import(trace, MAPPING, start_ms=START, inventory=hosts, fleet=fleet).inventory == []
    (tmp_path / "hosts.csv").write_text(HOSTS.replace("2,r1,md-a", "2,r7,md-c"))
    moved = plan_import(trace, MAPPING, start_ms=START, inventory=hosts, fleet=fleet).inventory
    assert [(r["host_id"], r["payload"]["maintenance_domain"]) for r in moved] == [("node-2", "md-c")]
    assert moved[0]["event_id"] != next(r["event_id"] for r in first.inventory if r["host_id"] == "node-2")


def test_the_mapping_names_the_inventory_file_relative_to_itself(tmp_path: Path) -> None:
    trace, _ = files(tmp_path)
    (tmp_path / "m.toml").write_text(
        '[columns]\nhost = "node_id"\ntime = "time"\nevent = "event"\nsource_class = "fault_type"\n'
        '[inventory]\nfile = "hosts.csv"\nhost_prefix = "node-"\n[inventory.columns]\ninstall = "install_date"\n'
    )
    plan = plan_import(trace, load_mapping(tmp_path / "m.toml"), start_ms=START)
    assert plan.summary.inventory is not None and plan.summary.inventory.fault_free == 3


def test_cli_inventory_option(tmp_path: Path) -> None:
    trace, hosts = files(tmp_path)
    (tmp_path / "m.toml").write_text(
        '[columns]\nhost = "node_id"\ntime = "time"\nevent = "event"\nsource_class = "fault_type"\n'
    )
    args = ["import", str(trace), "--mapping", str(tmp_path / "m.toml"), "--start", "2024-01-01"]
    result = CliRunner().invoke(cli, [*args, "--inventory", str(hosts), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "4 hosts, 3 with no incident" in result.output


NESTED = [
    {
        "node_id": 7,
        "time": 1.5,
        "event": "start",
        "fault_type": {"level1": "GPU", "level2": "DBE", "level3": "x"},
    },
    {
        "node_id": 7,
        "time": 2.0,
        "event": "end",
        "fault_type": {"level1": "GPU", "level2": "DBE", "level3": "x"},
    },
]


def test_nested_fields_are_read_by_dotted_paths(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in NESTED) + "\n")
    columns = Columns(
        host="node_id",
        time="time",
        event="event",
        source_class=("fault_type.level1", "fault_type.level2", "fault_type.level3"),
    )
    mapping = HistoryMapping(columns=columns, causes={"GPU/DBE": "hbm3"})
    plan = plan_import(path, mapping, start_ms=START)
    assert [r["payload"]["source_class"] for r in plan.records] == ["GPU/DBE/x"]
    assert plan.summary.coverage == 1.0 and plan.summary.warnings == []
    # the same in a CSV whose cell holds the JSON object
    csv = tmp_path / "t.csv"
    cell = json.dumps(NESTED[0]["fault_type"]).replace('"', '""')
    csv.write_text(f'node_id,time,event,fault_type\n7,1.5,start,"{cell}"\n7,2,end,"{cell}"\n')
    one_level = HistoryMapping(columns=columns.model_copy(update={"source_class": "fault_type.level2"}))
    assert [r["payload"]["source_class"] for r in plan_import(csv, one_level, start_ms=START).records] == [
        "DBE"
    ]


def test_an_object_read_as_text_is_warned_about_not_silently_unclassified(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in NESTED) + "\n")
    mapping = HistoryMapping(
        columns=Columns(host="node_id", time="time", event="event", source_class="fault_type"),
        causes={"GPU": "faulty_gpu"},
    )
    summary = plan_import(path, mapping, start_ms=START).summary
    assert summary.coverage == 0.0
    (warning,) = summary.warnings
    assert "column 'fault_type' holds a JSON object in 2 of 2 rows" in warning
    assert "fault_type.level1" in "\n".join(render(summary, source="t.jsonl", dry_run=True))
