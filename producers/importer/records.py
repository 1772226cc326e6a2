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
from producers.importer.inventory_file import HostLayout, default_layout
from producers.importer.mapping import CauseLookup, HistoryMapping
from schemas import HostInventoried, IncidentReported


def incident_id(incident: Incident) -> str:
    key = (
        f"{incident.host_id}\x1f{incident.start_ts}\x1f{incident.source_class}\x1f{incident.component or ''}"
    )
    return f"inc-{hashlib.sha256(key.encode()).hexdigest()[:24]}"


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
    event_type, version = IncidentReported.EVENT_TYPE, IncidentReported.SCHEMA_VERSION
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
            {  # IncidentReported(...).to_record(), written out: this loop runs once per incident
                "event_id": event_id,
                "event_type": event_type,
                "schema_version": version,
                "host_id": inc.host_id,
                "cluster": clusters.get(inc.host_id, default_cluster),
                "ts": inc.start_ts,
                "agent_seq": 0,
                "payload": {
                    "cause": cause,
                    "source_class": inc.source_class,
                    "source_text": inc.source_text,
                    "component": inc.component,
                    "component_kind": inc.component_kind or kind,
                    "start_ts": inc.start_ts,
                    "end_ts": inc.end_ts,
                },
            }
        )
    return Prepared(records, duplicates)


def natural_key(host_id: str) -> tuple[Any, ...]:
    """``node-2`` before ``node-10``."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", host_id))


def layout_digest(payload: Mapping[str, Any], cluster: str) -> str:
    """What an inventory record says of a host's place, to tell whether a file moves a known host."""
    parts = (cluster, *(payload[k] for k in ("rack", "maintenance_domain", "fabric", "install_ts", "sku")))
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:12]


def inventory_records(
    hosts: Iterable[str],
    known: Iterable[str],
    mapping: HistoryMapping,
    install_ts: int,
    *,
    listed: Mapping[str, HostLayout] | None = None,
    known_layouts: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """A ``HostInventoried`` for every host not in ``known``, and for every ``listed`` one whose layout changed.

    ``listed`` is an inventory file's hosts (fault-free ones too); the others are laid out in natural
    order in domains of ``inventory.domain_size``, counted over every host of the import, so a host
    gets the same domain whichever of its peers were known before. ``known_layouts``: host → the
    ``layout_digest`` of its newest inventory record.
    """
    inv = mapping.inventory
    listed = listed or {}
    known_set, digests = set(known), known_layouts or {}
    out = []
    for index, host in enumerate(sorted(set(hosts) | set(listed), key=natural_key)):
        layout = listed.get(host) or default_layout(
            host, f"{inv.domain_prefix}{index // inv.domain_size:03d}", inv
        )
        installed = layout.install_ts if layout.install_ts is not None else install_ts
        payload: dict[str, Any] = {
            "rack": layout.rack,
            "fabric": layout.fabric,
            "maintenance_domain": layout.domain or f"{inv.domain_prefix}{index // inv.domain_size:03d}",
            "sku": layout.sku,
            "install_ts": installed,
            "gpu_count": layout.gpu_count,
            "nic_ports": layout.nic_ports,
        }
        digest = layout_digest(payload, layout.cluster)
        if host in known_set and (host not in listed or digests.get(host) == digest):
            continue
        event_id = f"inv-{host}-{digest}" if host in listed else f"inv-{host}-imported"
        out.append(
            HostInventoried(
                event_id=event_id, host_id=host, cluster=layout.cluster, ts=installed, payload=payload
            ).to_record()
        )
    return out
