"""Incidents → ``IncidentReported`` records with deterministic ids, and inventory for new hosts.

The id hashes what identifies an incident (host, start, class, component), never the file or
the run, so importing the same history twice, from any file, yields the same ids: rows repeating
an id in one file are duplicates, and ids already on Kafka are not sent again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from producers.importer.incidents import Incident
from producers.importer.mapping import CauseLookup, HistoryMapping
from schemas import HostInventoried, IncidentReported
from schemas.taxonomy import IMPORTED_RACK


def incident_id(incident: Incident) -> str:
    parts = (incident.host_id, incident.start_ts, incident.source_class, incident.component or "")
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()
    return f"inc-{digest[:24]}"


@dataclass(frozen=True, slots=True)
class Prepared:
    """An import's records, and the rows that repeat an incident already in the file."""

    records: list[dict[str, Any]]
    duplicate_rows: list[tuple[int, int]]  # (row, row it repeats)


def incident_records(
    incidents: Iterable[Incident], mapping: HistoryMapping, clusters: Mapping[str, str]
) -> Prepared:
    """One record per distinct incident; ``clusters`` gives known hosts' clusters (else the mapping's)."""
    lookup = CauseLookup(mapping)
    default_cluster = mapping.inventory.cluster
    seen: dict[str, int] = {}
    records: list[dict[str, Any]] = []
    duplicates: list[tuple[int, int]] = []
    for inc in incidents:
        event_id = incident_id(inc)
        first = seen.get(event_id)
        if first is not None:
            duplicates.append((inc.row, first))
            continue
        seen[event_id] = inc.row
        cause, kind = lookup(inc.source_class)
        records.append(
            IncidentReported(
                event_id=event_id,
                host_id=inc.host_id,
                cluster=clusters.get(inc.host_id, default_cluster),
                ts=inc.start_ts,
                payload={
                    "cause": cause,
                    "source_class": inc.source_class,
                    "source_text": inc.source_text,
                    "component": inc.component,
                    "component_kind": inc.component_kind or kind,
                    "start_ts": inc.start_ts,
                    "end_ts": inc.end_ts,
                },
            ).to_record()
        )
    return Prepared(records, duplicates)


def natural_key(host_id: str) -> tuple[Any, ...]:
    """``node-2`` before ``node-10``."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", host_id))


def inventory_records(
    hosts: Iterable[str], known: Iterable[str], mapping: HistoryMapping, install_ts: int
) -> list[dict[str, Any]]:
    """A ``HostInventoried`` for every host not in ``known``.

    Hosts are laid out in natural order in domains of ``inventory.domain_size``, counted over every
    host of the import, so a host gets the same domain whichever of its peers were known before.
    """
    inv = mapping.inventory
    known_set = set(known)
    out = []
    for index, host in enumerate(sorted(set(hosts), key=natural_key)):
        if host in known_set:
            continue
        domain = f"{inv.domain_prefix}{index // inv.domain_size:03d}"
        out.append(
            HostInventoried(
                event_id=f"inv-{host}-imported",
                host_id=host,
                cluster=inv.cluster,
                ts=install_ts,
                payload={
                    "rack": IMPORTED_RACK,
                    "fabric": inv.fabric,
                    "maintenance_domain": domain,
                    "sku": inv.sku,
                    "install_ts": install_ts,
                    "gpu_count": inv.gpu_count,
                    "nic_ports": inv.nic_ports,
                },
            ).to_record()
        )
    return out
