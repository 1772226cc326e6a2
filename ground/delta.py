"""Delta Lake tables (delta-rs): the one way every part names, opens and appends to a lake table.

The lake is a folder or object-store URI of Delta tables. The archiver and the simulator's lake
sink both write through ``DeltaTables``, so both get the same table properties and the same
exactly-once rule: a writer names itself with an app id, and each commit records the next offset
(or counter) the writer will write as that id's version in the same transaction as the data
(Delta "app transactions", the kafka-delta-ingest approach); on restart it skips what is below it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, Transaction, WriterProperties, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError

from ground.errors import LakeStorageError

DAY_MS = 86_400_000
DATE = "date"
TS_UTC = "ts_utc"  # the event time as a UTC timestamp, beside epoch-ms ``ts`` (``with_date``)
# A table kept open grows with every commit it applies (~11 MB per 100 small commits, delta-rs 1.6); opened
# afresh from its latest checkpoint it does not, so a long-running writer reopens each table this often.
REOPEN_EVERY = 100
CREATE_ATTEMPTS = (
    5  # a commit that lost a race (two writers creating one table) is tried again on the winner's table
)

# Checkpoint every 100 commits (delta-rs' default, written by the committing writer), keep 7 days of
# log and of removed files so readers of an older version and time travel keep working for a week.
TABLE_PROPERTIES: dict[str, str | None] = {
    "delta.checkpointInterval": "100",
    "delta.logRetentionDuration": "interval 7 days",
    "delta.enableExpiredLogCleanup": "true",
    "delta.deletedFileRetentionDuration": "interval 7 days",
}


def _delta_columns(node: dict, prefix: str = "") -> Iterator[tuple[str, bool]]:
    """(dotted path, nullable) of every column of a Delta schema (JSON), nested ones included."""
    for field in node["fields"]:
        path = f"{prefix}{field['name']}"
        yield path, bool(field["nullable"])
        kind = field["type"]
        while isinstance(kind, dict) and kind["type"] in ("array", "map"):
            kind = kind["elementType"] if kind["type"] == "array" else kind["valueType"]
        if isinstance(kind, dict) and kind["type"] == "struct":
            yield from _delta_columns(kind, f"{path}.")


def _arrow_columns(fields: pa.Schema | pa.StructType, prefix: str = "") -> Iterator[tuple[str, bool]]:
    """(dotted path, nullable) of every column of an Arrow schema, as ``_delta_columns`` names them."""
    for field in fields:
        path = f"{prefix}{field.name}"
        yield path, field.nullable
        kind = field.type
        while pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_map(kind):
            kind = kind.item_type if pa.types.is_map(kind) else kind.value_type
        if pa.types.is_struct(kind):
            yield from _arrow_columns(kind, f"{path}.")


def is_uri(path: str | Path) -> bool:
    return isinstance(path, str) and "://" in path


def join(root: str | Path, rel: str) -> str:
    """``root/rel`` for a folder or a URI (``s3://bucket/lake``)."""
    base = str(root) if is_uri(root) else str(Path(root).expanduser())
    return f"{base.rstrip('/')}/{rel}" if rel else base


def with_date(table: pa.Table, ts_column: str = "ts") -> pa.Table:
    """``table`` plus the ``date`` partition column (the UTC day of its epoch-millisecond ``ts``) and
    ``ts_utc``, the same instant as a UTC timestamp: engines that read the lake (DuckDB, Spark, Trino)
    filter and group on a real timestamp without converting epoch milliseconds themselves."""
    ts = table.column(ts_column).to_numpy(zero_copy_only=False)
    days = np.floor_divide(ts.astype(np.int64), DAY_MS).astype(np.int32)
    date = pa.array(days, pa.int32()).cast(pa.date32())
    instant = pa.array(ts.astype(np.int64), pa.int64()).cast(pa.timestamp("ms", tz="UTC"))
    for name, column in ((DATE, date), (TS_UTC, instant)):
        if name in table.column_names:
            table = table.set_column(table.column_names.index(name), name, column)
        else:
            table = table.append_column(pa.field(name, column.type, nullable=False), column)
    return table


class DeltaTables:
    """The Delta tables under one lake root, opened once each (an open reads the log since its last checkpoint)."""

    def __init__(
        self,
        root: str | Path,
        storage_options: Mapping[str, str] | None = None,
        *,
        compression: str = "zstd",
        row_group_size: int | None = None,
    ) -> None:
        self.root = root
        self.storage_options = dict(storage_options or {}) or None
        self._open: dict[str, DeltaTable] = {}
        self._appends: dict[str, int] = {}
        codec = "UNCOMPRESSED" if compression == "none" else compression.upper()
        self.writer_properties = WriterProperties(compression=codec, max_row_group_size=row_group_size)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"DeltaTables({str(self.root)!r})"

    def uri(self, rel: str = "") -> str:
        return join(self.root, rel)

    def exists(self, rel: str) -> bool:
        if rel in self._open:
            return True
        try:
            return DeltaTable.is_deltatable(self.uri(rel), storage_options=self.storage_options)
        except (DeltaError, OSError) as exc:
            raise LakeStorageError(f"cannot read {self.uri(rel)}: {exc}") from exc

    def open(self, rel: str, *, refresh: bool = True) -> DeltaTable | None:
        """The table at ``rel`` at its latest version, or None when there is none."""
        table = self._open.get(rel)
        try:
            if table is None:
                table = DeltaTable(self.uri(rel), storage_options=self.storage_options)
                self._open[rel] = table
            elif refresh:
                table.update_incremental()
        except TableNotFoundError:
            return None
        except (DeltaError, OSError) as exc:
            raise LakeStorageError(f"cannot open Delta table {self.uri(rel)}: {exc}") from exc
        return table

    def version_of(self, rel: str, app_id: str) -> int | None:
        """The last version ``app_id`` committed to the table (its next offset), None if it never did."""
        return self.versions_of(rel, [app_id])[app_id]

    def versions_of(self, rel: str, app_ids: Iterable[str]) -> dict[str, int | None]:
        """``version_of`` for many app ids, read from one refresh of the table."""
        table = self.open(rel)
        return {app: None if table is None else table.transaction_version(app) for app in app_ids}

    @staticmethod
    def _schema_mode(target: str | DeltaTable, data: pa.Table) -> Literal["merge"] | None:
        """Merge only when ``data`` brings columns the table lacks, also inside a struct or list (a newer
        event schema: HostSampled v2's GPU fields), or makes nullable what the table holds non-null (v2's
        step time), which delta-rs refuses without a merge; the merge check costs ~15 % of a write."""
        if isinstance(target, str):
            return None
        known = dict(_delta_columns(json.loads(target.schema().to_json())))
        for path, nullable in _arrow_columns(data.schema):
            if path not in known or (nullable and not known[path]):
                return "merge"
        return None

    def append(
        self,
        rel: str,
        data: pa.Table,
        *,
        partition_by: Sequence[str] = (),
        versions: Mapping[str, int] | None = None,
    ) -> None:
        """Append ``data`` (possibly no rows) and set each app id's version, in one commit."""
        txns = [Transaction(app_id, version) for app_id, version in sorted((versions or {}).items())]
        for attempt in range(1, CREATE_ATTEMPTS + 1):
            target: str | DeltaTable = self.open(rel, refresh=False) or self.uri(rel)
            try:
                write_deltalake(
                    target,
                    data,
                    mode="append",
                    partition_by=list(partition_by) or None,
                    schema_mode=self._schema_mode(target, data),
                    configuration=TABLE_PROPERTIES if isinstance(target, str) else None,
                    storage_options=self.storage_options if isinstance(target, str) else None,
                    writer_properties=self.writer_properties,
                    commit_properties=CommitProperties(app_transactions=txns) if txns else None,
                )
                break
            except CommitFailedError as exc:  # two writers created the table at once: the loser appends to it
                self._open.pop(rel, None)
                if attempt == CREATE_ATTEMPTS:
                    raise LakeStorageError(
                        f"cannot append {data.num_rows} rows to {self.uri(rel)}: {exc}"
                    ) from exc
            except (DeltaError, OSError, pa.ArrowException) as exc:
                raise LakeStorageError(
                    f"cannot append {data.num_rows} rows to {self.uri(rel)}: {exc}"
                ) from exc
        self._appends[rel] = self._appends.get(rel, 0) + 1
        if self._appends[rel] % REOPEN_EVERY == 0:
            self._open.pop(rel, None)
        if rel not in self._open:
            self.open(rel)
