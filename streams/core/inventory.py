"""The inventory table: host -> cluster, rack, maintenance domain (last HostInventoried wins), and versions.

Fed by a ``LogTailer`` over the compacted ``fleet.inventory``; the planner sizes its domain
buffers from it, and findings are routed to the planner by the host's domain. Agents' version
reports (``HostVersionsReported``) travel beside the inventory; change campaigns verify hosts by them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

UNASSIGNED = "unassigned"


@dataclass(frozen=True, slots=True)
class HostInfo:
    host_id: str
    cluster: str
    rack: str
    domain: str
    fabric: str
    install_ts: int
    gpu_count: int


class Inventory:
    """In-memory host table with domain sizes kept up to date."""

    def __init__(self) -> None:
        self.hosts: dict[str, HostInfo] = {}
        self._sizes: Counter[str] = Counter()
        self._members: dict[str, set[str]] = {}
        self.versions: dict[str, dict[str, tuple[str, int]]] = {}  # host -> component -> (version, ts)
        self.changes = 0  # records applied (readers memoise on it)

    def apply(self, record: Mapping[str, Any]) -> None:
        self.changes += 1
        if record.get("event_type") == "HostVersionsReported":
            mine = self.versions.setdefault(record["host_id"], {})
            for component, version in record["payload"].items():
                fresh = component not in mine or mine[component][1] <= record["ts"]
                if component not in ("reason", "actor") and version is not None and fresh:
                    mine[component] = (version, record["ts"])
            return
        if record.get("event_type") != "HostInventoried":
            return
        p = record["payload"]
        info = HostInfo(
            host_id=record["host_id"],
            cluster=record["cluster"],
            rack=p["rack"],
            domain=p["maintenance_domain"],
            fabric=p["fabric"],
            install_ts=p["install_ts"],
            gpu_count=p["gpu_count"],
        )
        old = self.hosts.get(info.host_id)
        if old is not None:
            self._sizes[old.domain] -= 1
            self._members[old.domain].discard(old.host_id)
        self.hosts[info.host_id] = info
        self._sizes[info.domain] += 1
        self._members.setdefault(info.domain, set()).add(info.host_id)

    def domain_of(self, host_id: str) -> str:
        info = self.hosts.get(host_id)
        return info.domain if info else UNASSIGNED

    def versions_of(self, host_id: str) -> Mapping[str, tuple[str, int]]:
        return self.versions.get(host_id, {})

    def cluster_of(self, host_id: str) -> str:
        info = self.hosts.get(host_id)
        return info.cluster if info else UNASSIGNED

    def domain_cluster(self, domain: str) -> str:
        """The cluster of a domain's hosts (a domain lies in one cluster)."""
        members = self._members.get(domain)
        return self.hosts[min(members)].cluster if members else UNASSIGNED

    def hosts_in(self, domain: str) -> frozenset[str]:
        """Hosts the inventory puts in ``domain`` (the planner counts those out for any reason)."""
        return frozenset(self._members.get(domain, ()))

    def clusters(self) -> set[str]:
        return {h.cluster for h in self.hosts.values()}

    def domain_size(self, domain: str) -> int:
        return self._sizes.get(domain, 0)

    def domains(self) -> dict[str, int]:
        return {d: n for d, n in sorted(self._sizes.items()) if n > 0}
