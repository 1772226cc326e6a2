"""Fixtures of the quality tests: one warm great-expectations gate, synthetic batches per table."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from analytics.lake.synthetic import host_ids, synthetic_records
from analytics.quality.gate import QualityGate
from schemas import (
    CampaignRecorded,
    ComponentFaultObserved,
    HostVersionsReported,
    IncidentReported,
    OperatorEventRecorded,
)
from schemas.arrow import table_name, to_table
from tests.analytics.lake.helpers import NOW

HOSTS = frozenset(host_ids(4))


@pytest.fixture(scope="session")
def gate() -> Iterator[QualityGate]:
    g = QualityGate()
    g.validate("alert_raised", batches()["alert_raised"], NOW)  # pay for the GX import here, not in a test
    yield g


def batches(**changes: Any) -> dict[str, pa.Table]:
    """One good Arrow batch per lake table."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in [*synthetic_records(n_hosts=4, samples_per_host=2), *recorded_history()]:
        by.setdefault(r["event_type"], []).append(r)
    return {table_name(et): to_table(et, rs) for et, rs in by.items()}


def recorded_history() -> list[dict[str, Any]]:
    """What a fleet records beyond raw signals: incidents, operators' steps, imported component faults,
    reported versions and a change campaign."""
    hour, start = 3_600_000, int(NOW.timestamp() * 1000) - 2 * 86_400_000
    out = []
    for i, host in enumerate(sorted(HOSTS)):
        env = {"host_id": host, "cluster": "rsc1", "ts": start + i * hour}
        out.append(
            IncidentReported(
                event_id=f"inc-{i}",
                **env,
                payload={
                    "cause": "unclassified" if i % 2 else "faulty_gpu",
                    "source_class": "GPU/lost",
                    "source_text": "lost",
                    "component": str(i),
                    "component_kind": "gpu",
                    "start_ts": env["ts"],
                    "end_ts": None if i == 0 else env["ts"] + hour,
                },
            ).to_record()
        )
        out.append(
            OperatorEventRecorded(
                event_id=f"op-{i}",
                **env,
                payload={
                    "kind": "out_of_service",
                    "actor": "oncall",
                    "reason": "fan noise",
                    "ticket_id": f"T-{i}",
                    "cause": "fan" if i % 2 else None,
                },
            ).to_record()
        )
        out.append(
            ComponentFaultObserved(
                event_id=f"cf-{i}",
                **env,
                payload={
                    "cause": "psu" if i % 2 else "network",
                    "component_kind": "psu",
                    "component": str(i),
                    "count": 1,
                },
            ).to_record()
        )
        out.append(
            HostVersionsReported(
                event_id=f"ver-{i}",
                **env,
                payload={
                    "driver": "550.54.15",
                    "cuda_driver": "12.4",
                    "vbios": "96.00.89.00.01",
                    "inforom": None,
                    "nic_firmware": "28.39.1002",
                    "kernel": "6.1.0-18-amd64",
                    "os_image": "debian-12",
                    "reason": "start",
                    "actor": "agent",
                },
            ).to_record()
        )
    env = {"host_id": "-", "cluster": "-", "ts": start}
    out.append(
        CampaignRecorded(
            event_id="camp-0",
            **env,
            payload={
                "campaign_id": "c-1",
                "kind": "started",
                "component": "driver",
                "version": "560.35",
                "scope": ["rsc1"],
                "hosts": [],
                "canary": 2,
                "max_parallel_domains": 1,
                "rollback_of": None,
                "actor": "ana",
                "reason": "",
                "evidence": None,
            },
        ).to_record()
    )
    return out


@pytest.fixture
def good() -> dict[str, pa.Table]:
    return batches()
