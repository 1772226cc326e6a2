"""One import, start to end: read, map, compare with what the fleet knows, send, summarise.

``plan_import`` is pure (file and mapping in, records and summary out); ``run_import`` adds
Kafka. Both are what the ``fleetpulse import`` command and the benchmark call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from producers.importer.coverage import ImportSummary, inventory_summary, summarize
from producers.importer.hardware import hardware_records
from producers.importer.incidents import CLASS, COMPONENT, HOST, KIND, to_incidents
from producers.importer.inventory_file import read_inventory
from producers.importer.kafka_io import FleetView, read_fleet, send
from producers.importer.mapping import HistoryMapping
from producers.importer.records import incident_records, inventory_records
from producers.importer.sources import SourceFormat, detect_format, nested_object_warnings, read_rows
from producers.progress import StepUpdate, no_steps
from producers.sinks.kafka import KafkaSink

if TYPE_CHECKING:
    from ground.settings import Settings


@dataclass(frozen=True)
class ImportPlan:
    records: list[dict[str, Any]]
    inventory: list[dict[str, Any]]
    summary: ImportSummary
    hardware: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # for the repeat-offender rules


def plan_import(
    path: Path,
    mapping: HistoryMapping,
    *,
    start_ms: int | None,
    fmt: SourceFormat | None = None,
    fleet: FleetView | None = None,
    inventory: Path | None = None,
    progress: StepUpdate = no_steps,
) -> ImportPlan:
    """What an import of ``path`` would send, given what the fleet already holds (nothing when None).

    ``inventory`` (else the mapping's ``[inventory] file``) lists every host with its layout.
    """
    fleet = fleet or FleetView()
    inventory = inventory or (Path(mapping.inventory.file) if mapping.inventory.file else None)
    listed = read_inventory(inventory, mapping, start_ms) if inventory else None
    wanted = mapping.columns.wanted()
    rows, unreadable = read_rows(path, fmt or detect_format(path), mapping.columns.required(), wanted)
    progress("rows read", len(rows), 0)
    incidents, bad = to_incidents(rows, mapping, start_ms)
    progress("incidents paired", len(incidents), 0)
    listed_hosts = listed.hosts if listed else {}
    clusters = fleet.clusters | {h: x.cluster for h, x in listed_hosts.items()}
    prepared = incident_records(incidents, mapping, clusters)
    bad_rows = sorted(unreadable + bad, key=lambda b: b.number)
    summary = summarize(prepared.records, bad_rows, prepared.duplicate_rows)
    fresh = [r for r in prepared.records if r["event_id"] not in fleet.incident_ids]
    hosts = {r["host_id"] for r in prepared.records}
    first = min((r["ts"] for r in prepared.records), default=start_ms or 0)
    layout = inventory_records(
        hosts,
        fleet.clusters,
        mapping,
        start_ms if start_ms is not None else first,
        listed=listed_hosts,
        known_layouts=fleet.layouts,
    )
    known = fleet.clusters.keys() | listed_hosts.keys()  # hosts the fleet or the inventory file knows
    summary = dataclasses.replace(
        summary,
        new_hosts=[r["host_id"] for r in layout if r["host_id"] not in known],  # laid out with the defaults
        already_imported=len(prepared.records) - len(fresh),
        warnings=nested_object_warnings(rows, wanted, (HOST, CLASS, COMPONENT, KIND)),
        inventory=inventory_summary(listed, hosts, layout) if listed else None,
    )
    classes = {r["payload"]["source_class"] for r in fresh}
    hardware = hardware_records(fresh, {c: mapping.signal_of(c) for c in classes})
    return ImportPlan(fresh, layout, dataclasses.replace(summary, hardware=len(hardware)), hardware)


def run_import(
    settings: Settings,
    path: Path,
    mapping: HistoryMapping,
    *,
    start_ms: int | None,
    fmt: SourceFormat | None = None,
    read: Callable[[Settings], FleetView] = read_fleet,
    inventory: Path | None = None,
    progress: StepUpdate = no_steps,
    sink_factory: Callable[[Settings], KafkaSink] | None = None,
) -> ImportSummary:
    """Import ``path`` into Kafka; returns the summary with what was sent (``progress``: steps as they go)."""
    fleet = read(settings)
    progress("known hosts and imported incidents read", len(fleet.incident_ids), 0)
    plan = plan_import(
        path, mapping, start_ms=start_ms, fmt=fmt, fleet=fleet, inventory=inventory, progress=progress
    )
    sent = send(
        settings,
        plan.inventory,
        plan.records,
        hardware=plan.hardware,
        sink_factory=sink_factory,
        progress=progress,
    )
    return dataclasses.replace(
        plan.summary, sent=sent, hardware_sent=len(plan.hardware)
    )  # send raised unless all were acked
