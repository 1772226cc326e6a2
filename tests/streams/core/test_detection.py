"""The detection core runs over any keyed state: a table-like store gives what plain dicts give."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from schemas import Codec, DecodeError
from streams.core.detection import DetectionCore
from streams.core.inventory import Inventory
from streams.core.policy import load_policy
from streams.core.state import CoreState
from streams.testing import Scenario


class JsonTable:
    """A store that keeps only what survives JSON, as a Faust table with a JSON serializer does (no Mapping)."""

    def __init__(self) -> None:
        self.rows: dict[str, str] = {}
        self.writes = 0

    def get(self, key: str, default: Any = None, /) -> Any:
        row = self.rows.get(key)
        return default if row is None else json.loads(row)

    def __setitem__(self, key: str, value: Any, /) -> None:
        self.writes += 1
        self.rows[key] = json.dumps(value)

    def __delitem__(self, key: str, /) -> None:
        del self.rows[key]


def run(scenario: Scenario, state: CoreState | None = None) -> DetectionCore:
    inventory = Inventory()
    for record in scenario.inventory():
        inventory.apply(record)
    core = DetectionCore(load_policy(), inventory, state=state)
    codec = Codec()
    for family, _, value in scenario.records():
        if family == "inventory":
            continue
        try:
            record = codec.decode(value).record
        except DecodeError:
            continue
        core.step(record)
    core.close()
    return core


def test_a_table_like_state_gives_the_same_findings_and_actions_as_dicts() -> None:
    scenario = Scenario()
    in_dicts = run(scenario)
    tables = CoreState(repeat=JsonTable(), clusters=JsonTable())
    in_tables = run(scenario, tables)
    found = {f.host_id for f in in_dicts.findings}
    assert scenario.lemon_hosts | scenario.slow_host_ids <= found
    assert [f.to_record() for f in in_tables.findings] == [f.to_record() for f in in_dicts.findings]
    assert [a.to_record() for a in in_tables.actions] == [a.to_record() for a in in_dicts.actions]
    assert in_dicts.actions and in_dicts.rejected  # the scenario's poison is refused, not folded
    assert isinstance(tables.repeat, JsonTable) and tables.repeat.writes > 0
    assert isinstance(tables.clusters, JsonTable) and tables.clusters.writes > 0


def test_a_snapshot_is_a_copy_and_restores_the_stores() -> None:
    core = run(Scenario(duration_min=40))
    snap = core.state.snapshot()
    assert set(snap) == {"repeat", "clusters"} and snap["repeat"] and snap["clusters"]
    host = next(iter(snap["repeat"]))
    core.state.repeat[host] = {"changed": True}
    assert snap["repeat"][host] != {"changed": True}
    restored = CoreState.restore(snap)
    assert restored.snapshot() == snap


def test_a_store_that_is_not_whole_has_no_snapshot() -> None:
    with pytest.raises(TypeError, match="snapshot the table behind it"):
        CoreState(repeat=JsonTable()).snapshot()


def test_the_in_memory_store_keeps_the_cluster_state_typed_and_snapshots_what_a_table_holds() -> None:
    scenario = Scenario(duration_min=40)
    typed = run(scenario)
    plain = run(scenario, CoreState(repeat={}, clusters={}))  # plain dicts: JSON builtins, as before
    assert [f.to_record() for f in typed.findings] == [f.to_record() for f in plain.findings]
    assert [a.to_record() for a in typed.actions] == [a.to_record() for a in plain.actions]
    assert any(isinstance(v, msgspec.Struct) for v in typed.state.clusters.values())  # type: ignore[attr-defined]
    assert typed.state.snapshot() == plain.state.snapshot()
    clusters = typed.state.snapshot()["clusters"]
    assert json.loads(json.dumps(clusters)) == clusters  # what a JSON table gives back, lists and all
