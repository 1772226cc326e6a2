"""The event ids the lake already holds, as the archiver's repeat check sees them.

Events stamped at their source (inventory, samples, errors) carry the same ``ts`` on every delivery:
a resend comes moments later, on the same partition, into the same date partition, and the last
rows stored (``analytics.lake.recent``) catch it. Events a stream worker derives (findings, actions,
alerts, dead letters) are decided again after a worker restarts or a partition moves: they come
back with the id they had (``streams.core.ids``) but possibly another ``ts``, so another date
partition, at any time. Their tables are small, so each archiver start reads every id they hold
(one column) and checks every later copy against them: such an event is stored once whatever its
date, across archiver restarts.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from analytics.lake.reader import Lake
from analytics.lake.recent import RecentIds
from schemas.arrow import table_name
from schemas.events import EVENT_CLASSES, TopicFamily

REDERIVED: frozenset[TopicFamily] = frozenset({"findings", "actions", "alerts", "dlq"})


def rederived_types(families: Collection[str]) -> list[str]:
    """Event types of the archived ``families`` that a stream worker may send again under another ``ts``."""
    return sorted(t for t, cls in EVENT_CLASSES.items() if cls.TOPIC in REDERIVED and cls.TOPIC in families)


class StoredIds:
    """(event type, event id) already stored: every id of a re-derived type's table, the recent rows of the rest."""

    def __init__(self, recent: RecentIds | None = None) -> None:
        self.recent = recent if recent is not None else RecentIds()
        self._held: dict[str, set[str]] = {}  # re-derived event type -> every id its table holds

    def load(self, lake: Lake, event_types: Iterable[str]) -> None:
        """Read the ids the tables of ``event_types`` hold now (at each start: another run may have written)."""
        self._held = {
            t: set(lake.scan(table_name(t)).select("event_id").collect().get_column("event_id").to_list())
            for t in event_types
        }

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
