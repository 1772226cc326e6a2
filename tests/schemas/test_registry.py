"""The committed schema history: stable ids, immutable versions, compatible evolution."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from schemas import CompatibilityError, RegistryError, SchemaRegistry
from schemas.compat import check_compatible
from schemas.events import EVENT_CLASSES

REGISTRY = SchemaRegistry.load()


def test_every_event_class_has_a_registered_schema_of_its_version() -> None:
    assert set(REGISTRY.subjects) == set(EVENT_CLASSES)
    for name, cls in EVENT_CLASSES.items():
        assert REGISTRY.latest(name).version == cls.SCHEMA_VERSION


def test_schema_ids_are_unique_and_stable() -> None:
    ids = [v.schema_id for s in REGISTRY.subjects for v in REGISTRY.versions(s)]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("subject", REGISTRY.subjects)
def test_committed_history_is_compatible(subject: str) -> None:
    versions = REGISTRY.versions(subject)
    for old, new in zip(versions, versions[1:], strict=False):
        assert check_compatible(old.raw, new.raw) == [], f"{subject} v{old.version} -> v{new.version}"


def test_envelope_is_common_to_every_schema() -> None:
    envelope = ["event_id", "event_type", "schema_version", "host_id", "cluster", "ts", "agent_seq", "payload"]
    for subject in REGISTRY.subjects:
        assert [f["name"] for f in REGISTRY.latest(subject).raw["fields"]] == envelope


BASE = {"type": "record", "name": "T", "fields": [{"name": "a", "type": "int"}]}


def test_compat_accepts_a_new_field_with_default() -> None:
    new = {**BASE, "fields": [*BASE["fields"], {"name": "b", "type": ["null", "string"], "default": None}]}
    assert check_compatible(BASE, new) == []


def test_compat_rejects_new_field_without_default_and_type_change() -> None:
    assert check_compatible(BASE, {**BASE, "fields": [*BASE["fields"], {"name": "b", "type": "int"}]})
    assert check_compatible(BASE, {**BASE, "fields": [{"name": "a", "type": "long"}]})
    assert check_compatible(BASE, {**BASE, "fields": []})


def test_compat_recurses_into_nested_records() -> None:
    old = {"type": "record", "name": "O", "fields": [{"name": "p", "type": BASE}]}
    new_inner = {**BASE, "fields": [*BASE["fields"], {"name": "c", "type": "int"}]}
    problems = check_compatible(old, {**old, "fields": [{"name": "p", "type": new_inner}]})
    assert problems == ["new field p.c has no default"]


@pytest.fixture
def registry_copy(tmp_path: Path) -> Path:
    root = tmp_path / "schemas"
    shutil.copytree(REGISTRY.root / "avro", root / "avro")
    shutil.copy(REGISTRY.root / "registry.json", root / "registry.json")
    return root


def test_editing_a_registered_schema_in_place_is_refused(registry_copy: Path) -> None:
    path = registry_copy / "avro" / "XidRaised" / "v1.avsc"
    raw = json.loads(path.read_text())
    raw["fields"][-1]["type"]["fields"].append({"name": "extra", "type": "int"})
    path.write_text(json.dumps(raw))
    with pytest.raises(RegistryError, match="immutable"):
        SchemaRegistry.load(registry_copy)


def test_register_assigns_next_id_and_checks_compatibility(registry_copy: Path) -> None:
    folder = registry_copy / "avro" / "XidRaised"
    raw = json.loads((folder / "v1.avsc").read_text())
    raw["fields"][-1]["type"]["fields"].append({"name": "driver", "type": "string", "default": ""})
    (folder / "v2.avsc").write_text(json.dumps(raw))
    registry = SchemaRegistry.load(registry_copy)
    top = max(v.schema_id for s in registry.subjects for v in registry.versions(s))
    added = registry.register("XidRaised")
    assert added is not None and added.schema_id == top + 1 and added.version == 2
    assert SchemaRegistry.load(registry_copy).latest("XidRaised").schema_id == top + 1

    bad = json.loads((folder / "v2.avsc").read_text())
    bad["fields"][-1]["type"]["fields"].append({"name": "no_default", "type": "int"})
    (folder / "v3.avsc").write_text(json.dumps(bad))
    with pytest.raises(CompatibilityError, match="no_default"):
        SchemaRegistry.load(registry_copy).register("XidRaised")


def test_old_records_decode_with_the_new_reader_schema(registry_copy: Path) -> None:
    from schemas import Codec
    from schemas.events import XidRaised

    old_codec = Codec(SchemaRegistry.load(registry_copy))
    data = old_codec.encode(
        XidRaised(event_id="e", host_id="h", cluster="c", ts=1, payload={"gpu": 0, "xid": 48, "pci_bus_id": "x"}).to_record()
    )
    folder = registry_copy / "avro" / "XidRaised"
    raw = json.loads((folder / "v1.avsc").read_text())
    raw["fields"][-1]["type"]["fields"].append({"name": "driver", "type": "string", "default": "unknown"})
    (folder / "v2.avsc").write_text(json.dumps(raw))
    registry = SchemaRegistry.load(registry_copy)
    registry.register("XidRaised")
    decoded = Codec(registry).decode(data)
    assert decoded.schema_version == 1
    assert decoded.record["payload"]["driver"] == "unknown"
