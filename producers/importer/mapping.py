"""The mapping file: which source columns hold what, how times read, and source class → fleetpulse cause.

A class maps through its longest mapped prefix at a ``/`` boundary, case-insensitively, so
``"GPU" = "faulty_gpu"`` covers ``GPU/lost`` unless ``"GPU/DBE"`` says otherwise; a class no
key covers becomes ``unclassified`` (kept verbatim, counted and listed by the import).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from producers.importer.errors import MappingFileError
from producers.importer.hardware import HardwareSignal
from producers.importer.sources import Column
from schemas.taxonomy import UNCLASSIFIED, IncidentCause

TimeUnit = Literal["seconds", "minutes", "hours", "days"]
T = TypeVar("T")
UNIT_MS: dict[str, int] = {"seconds": 1000, "minutes": 60_000, "hours": 3_600_000, "days": 86_400_000}
EXAMPLE_MAPPING = Path(__file__).parent / "mapping.example.toml"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Columns(_Frozen):
    """Source column names. ``time`` + ``event`` set: one row per start or end (event-shaped traces).

    A name may be a dotted path into a nested object (``fault_type.level1``); ``source_class`` may
    also list several, whose values join with ``/`` (``["fault_type.level1", "fault_type.level2"]``).
    """

    host: str = "host"
    start: str = "start"
    end: str = "end"
    source_class: str | tuple[str, ...] = "class"
    source_text: str = "text"
    component: str = "component"
    component_kind: str = "component_kind"
    time: str | None = None
    event: str | None = None
    start_values: tuple[str, ...] = ("start",)
    end_values: tuple[str, ...] = ("end",)

    @property
    def event_shaped(self) -> bool:
        return self.time is not None and self.event is not None

    def wanted(self) -> tuple[Column, ...]:
        """Every column the import reads, in the order of ``producers.importer.incidents.Cells``."""
        return (
            self.host,
            self.start,
            self.end,
            self.source_class,
            self.source_text,
            self.component,
            self.component_kind,
            self.time or "",
            self.event or "",
        )

    def required(self) -> tuple[Column, ...]:
        if self.event_shaped:
            return (self.host, self.time or "", self.event or "", self.source_class)
        return (self.host, self.start, self.source_class)


class TimeFormat(_Frozen):
    """Numbers are relative to ``--start`` in ``relative_unit``, or epoch times when ``epoch`` is set."""

    relative_unit: TimeUnit = "days"
    epoch: Literal["s", "ms"] | None = None


class InventoryColumns(_Frozen):
    """Columns of an inventory file (one row per host); only ``host`` is required, empty cells take defaults."""

    host: str = "host"
    rack: str = "rack"
    domain: str = "domain"
    cluster: str = "cluster"
    fabric: str = "fabric"
    install: str = "install_date"
    sku: str = "sku"
    gpu_count: str = "gpu_count"
    nic_ports: str = "nic_ports"

    def wanted(self) -> tuple[str, ...]:
        """In the order of ``producers.importer.inventory_file``'s cells."""
        return (
            self.host,
            self.rack,
            self.domain,
            self.cluster,
            self.fabric,
            self.install,
            self.sku,
            self.gpu_count,
            self.nic_ports,
        )


class InventoryDefaults(_Frozen):
    """What an inventory record created for a host the fleet does not know yet says.

    ``file`` (or ``fleetpulse import --inventory``) names a CSV / JSON file listing every host with
    its layout, fault-free hosts included; a relative path is read from the mapping file's folder.
    """

    file: str | None = None
    columns: InventoryColumns = InventoryColumns()
    cluster: str = "imported"
    domain_size: int = Field(16, ge=1)
    domain_prefix: str = "imported-md"
    fabric: Literal["roce", "infiniband"] = "infiniband"
    sku: str = "unknown"
    gpu_count: int = Field(8, ge=0, le=64)
    nic_ports: int = Field(8, ge=0, le=64)
    host_prefix: str = ""


class HistoryMapping(_Frozen):
    columns: Columns = Columns()
    time: TimeFormat = TimeFormat()
    inventory: InventoryDefaults = InventoryDefaults()
    causes: dict[str, IncidentCause] = {}
    component_kinds: dict[str, str] = {}
    signals: dict[str, HardwareSignal] = {}

    def signal_of(self, source_class: str) -> HardwareSignal | None:
        """The raw signal an incident of this class stands for (longest prefix), else None."""
        return _longest_prefix({_fold(k): v for k, v in self.signals.items()}, source_class)

    def cause_of(self, source_class: str) -> IncidentCause:
        """The cause of a source class: its longest mapped prefix at a ``/`` boundary, else unclassified."""
        return _longest_prefix(self._causes_folded, source_class) or UNCLASSIFIED

    @property
    def _causes_folded(self) -> dict[str, IncidentCause]:
        return {_fold(k): v for k, v in self.causes.items()}

    @property
    def _kinds_folded(self) -> dict[str, str]:
        return {_fold(k): v for k, v in self.component_kinds.items()}


def _fold(text: str) -> str:
    return "/".join(part.strip() for part in text.strip().casefold().split("/"))


def _longest_prefix(table: dict[str, T], source_class: str) -> T | None:
    parts = _fold(source_class).split("/")
    for n in range(len(parts), 0, -1):
        found = table.get("/".join(parts[:n]))
        if found is not None:
            return found
    return None


class CauseLookup:
    """``HistoryMapping.cause_of`` with the folded tables built once (an import asks per row)."""

    def __init__(self, mapping: HistoryMapping) -> None:
        self._causes = mapping._causes_folded
        self._kinds = mapping._kinds_folded
        self._memo: dict[str, tuple[IncidentCause, str | None]] = {}

    def __call__(self, source_class: str) -> tuple[IncidentCause, str | None]:
        found = self._memo.get(source_class)
        if found is None:
            cause = _longest_prefix(self._causes, source_class) or UNCLASSIFIED
            found = self._memo[source_class] = (cause, _longest_prefix(self._kinds, source_class))
        return found


def load_mapping(path: Path | None) -> HistoryMapping:
    """The mapping in ``path`` (defaults only when None); MappingFileError names the key to fix."""
    if path is None:
        return HistoryMapping()
    try:
        doc = tomllib.loads(path.read_text())
    except OSError as exc:
        raise MappingFileError(f"cannot read: {exc.strerror or exc}", path) from exc
    except tomllib.TOMLDecodeError as exc:
        raise MappingFileError(f"not valid TOML: {exc}", path) from exc
    file = doc.get("inventory", {}).get("file") if isinstance(doc.get("inventory"), dict) else None
    if isinstance(file, str) and not Path(file).is_absolute():
        doc["inventory"]["file"] = str(path.parent / file)
    try:
        return HistoryMapping.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise MappingFileError(f"{where}: {first['msg']} ({exc.error_count()} problem(s))", path) from exc
