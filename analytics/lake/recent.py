"""The event ids of the rows an archiver stored last: a resend that lands in the next batch is still a repeat.

A producer's retry (or the simulator's resend) delivers an event again moments later, on the same
partition (keyed by host), so it falls in the same batch or one of the next few. Remembering the
last ``capacity`` ids (about 100 bytes each) catches those without reading the lake. Ids enter
only once their batch is committed: a batch the lake refused is read again, and its rows must not
look stored. A restart starts from the ids of the rows the lake holds within the resend window
(``analytics.lake.stored``, ``preload``), so a resend straddling a restart is a repeat too.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

CAPACITY = 50_000


class RecentIds:
    """(event type, event id) of the last ``capacity`` rows stored, oldest forgotten first."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._ids: set[tuple[str, str]] = set()
        self._order: deque[tuple[str, str]] = deque()

    def __contains__(self, key: object) -> bool:
        return key in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def stored(self, event_ids: Mapping[str, set[str]]) -> None:
        """Remember the ids of a committed batch (``BatchPlan.event_ids``)."""
        for event_type, ids in event_ids.items():
            for event_id in sorted(ids):  # sorted: which ids go first when full does not depend on hashing
                key = (event_type, event_id)
                if key not in self._ids:
                    self._ids.add(key)
                    self._order.append(key)
        self._forget()

    def preload(self, keys: list[tuple[str, str]]) -> None:
        """Remember ids read from the lake at a start, oldest first; the window grows to hold them all."""
        self.capacity = max(self.capacity, len(keys))
        fresh = dict.fromkeys(keys)  # in order, each once; built in C (a start may read millions)
        if self._ids:
            fresh = dict.fromkeys(k for k in fresh if k not in self._ids)
        self._ids.update(fresh)
        self._order.extend(fresh)
        self._forget()

    def _forget(self) -> None:
        while len(self._order) > self.capacity:
            self._ids.discard(self._order.popleft())
