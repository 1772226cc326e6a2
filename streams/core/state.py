"""The detection core's state: keyed stores it reads and writes, whatever holds them.

A runner decides where state lives: the live worker in its Faust tables (RocksDB and their
changelogs), the backtest and the twin in memory (``MemoryStore``). The core only gets and puts JSON-able
values by key, so the same steps run over either, and a snapshot of the in-memory kind is a copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec


class KeyedState(Protocol):
    """Get and put JSON-able values by key (a Faust table, its write-back cache, a dict)."""

    def get(self, key: str, /) -> Any: ...  # None when the key has no value
    def __setitem__(self, key: str, value: Any, /) -> None: ...
    def __delitem__(self, key: str, /) -> None: ...


class MemoryStore(dict[str, Any]):
    """A store in this process, whose values no serializer ever sees: a stage may keep a value still typed (a
    msgspec Struct) and skip making it JSON builtins on each write; its readers take either form. Read out
    whole (``CoreState.snapshot``), every value is the builtins the table's JSON serializer would give back."""


def keeps_typed(store: KeyedState) -> bool:
    """Whether ``store`` may hold typed values (``MemoryStore``); a table or a plain dict gets JSON builtins."""
    return isinstance(store, MemoryStore)


def _store() -> MemoryStore:
    return MemoryStore()


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
        return cls(
            repeat=MemoryStore(snapshot.get("repeat", {})), clusters=MemoryStore(snapshot.get("clusters", {}))
        )


def _copy(store: KeyedState) -> dict[str, Any]:
    if not isinstance(store, Mapping):  # a write-back cache: its table is what has the whole state
        raise TypeError(f"{type(store).__name__} is not a whole store: snapshot the table behind it")
    return {
        key: as_json(value) if isinstance(value, msgspec.Struct) else value for key, value in store.items()
    }


def as_json(value: msgspec.Struct) -> dict[str, Any]:
    """The builtins the table's JSON serializer stores and gives back (lists, not tuples), to the letter."""
    out: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(value))
    return out
