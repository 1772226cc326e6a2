"""The detection core's state: keyed stores it reads and writes, whatever holds them.

A runner decides where state lives: the live worker in its Faust tables (RocksDB and their
changelogs), the backtest and the twin in plain dicts. The core only gets and puts JSON-able
values by key, so the same steps run over either, and a snapshot of the in-memory kind is a copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class KeyedState(Protocol):
    """Get and put JSON-able values by key (a Faust table, its write-back cache, a dict)."""

    def get(self, key: str, /) -> Any: ...  # None when the key has no value
    def __setitem__(self, key: str, value: Any, /) -> None: ...
    def __delitem__(self, key: str, /) -> None: ...


def _store() -> dict[str, Any]:
    return {}


@dataclass(slots=True)
class CoreState:
    """Every keyed store the core writes: the repeat rule's per host, the peer comparison's per cluster."""

    repeat: KeyedState = field(default_factory=_store)  # host -> HostState.stored()
    clusters: KeyedState = field(default_factory=_store)  # "<cluster>|..." -> the cluster stage's values

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """A copy of every store by name (values are JSON-able and replaced, never changed in place)."""
        return {"repeat": _copy(self.repeat), "clusters": _copy(self.clusters)}

    @classmethod
    def restore(cls, snapshot: dict[str, dict[str, Any]]) -> CoreState:
        """In-memory stores holding a snapshot's values."""
        return cls(repeat=dict(snapshot.get("repeat", {})), clusters=dict(snapshot.get("clusters", {})))


def _copy(store: KeyedState) -> dict[str, Any]:
    if not isinstance(store, Mapping):  # a write-back cache: its table is what has the whole state
        raise TypeError(f"{type(store).__name__} is not a whole store: snapshot the table behind it")
    return dict(store.items())
