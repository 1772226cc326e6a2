"""The committed schema history: stable ids, immutable versions, compatible evolution."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from schemas import CompatibilityError, RegistryError, SchemaRegistry
from schemas.compat import check_compatible
from schemas.events import EVENT_CLASSES
from schemas.registry import SchemaVersion, fingerprint

REGISTRY = SchemaRegistry.load()


def test_every_event_class_has_a_registered_schema_of_its_version() -> None:
    assert set(REGISTRY.subjects) == set(EVENT_CLASSES)
    for name, cls in EVENT_CLASSES.items():
        assert REGISTRY.latest(name).version == cls.SCHEMA_VERSION


# ids are written into every framed record: a renumbering would make old data unreadable
PINNED_IDS = {
    ("HostInventoried", 1): 1,
    ("HostSampled", 1): 2,
    ("XidRaised", 1): 3,
    ("EccErrorObserved", 1): 4,
    ("PcieAerReported", 1): 5,
    ("LinkEventObserved", 1): 6,
    ("JobInterrupted", 1): 7,
    ("FindingRaised", 1): 8,
    ("MaintenanceActionRecorded", 1): 9,
    ("AlertRaised", 1): 10,
    ("RecordDeadLettered", 1): 11,
    ("IncidentReported", 1): 12,
    ("OperatorEventRecorded", 1): 13,
    ("HostSampled", 2): 14,
    ("XidRaised", 2): 15,
    ("EccErrorObserved", 2): 16,
    ("LinkEventObserved", 2): 17,
}


def test_schema_ids_are_unique_and_stable() -> None:
    ids = {(s, v.version): v.schema_id for s in REGISTRY.subjects for v in REGISTRY.versions(s)}
    assert len(set(ids.values())) == len(ids)
    # every pinned id is still there; versions added later may only take new ids
    assert {key: ids.get(key) for key in PINNED_IDS} == PINNED_IDS
    assert all(i > max(PINNED_IDS.values()) for key, i in ids.items() if key not in PINNED_IDS)
    assert all(REGISTRY.by_id(i).subject == s for (s, _), i in PINNED_IDS.items())


def version_pairs(registry: SchemaRegistry) -> list[tuple[SchemaVersion, SchemaVersion]]:
    """Every (v<N>, v<N+1>) of every subject."""
    pairs = []
    for subject in registry.subjects:
        versions = registry.versions(subject)
        pairs += list(zip(versions, versions[1:], strict=False))
    return pairs


def history_problems(registry: SchemaRegistry) -> list[str]:
    return [
        f"{old.subject} v{old.version} -> v{new.version}: {problem}"
        for old, new in version_pairs(registry)
        for problem in check_compatible(old.raw, new.raw)
    ]


def test_committed_history_is_compatible() -> None:
    if not version_pairs(REGISTRY):
        pytest.skip("every subject has a single registered version: no evolution to check yet")
    assert history_problems(REGISTRY) == []


def test_envelope_is_common_to_every_schema() -> None:
    envelope = [
        "event_id",
        "event_type",
        "schema_version",
        "host_id",
        "cluster",
        "ts",
        "agent_seq",
        "payload",
    ]
    for subject in REGISTRY.subjects:
        assert [f["name"] for f in REGISTRY.latest(subject).raw["fields"]] == envelope


BASE = {"type": "record", "name": "T", "fields": [{"name": "a", "type": "int"}]}


def test_compat_accepts_a_new_field_with_default() -> None:
    new = {**BASE, "fields": [*BASE["fields"], {"name": "b", "type": ["null", "string"], "default": None}]}
    assert check_compatible(BASE, new) == []


def test_compat_rejects_new_field_without_default_and_type_change() -> None:
    assert check_compatible(BASE, {**BASE, "fields": [*BASE["fields"], {"name": "b", "type": "int"}]})
    assert check_compatible(BASE, {**BASE, "fields": [{"name": "a", "type": "string"}]})
    # int -> long is a promotion new readers apply; old readers cannot read a long
    assert check_compatible(BASE, {**BASE, "fields": [{"name": "a", "type": "long"}]}) == []
    assert check_compatible(BASE, {**BASE, "fields": [{"name": "a", "type": "long"}]}, mode="full")
    # a dropped field: new readers ignore it; old readers miss it (no default)
    assert check_compatible(BASE, {**BASE, "fields": []}) == []
    assert check_compatible(BASE, {**BASE, "fields": []}, mode="full")


def test_compat_recurses_into_nested_records() -> None:
    old = {"type": "record", "name": "O", "fields": [{"name": "p", "type": BASE}]}
    new_inner = {**BASE, "fields": [*BASE["fields"], {"name": "c", "type": "int"}]}
    problems = check_compatible(old, {**old, "fields": [{"name": "p", "type": new_inner}]})
    assert len(problems) == 1 and problems[0].startswith("new readers cannot read old data")
    assert "/fields/0/type/fields/1" in problems[0]


def test_compat_accepts_a_new_defaulted_field_inside_an_array_of_records() -> None:
    gpu = {"type": "record", "name": "Gpu", "fields": [{"name": "index", "type": "int"}]}
    old = {
        "type": "record",
        "name": "P",
        "fields": [{"name": "gpus", "type": {"type": "array", "items": gpu}}],
    }
    gpu2 = {**gpu, "fields": [*gpu["fields"], {"name": "uuid", "type": ["null", "string"], "default": None}]}
    new = {**old, "fields": [{"name": "gpus", "type": {"type": "array", "items": gpu2}}]}
    assert check_compatible(old, new) == []
    gpu3 = {**gpu, "fields": [*gpu["fields"], {"name": "uuid", "type": "string"}]}
    assert check_compatible(
        old, {**old, "fields": [{"name": "gpus", "type": {"type": "array", "items": gpu3}}]}
    )


def test_making_a_field_optional_is_backward_but_not_full_compatible() -> None:
    old = {"type": "record", "name": "S", "fields": [{"name": "step_ms", "type": "double"}]}
    optional = {**old, "fields": [{"name": "step_ms", "type": ["null", "double"], "default": None}]}
    assert check_compatible(old, optional) == []
    problems = check_compatible(old, optional, mode="full")
    # old readers expect a double and cannot read a null
    assert problems and all(p.startswith("old readers cannot read new data") for p in problems)


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


@pytest.mark.parametrize("edit", ["default", "logical_type"])
def test_editing_a_default_or_a_logical_type_in_place_is_refused(registry_copy: Path, edit: str) -> None:
    """Both change what a registered id means to readers, though Avro's canonical form ignores them."""
    path = registry_copy / "avro" / "JobInterrupted" / "v1.avsc"
    raw = json.loads(path.read_text())
    fields = raw["fields"]
    if edit == "default":
        field = next(f for f in fields[-1]["type"]["fields"] if isinstance(f.get("default"), int))
        field["default"] += 1
    else:
        ts = next(f for f in fields if f["name"] == "ts")
        ts["type"] = {"type": "long", "logicalType": "timestamp-millis"}
    path.write_text(json.dumps(raw))
    with pytest.raises(RegistryError, match="immutable"):
        SchemaRegistry.load(registry_copy)


