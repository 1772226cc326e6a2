"""Which data files readers may see: the lake's visibility rules, as one pure function plus a listing shell.

A data file is published unless (1) it is an archiver file whose offsets reach its partition's
committed offset (written before a crash, not yet committed), (2) it is a compaction output
without a commit record, or (3) a committed compaction replaces it and has not deleted it yet.
Files of other writers (the simulator's Parquet sink) carry no offsets and are always visible.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from analytics.errors import LakeError
from analytics.lake.fs import LakeFS, is_hidden
from analytics.lake.layout import (
    COMPACTIONS_DIR,
    TopicPartition,
    is_compacted,
    parse_archive_name,
    parse_date_dir,
)
from analytics.lake.manifest import read_frontier
from analytics.lake.quarantine import quarantine_entries

INVENTORY_TABLE = "host_inventoried"

# {topic: {partition: [[first, last], ...]}} with partitions as strings (JSON keys)
Coverage = dict[str, dict[str, list[list[int]]]]


class CompactionRecord(NamedTuple):
    """Commit of one compaction: ``file`` replaces ``replaces`` and holds the offsets in ``covers``.

    ``replaces`` hides (and lets ``recover`` delete) the sources only until they are deleted; the
    record is then rewritten with the list moved to ``replaced``, kept for audit. Matching on the
    path alone, a lasting ``replaces`` would hide and delete any later file written under a
    source's name (the simulator's Parquet sink reuses names on a re-run).
    """

    table: str
    date: str
    file: str  # relative to the lake root
    replaces: tuple[str, ...]
    covers: Coverage
    foreign_files: tuple[str, ...]  # replaced files that carried no offsets (e.g. simulator output)
    rows: int
    duplicates_dropped: int
    created_at: str
    replaced: tuple[str, ...] = ()  # sources already deleted: audit only, hides nothing

    def to_json(self) -> dict[str, Any]:
        out = self._asdict()
        out["replaces"] = list(self.replaces)
        out["foreign_files"] = list(self.foreign_files)
        out["replaced"] = list(self.replaced)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CompactionRecord:
        return cls(
            table=str(data["table"]),
            date=str(data["date"]),
            file=str(data["file"]),
            replaces=tuple(data["replaces"]),
            covers={
                t: {p: [list(r) for r in rs] for p, rs in parts.items()}
                for t, parts in data["covers"].items()
            },
            foreign_files=tuple(data.get("foreign_files", ())),
            rows=int(data["rows"]),
            duplicates_dropped=int(data.get("duplicates_dropped", 0)),
            created_at=str(data.get("created_at", "")),
            replaced=tuple(data.get("replaced", ())),  # absent from records written before it existed
        )

    def settled(self) -> CompactionRecord:
        """This record once its sources are deleted: ``replaces`` moved to ``replaced``."""
        return self._replace(replaces=(), replaced=self.replaced + self.replaces)


def read_compactions(lake: LakeFS, table: str) -> list[CompactionRecord]:
    """Every committed compaction of a table."""
    records = []
    for rel in lake.files(f"{COMPACTIONS_DIR}/{table}"):
        if posixpath.basename(rel).startswith(".") or not rel.endswith(".json"):
            continue
        try:
            records.append(CompactionRecord.from_json(lake.read_json(rel)))
        except (KeyError, TypeError, ValueError) as exc:
            raise LakeError(f"malformed compaction record: {exc!r}", lake.full(rel)) from exc
    return records


def data_files(lake: LakeFS, table: str) -> list[str]:
    """Every data file of a table, published or not: ``<table>/date=…/*.parquet``, hidden files excluded."""
    out = []
    for rel in lake.files(table):
        parts = rel.split("/")
        if len(parts) != 3 or parse_date_dir(parts[1]) is None:
            continue
        if is_hidden(parts[2]) or not parts[2].endswith(".parquet"):
            continue
        out.append(rel)
    return out


def visible(
    files: Iterable[str], frontier: Mapping[TopicPartition, int], compactions: Sequence[CompactionRecord]
) -> list[str]:
    """The published subset of ``files`` (relative paths) under the rules in the module docstring."""
    replaced = {path for record in compactions for path in record.replaces}
    committed = {record.file for record in compactions}
    out = []
    for rel in files:
        if rel in replaced:
            continue
        if is_compacted(rel):
            if rel in committed:
                out.append(rel)
            continue
        name = parse_archive_name(rel)
        if name is not None and name.tp in frontier and name.last >= frontier[name.tp]:
            continue
        out.append(rel)
    return out


def published_files(lake: LakeFS, table: str) -> list[str]:
    """Published data files of a table, relative to the lake root, sorted."""
    return visible(data_files(lake, table), read_frontier(lake), read_compactions(lake, table))


def known_hosts(lake: LakeFS) -> set[str]:
    """host_id of every committed inventory record, published or quarantined.

    A host that sent an inventory record is known even when its batch failed the gate: the
    compacted inventory topic sends it once, so ignoring quarantined inventory would quarantine
    the host's samples and errors for good.
    """
    files = published_files(lake, INVENTORY_TABLE)
    files += [e.data_path for e in quarantine_entries(lake) if e.table == INVENTORY_TABLE]
    return {host for rel in files for host in _host_ids(lake, rel)}


def _host_ids(lake: LakeFS, rel: str) -> list[str]:
    """The ``host_id`` column of one Parquet file (only that column is read)."""
    try:
        column = pq.read_table(lake.full(rel), filesystem=lake.fs, columns=["host_id"]).column("host_id")
    except (OSError, KeyError, pa.ArrowException) as exc:
        raise LakeError(f"cannot read host_id: {exc}", lake.full(rel)) from exc
    return [h for h in column.to_pylist() if h is not None]


def date_of_path(rel: str) -> str:
    """The date partition of a data file path ``<table>/date=…/<file>``."""
    date = parse_date_dir(rel.split("/")[1]) if rel.count("/") >= 2 else None
    if date is None:
        raise LakeError("not a data file path", rel)
    return date


def merge_ranges(ranges: Iterable[Sequence[int]]) -> list[list[int]]:
    """Sorted, merged ``[first, last]`` ranges (touching ranges are joined)."""
    out: list[list[int]] = []
    for first, last in sorted((int(a), int(b)) for a, b in ranges):
        if out and first <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], last)
        else:
            out.append([first, last])
    return out


def merge_coverage(parts: Iterable[Coverage]) -> Coverage:
    """Union of offset coverages."""
    acc: dict[str, dict[str, list[list[int]]]] = {}
    for cov in parts:
        for topic, partitions in cov.items():
            for partition, ranges in partitions.items():
                acc.setdefault(topic, {}).setdefault(str(partition), []).extend(ranges)
    return {
        topic: {p: merge_ranges(rs) for p, rs in sorted(parts_.items(), key=lambda kv: int(kv[0]))}
        for topic, parts_ in sorted(acc.items())
    }
