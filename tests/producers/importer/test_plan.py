"""A whole import without Kafka: ids, duplicates, what the fleet already holds, new hosts, coverage."""

from __future__ import annotations

from pathlib import Path

from producers.importer import HistoryMapping, plan_import
from producers.importer.coverage import render
from producers.importer.incidents import parse_start
from producers.importer.kafka_io import FleetView
from producers.importer.mapping import InventoryDefaults
from producers.importer.records import inventory_records
from schemas.taxonomy import IMPORTED_RACK

START = parse_start("2024-01-01")
MAPPING = HistoryMapping(
    causes={"GPU": "faulty_gpu"}, inventory=InventoryDefaults(cluster="c9", domain_size=2)
)
CSV = (
    "host,start,end,class,text,component\n"
    "n1,0,1,GPU/lost,gone,3\n"
    "n2,1,2,Mystery,??,\n"
    "n1,0,1,GPU/lost,gone again,3\n"  # same host, start, class and component: a duplicate
    "n10,2,,GPU/lost,,\n"
)


def write(tmp_path: Path, text: str = CSV) -> Path:
    path = tmp_path / "h.csv"
    path.write_text(text)
    return path


def test_ids_are_deterministic_and_duplicates_are_skipped(tmp_path: Path) -> None:
    first = plan_import(write(tmp_path), MAPPING, start_ms=START)
    again = plan_import(write(tmp_path), MAPPING, start_ms=START)
    assert [r["event_id"] for r in first.records] == [r["event_id"] for r in again.records]
    assert len(first.records) == 3
    assert first.summary.duplicate_rows == [(4, 2)]
    assert first.records[0]["payload"]["source_text"] == "gone"


def test_what_the_fleet_holds_is_not_sent_again(tmp_path: Path) -> None:
    first = plan_import(write(tmp_path), MAPPING, start_ms=START)
    fleet = FleetView(
        clusters={"n1": "c1", "n2": "c1", "n10": "c1"},
        incident_ids={r["event_id"] for r in first.records},
    )
    second = plan_import(write(tmp_path), MAPPING, start_ms=START, fleet=fleet)
    assert second.records == [] and second.inventory == []
    assert second.summary.already_imported == 3
    assert second.summary.incidents == 3  # the file still holds them, for coverage


def test_unknown_hosts_get_an_inventory_record_in_natural_order(tmp_path: Path) -> None:
    plan = plan_import(write(tmp_path), MAPPING, start_ms=START, fleet=FleetView(clusters={"n2": "c1"}))
    inv = {r["host_id"]: r for r in plan.inventory}
    assert sorted(inv) == ["n1", "n10"]
    assert plan.summary.new_hosts == ["n1", "n10"]
    # natural order n1, n2, n10: two per domain
    assert inv["n1"]["payload"]["maintenance_domain"] == "imported-md000"
    assert inv["n10"]["payload"]["maintenance_domain"] == "imported-md001"
    assert inv["n1"]["payload"]["rack"] == IMPORTED_RACK and inv["n1"]["payload"]["install_ts"] == START
    clusters = {r["host_id"]: r["cluster"] for r in plan.records}
    assert clusters == {"n1": "c9", "n2": "c1", "n10": "c9"}
    assert inventory_records(["a"], ["a"], MAPPING, START) == []


def test_coverage_counts_unclassified_and_lists_unmapped_classes(tmp_path: Path) -> None:
    summary = plan_import(write(tmp_path), MAPPING, start_ms=START).summary
    assert (summary.incidents, summary.classified) == (3, 2)
    assert summary.by_cause == {"faulty_gpu": 2, "unclassified": 1}
    assert summary.unmapped_classes == [("Mystery", 1)]
    text = "\n".join(render(summary, source="h.csv", dry_run=True))
    assert "coverage: 2 of 3 incidents classified (66.7%)" in text
    assert "'Mystery': 1" in text
    assert "duplicate row 4: the same incident as row 2" in text
    assert "dry run: nothing sent" in text


def test_incidents_naming_only_the_host_reach_the_repeat_offender_rules(tmp_path: Path) -> None:
    """A trace's "NIC lost" twice on one node, no port named: a host-level NIC replacement, not a cable."""
    from schemas import Codec
    from streams.core.classify import classify
    from streams.core.policy import load_policy
    from streams.core.repeat import observe

    mapping = HistoryMapping(
        causes={"Network/NIC lost": "nic", "GPU/lost": "faulty_gpu"},
        signals={"Network/NIC lost": "nic_lost", "GPU/lost": "gpu_lost"},
    )
    csv = "host,start,end,class,text,component\nn1,0,1,Network/NIC lost,,\nn1,9,10,Network/NIC lost,,\nn2,0,1,GPU/lost,,5\n"
    plan = plan_import(write(tmp_path, csv), mapping, start_ms=START)
    hw = {r["event_id"]: r for r in plan.hardware}
    assert sorted(hw) == sorted(f"{r['event_id']}-hw" for r in plan.records)
    assert plan.summary.hardware == 3
    assert "would send 3 hardware events" in "\n".join(render(plan.summary, source="h.csv", dry_run=True))
    gpu_lost = next(r for r in plan.hardware if r["host_id"] == "n2")
    assert (gpu_lost["payload"]["gpu"], gpu_lost["payload"]["xid"]) == (5, 79)  # the component named the GPU
    codec, policy = Codec(), load_policy()
    table: dict = {}
    found = []
    for record in plan.hardware:
        signal = classify(codec.decode(codec.encode(record)).record, policy)
        assert signal is not None
        states, finding = observe(signal, table, policy)
        table.update(states)
        found += [finding] if finding else []
    assert [(x.rule, x.scope_key, x.recommended_action) for x in found] == [
        ("nic_lost_repeat_host_unknown", "n1", "nic_replacement")
    ]
    # already imported: nothing, hardware included, is sent again
    fleet = FleetView(clusters={"n1": "c1", "n2": "c1"}, incident_ids={r["event_id"] for r in plan.records})
    assert plan_import(write(tmp_path, csv), mapping, start_ms=START, fleet=fleet).hardware == []
