"""The incident and operator vocabularies, and the lake tables their events land in."""

from __future__ import annotations

import json

from schemas import IncidentReported, OperatorEventRecorded, SchemaRegistry
from schemas.arrow import table_name, table_schema
from schemas.taxonomy import (
    CLOSING_KINDS,
    INCIDENT_CAUSES,
    OPENING_KINDS,
    OPERATIONS,
    OPERATOR_EVENT_KINDS,
    UNCLASSIFIED,
)


def test_causes_keep_llama3_classes_and_unclassified() -> None:
    for cause in ("faulty_gpu", "hbm3", "network", "psu", "power", "fan", "cpu", "storage", UNCLASSIFIED):
        assert cause in INCIDENT_CAUSES
    assert len(set(INCIDENT_CAUSES)) == len(INCIDENT_CAUSES)


def test_every_operator_kind_opens_or_closes_an_outage() -> None:
    assert set(OPERATOR_EVENT_KINDS) == OPENING_KINDS | CLOSING_KINDS
    assert not OPENING_KINDS & CLOSING_KINDS


def test_schema_docs_list_the_vocabularies() -> None:
    registry = SchemaRegistry.load()
    inc = registry.latest("IncidentReported").raw["fields"][-1]["type"]["fields"]
    cause_doc = next(f["doc"] for f in inc if f["name"] == "cause")
    assert all(c in cause_doc for c in INCIDENT_CAUSES)
    ops = registry.latest("OperatorEventRecorded").raw["fields"][-1]["type"]["fields"]
    kind_doc = next(f["doc"] for f in ops if f["name"] == "kind")
    assert all(k in kind_doc for k in OPERATOR_EVENT_KINDS)
    assert json.dumps(inc)  # plain JSON, readable by other languages' Avro tools


def test_schema_docs_list_every_operation() -> None:
    registry = SchemaRegistry.load()
    for event_type, name in (
        ("MaintenanceActionRecorded", "operation"),
        ("FindingRaised", "recommended_action"),
    ):
        fields = registry.latest(event_type).raw["fields"][-1]["type"]["fields"]
        doc = next(f["doc"] for f in fields if f["name"] == name)
        assert all(op in doc for op in OPERATIONS), (event_type, doc)


def test_lake_tables_are_named_for_their_contents() -> None:
    assert table_name(IncidentReported.EVENT_TYPE) == "incidents"
    assert table_name(OperatorEventRecorded.EVENT_TYPE) == "operator_events"
    assert table_name("HostSampled") == "host_sampled"
    names = table_schema("IncidentReported").names
    assert {
        "cause",
        "source_class",
        "source_text",
        "component",
        "component_kind",
        "start_ts",
        "end_ts",
    } <= set(names)
    assert {"kind", "actor", "reason", "ticket_id", "cause"} <= set(
        table_schema("OperatorEventRecorded").names
    )
