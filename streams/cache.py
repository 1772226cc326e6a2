"""A write-back cache in front of a Faust table, for per-record state on the hot path.

Every Faust table write is a changelog record; doing one per sample costs most of a worker's
throughput. The cache keeps the live value in memory and writes it through every ``every``
updates, or at once when the caller says the update matters (a window closed). It is dropped
on every rebalance, so a partition that comes back is read from the table again.

Used by the cluster stage (keyed by cluster; the per-host windows on ``fleet.samples`` have
their own checkpoints, see ``streams.sample_partitions``). Trade-off: after a crash, a key's state
restarts from its last write while the stream restarts from the last committed offset, so
up to ``every`` updates of it may be applied twice or not at all; writes the caller marks
as mattering (a window opened or closed) always go through at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any


class CheckpointCache(MutableMapping[str, Any]):
    def __init__(
        self, table: MutableMapping[str, Any], every: int, cached: Callable[[str], bool] = lambda key: True
    ) -> None:
        self.table = table
        self.every = max(1, every)
        self.cached = cached  # keys for which writes may be deferred; others are written at once
        self._live: dict[str, Any] = {}
        self._dirty: dict[str, int] = {}

    def __getitem__(self, key: str) -> Any:
        if key in self._live:
            return self._live[key]
        value = self.table[key]
        self._live[key] = value
        return value

    def get(self, key: str, default: Any = None) -> Any:
        if key in self._live:
            return self._live[key]
        value = self.table.get(key)
        if value is None:
            return default
        self._live[key] = value
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        self._live[key] = value
        count = self._dirty.get(key, 0) + 1
        if count >= self.every or not self.cached(key):
            self.table[key] = value
            count = 0
        self._dirty[key] = count

    def write_through(self, key: str) -> None:
        """Persist ``key`` now (e.g. a window just closed)."""
        if key in self._live:
            self.table[key] = self._live[key]
            self._dirty[key] = 0

    def __delitem__(self, key: str) -> None:
        self._live.pop(key, None)
        self._dirty.pop(key, None)
        del self.table[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._live)

    def __len__(self) -> int:
        return len(self._live)

    def drop(self) -> None:
        """Forget everything held in memory (on rebalance: the table is the truth again)."""
        self._live.clear()
        self._dirty.clear()
