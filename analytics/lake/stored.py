"""The event ids the lake already holds, as the archiver's repeat check sees them.

Events stamped at their source (inventory, samples, errors) carry the same ``ts`` on every delivery:
a resend comes moments later, on the same partition, into the same date partition, and the last
rows stored (``analytics.lake.recent``) catch it. Across an archiver restart those rows are read
back at start: only the ids whose ``ts`` lies within ``lake.resend_window_s`` of the table's newest
event time (Delta's file statistics pick the files, the ``date`` partitions and row-group statistics
prune the rest), since a source resends only what it sent that recently (docs/LAKE.md). Events a
stream worker derives (findings, actions, alerts, dead letters) are decided again after a worker
restarts or a partition moves: they come back with the id they had (``streams.core.ids``) but
possibly another ``ts``, so another date partition, at any time. Their tables are small, so each
archiver start reads every id they hold (one column) and checks every later copy against them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

import polars as pl
import pyarrow as pa
from deltalake import DeltaTable

from analytics.lake.layout import date_of
from analytics.lake.reader import Lake
from analytics.lake.recent import RecentIds
from ground.delta import DATE
from schemas.arrow import table_name
from schemas.events import EVENT_CLASSES, TopicFamily

REDERIVED: frozenset[TopicFamily] = frozenset({"findings", "actions", "alerts", "dlq"})


def rederived_types(families: Collection[str]) -> list[str]:
    """Event types of the archived ``families`` that a stream worker may send again under another ``ts``."""
    return sorted(t for t, cls in EVENT_CLASSES.items() if cls.TOPIC in REDERIVED and cls.TOPIC in families)


def stamped_types(families: Collection[str]) -> list[str]:
    """Event types of the archived ``families`` stamped at their source: a resend keeps its ``ts``."""
    return sorted(
        t for t, cls in EVENT_CLASSES.items() if cls.TOPIC not in REDERIVED and cls.TOPIC in families
    )


def newest_ts(table: DeltaTable) -> int | None:
    """The newest event time a table holds, from its files' statistics (no data read); None when empty."""
    adds = pl.from_arrow(pa.table(table.get_add_actions(flatten=True)))
    assert isinstance(adds, pl.DataFrame)
    if adds.is_empty():
        return None
    if "max.ts" not in adds.columns or adds["max.ts"].null_count():  # a file written without statistics
        found = pl.scan_delta(table).select(pl.col("ts").max()).collect().item()
        return None if found is None else int(found)
    return int(adds["max.ts"].max())  # type: ignore[arg-type]


def window_rows(lake: Lake, event_type: str, window_ms: int, number: int = 0) -> pl.LazyFrame:
    """(``number``, event_id, ts) of ``event_type``'s rows within ``window_ms`` of its table's newest event time."""
    empty = pl.LazyFrame(schema={"type": pl.UInt16, "event_id": pl.String, "ts": pl.Int64})
    found = lake.delta.open(table_name(event_type))
    newest = None if found is None else newest_ts(found)
    if found is None or newest is None:
        return empty
    low = newest - window_ms
    return (
        pl.scan_delta(found)
        .filter(pl.col(DATE) >= pl.lit(date_of(low)).str.to_date(), pl.col("ts") >= low)
        .select(pl.lit(number, pl.UInt16).alias("type"), pl.col("event_id").cast(pl.String), "ts")
    )


def window_keys(lake: Lake, event_types: Iterable[str], window_ms: int) -> list[tuple[str, str]]:
    """(event type, event id) of every ``event_types`` row within its table's window, oldest first."""
    names = list(event_types)
    if not names:
        return []
    frames = [window_rows(lake, t, window_ms, n) for n, t in enumerate(names)]
    rows = pl.concat(frames).sort("ts", "type", "event_id").collect()
    # one str per event type shared by every key (a str per row would add ~60 bytes an id)
    types = map(names.__getitem__, rows.get_column("type").to_list())
    return list(zip(types, rows.get_column("event_id").to_list(), strict=True))


class StoredIds:
    """(event type, event id) already stored: every id of a re-derived type's table, the recent rows of the rest."""

    def __init__(self, recent: RecentIds | None = None) -> None:
        self.recent = recent if recent is not None else RecentIds()
        self._held: dict[str, set[str]] = {}  # re-derived event type -> every id its table holds

    def load(
        self,
        lake: Lake,
        event_types: Iterable[str],
        stamped: Iterable[str] = (),
        *,
        window_ms: int = 0,
    ) -> None:
        """Read the ids the tables of ``event_types`` hold now, and those of ``stamped`` within ``window_ms``
        of each table's newest event time (at each start: another run may have written)."""
        self._held = {
            t: set(lake.scan(table_name(t)).select("event_id").collect().get_column("event_id").to_list())
            for t in event_types
        }
        if window_ms > 0:
            self.recent.preload(window_keys(lake, stamped, window_ms))

    @property
    def held(self) -> int:
        """Ids checked across every date (memory: about 100 bytes each)."""
        return sum(len(ids) for ids in self._held.values())

    def __contains__(self, key: object) -> bool:
        if isinstance(key, tuple) and len(key) == 2 and key[0] in self._held:
            return key[1] in self._held[key[0]]
        return key in self.recent

    def stored(self, event_ids: Mapping[str, set[str]]) -> None:
        """Remember the ids of a committed batch (``BatchPlan.event_ids``)."""
        rest = {}
        for event_type, ids in event_ids.items():
            if event_type in self._held:
                self._held[event_type] |= ids
            else:
                rest[event_type] = ids
        self.recent.stored(rest)
