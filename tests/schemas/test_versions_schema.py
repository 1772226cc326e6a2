"""Version reports and campaign steps: plain Avro readers decode them from ``schemas/``; evolution keeps old ones readable."""

from __future__ import annotations

import copy
import io
import json
import shutil
from pathlib import Path

import fastavro
import pytest

from schemas import (
    VERSION_COMPONENTS,
    CampaignRecorded,
    Codec,
    CompatibilityError,
    HostVersionsReported,
    SchemaRegistry,
)

AVRO = Path(__file__).resolve().parents[2] / "schemas" / "avro"


def plain_decode(framed: bytes, subject: str, version: int = 1) -> dict:
    """fastavro alone, with the .avsc file: what another language or tool would do (magic byte + 4-byte id)."""
    assert framed[0] == 0
    schema = fastavro.parse_schema(json.loads((AVRO / subject / f"v{version}.avsc").read_text()))
    return fastavro.schemaless_reader(io.BytesIO(framed[5:]), schema)  # type: ignore[call-arg]


def versions_record() -> dict:
    return HostVersionsReported(
        event_id="e-1",
        host_id="h1",
        cluster="c1",
        ts=1_700_000_000_000,
        agent_seq=3,
        payload={
            "driver": "550.54.15",
            "cuda_driver": "12.4",
            "vbios": "96.00.99.00.01",
            "inforom": "G520.0200.00.05",
            "nic_firmware": "28.39.1002",
            "kernel": "5.15.0-105-generic",
            "os_image": "Ubuntu 22.04.4 LTS",
            "reason": "start",
            "actor": "agent",
        },
    ).to_record()


def test_a_version_report_decodes_with_a_plain_avro_reader() -> None:
    record = versions_record()
    decoded = plain_decode(Codec().encode(record), "HostVersionsReported")
    assert decoded == record
    assert set(VERSION_COMPONENTS) <= set(decoded["payload"])


def test_a_partial_report_leaves_the_other_components_null() -> None:
    record = versions_record()
    record["payload"] = {"driver": "560.35.03", "reason": "change_applied", "actor": "ops"}
    decoded = Codec().decode(Codec().encode(record)).record
    assert decoded["payload"]["driver"] == "560.35.03" and decoded["payload"]["kernel"] is None


def test_a_campaign_step_decodes_with_a_plain_avro_reader() -> None:
    record = CampaignRecorded(
        event_id="c-1",
        host_id="-",
        cluster="-",
        ts=1_700_000_000_000,
        payload={
            "campaign_id": "trn-1",
            "kind": "started",
            "component": "driver",
            "version": "560.35",
            "scope": ["rsc-ib"],
            "canary": 2,
            "actor": "ops",
        },
    ).to_record()
    decoded = plain_decode(Codec().encode(record), "CampaignRecorded")
    assert decoded["payload"]["scope"] == ["rsc-ib"] and decoded["payload"]["max_parallel_domains"] == 1
    assert decoded["payload"]["rollback_of"] is None


def registry_copy(tmp_path: Path) -> Path:
    root = tmp_path / "schemas"
    shutil.copytree(AVRO, root / "avro")
    shutil.copy(AVRO.parent / "registry.json", root / "registry.json")
    return root


def next_version(root: Path, field: dict) -> dict:
    raw = json.loads((root / "avro" / "HostVersionsReported" / "v1.avsc").read_text())
    new = copy.deepcopy(raw)
    new["fields"][-1]["type"]["fields"].append(field)
    (root / "avro" / "HostVersionsReported" / "v2.avsc").write_text(json.dumps(new))
    return new


def test_a_v2_with_a_defaulted_field_registers_and_still_reads_v1_records(tmp_path: Path) -> None:
    root = registry_copy(tmp_path)
    new = next_version(root, {"name": "fabric_manager", "type": ["null", "string"], "default": None})
    registered = SchemaRegistry.load(root).register("HostVersionsReported")
    assert registered is not None and registered.version == 2
    framed = Codec().encode(versions_record())  # written by v1
    old = fastavro.parse_schema(json.loads((AVRO / "HostVersionsReported" / "v1.avsc").read_text()))
    read = fastavro.schemaless_reader(io.BytesIO(framed[5:]), old, fastavro.parse_schema(new))  # type: ignore[call-arg]
    assert read["payload"]["fabric_manager"] is None and read["payload"]["driver"] == "550.54.15"


def test_a_v2_with_a_field_old_records_lack_is_refused(tmp_path: Path) -> None:
    root = registry_copy(tmp_path)
    next_version(root, {"name": "fabric_manager", "type": "string"})
    with pytest.raises(CompatibilityError):
        SchemaRegistry.load(root).register("HostVersionsReported")
