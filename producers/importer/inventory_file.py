"""An inventory file: every host of the fleet with its layout, fault-free hosts included.

One row per host (CSV, JSON lines or a JSON array): rack, maintenance domain, cluster, fabric,
install date, SKU, GPU and NIC counts; an empty cell takes the mapping's ``[inventory]`` default.
Pure: a row that cannot be read is a ``BadRow`` with its reason and the rest go on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from producers.importer.incidents import RowError, parse_time
from producers.importer.mapping import HistoryMapping, InventoryDefaults
from producers.importer.sources import BadRow, Row, detect_format, read_rows
from schemas.taxonomy import IMPORTED_RACK

FABRICS = ("roce", "infiniband")
# positions of the cells in a Row (InventoryColumns.wanted())
HOST, RACK, DOMAIN, CLUSTER, FABRIC, INSTALL, SKU, GPUS, NICS = range(9)


@dataclass(frozen=True, slots=True)
class HostLayout:
    """Where a host sits, as the inventory file says; ``domain`` None: laid out like an unknown host."""

    host_id: str
    rack: str
    domain: str | None
    cluster: str
    fabric: str
    install_ts: int | None
    sku: str
    gpu_count: int
    nic_ports: int


@dataclass(frozen=True, slots=True)
class InventoryFile:
    hosts: dict[str, HostLayout]
    bad_rows: list[BadRow]
    source: str


def _count(text: str, default: int, column: str) -> int:
    if not text:
        return default
    try:
        value = int(float(text))
    except ValueError:
        raise RowError(f"{column} {text!r} is not a number") from None
    if not 0 <= value <= 64:
        raise RowError(f"{column} {value} is out of range (0-64)")
    return value


def _layout(row: Row, mapping: HistoryMapping, start_ms: int | None) -> HostLayout:
    v, inv, c = row.values, mapping.inventory, mapping.inventory.columns
    if not v[HOST]:
        raise RowError(f"no host in column {c.host!r}")
    fabric = (v[FABRIC] or inv.fabric).casefold()
    if fabric not in FABRICS:
        raise RowError(f"fabric {v[FABRIC]!r} is neither roce nor infiniband")
    install = parse_time(v[INSTALL], mapping, start_ms)
    return HostLayout(
        host_id=inv.host_prefix + v[HOST],
        rack=v[RACK] or (IMPORTED_RACK if install is None else "unknown"),
        domain=v[DOMAIN] or None,
        cluster=v[CLUSTER] or inv.cluster,
        fabric=fabric,
        install_ts=install,
        sku=v[SKU] or inv.sku,
        gpu_count=_count(v[GPUS], inv.gpu_count, c.gpu_count),
        nic_ports=_count(v[NICS], inv.nic_ports, c.nic_ports),
    )


def read_inventory(path: Path, mapping: HistoryMapping, start_ms: int | None) -> InventoryFile:
    """Every host the file lists (a host listed twice: its last row wins); SourceFileError if unreadable."""
    columns = mapping.inventory.columns
    rows, bad = read_rows(path, detect_format(path), (columns.host,), columns.wanted())
    hosts: dict[str, HostLayout] = {}
    for row in rows:
        try:
            layout = _layout(row, mapping, start_ms)
        except RowError as exc:
            bad.append(BadRow(row.number, str(exc)))
            continue
        hosts[layout.host_id] = layout
    return InventoryFile(hosts, sorted(bad, key=lambda b: b.number), str(path))


def default_layout(host_id: str, domain: str, inv: InventoryDefaults) -> HostLayout:
    """The layout of a host no inventory file lists: the mapping's defaults, rack ``imported``."""
    return HostLayout(
        host_id, IMPORTED_RACK, domain, inv.cluster, inv.fabric, None, inv.sku, inv.gpu_count, inv.nic_ports
    )