def test_docs_and_layout_may_change_in_place(registry_copy: Path) -> None:
    path = registry_copy / "avro" / "XidRaised" / "v1.avsc"
    raw = json.loads(path.read_text())
    raw["doc"] = "reworded"
    path.write_text(json.dumps(raw, indent=4))
    SchemaRegistry.load(registry_copy)


def test_register_assigns_next_id_and_checks_compatibility(registry_copy: Path) -> None:
    folder = registry_copy / "avro" / "XidRaised"
    raw = json.loads((folder / "v2.avsc").read_text())
    raw["fields"][-1]["type"]["fields"].append({"name": "driver", "type": "string", "default": ""})
    (folder / "v3.avsc").write_text(json.dumps(raw))
    registry = SchemaRegistry.load(registry_copy)
    top = max(v.schema_id for s in registry.subjects for v in registry.versions(s))
    added = registry.register("XidRaised")
    assert added is not None and added.schema_id == top + 1 and added.version == 3
    assert SchemaRegistry.load(registry_copy).latest("XidRaised").schema_id == top + 1

    bad = json.loads((folder / "v3.avsc").read_text())
    bad["fields"][-1]["type"]["fields"].append({"name": "no_default", "type": "int"})
    (folder / "v4.avsc").write_text(json.dumps(bad))
    with pytest.raises(CompatibilityError, match="no_default"):
        SchemaRegistry.load(registry_copy).register("XidRaised")


def test_old_records_decode_with_the_new_reader_schema(registry_copy: Path) -> None:
    from schemas import Codec
    from schemas.events import XidRaised

    old_codec = Codec(SchemaRegistry.load(registry_copy))
    data = old_codec.encode(
        XidRaised(
            event_id="e", host_id="h", cluster="c", ts=1, payload={"gpu": 0, "xid": 48, "pci_bus_id": "x"}
        ).to_record()
    )
    folder = registry_copy / "avro" / "XidRaised"
    raw = json.loads((folder / "v2.avsc").read_text())
    raw["fields"][-1]["type"]["fields"].append({"name": "driver", "type": "string", "default": "unknown"})
    (folder / "v3.avsc").write_text(json.dumps(raw))
    registry = SchemaRegistry.load(registry_copy)
    registry.register("XidRaised")
    decoded = Codec(registry).decode(data)
    assert decoded.schema_version == 2
    assert decoded.record["payload"]["driver"] == "unknown"


def add_version(root: Path, subject: str, raw: dict) -> None:
    """Write the next ``v<N>.avsc`` of ``subject`` and enter it in registry.json directly (no compatibility check)."""
    doc = json.loads((root / "registry.json").read_text())
    version = doc["subjects"][subject][-1]["version"] + 1
    (root / "avro" / subject / f"v{version}.avsc").write_text(json.dumps(raw))
    doc["subjects"][subject].append({"version": version, "id": 99, "fingerprint": fingerprint(raw)})
    (root / "registry.json").write_text(json.dumps(doc))


def test_history_check_passes_a_compatible_evolution(registry_copy: Path) -> None:
    raw = json.loads((registry_copy / "avro" / "XidRaised" / "v2.avsc").read_text())
    raw["fields"][-1]["type"]["fields"].append({"name": "driver", "type": "string", "default": ""})
    add_version(registry_copy, "XidRaised", raw)
    registry = SchemaRegistry.load(registry_copy)
    pairs = [(a.subject, a.version, b.version) for a, b in version_pairs(registry)]
    assert ("XidRaised", 2, 3) in pairs
    assert history_problems(registry) == []


def test_history_check_reports_a_hand_registered_incompatible_version(registry_copy: Path) -> None:
    raw = json.loads((registry_copy / "avro" / "XidRaised" / "v2.avsc").read_text())
    raw["fields"][-1]["type"]["fields"].append({"name": "driver", "type": "string"})
    add_version(registry_copy, "XidRaised", raw)
    problems = history_problems(SchemaRegistry.load(registry_copy))
    assert len(problems) == 1 and problems[0].startswith("XidRaised v2 -> v3:") and "driver" in problems[0]
