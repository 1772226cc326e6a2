"""What the detectors make of the agent's events: valid records, and a host without a job is never slow."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from producers.agent.service import once
from producers.agent.testing import FixtureHost, fake_pynvml
from streams.core.classify import classify
from streams.core.policy import load_policy
from streams.core.samples.windows import HostStage
from streams.core.validate import check


def test_every_event_passes_validation_and_faults_classify(host: FixtureHost, tmp_path: Path) -> None:
    host.fall_off_bus(3)
    host.log("mlx5_core 0000:1a:00.0 ibp26s0: Link down")
    policy = load_policy()
    nvml = fake_pynvml()
    nvml.gpus[5].values.update(gen=3, width=8, throttle=0x40)  # downtrained, HW thermal slowdown
    records = once(host.agent_settings(tmp_path, nvml={"enabled": True}), nvml=nvml, gap_s=0.05)
    now = int(time.time() * 1000)
    [sample] = [r["payload"] for r in records if r["event_type"] == "HostSampled"]
    g5 = sample["gpus"][5]  # HostSampled v2 carries what v1 read and dropped
    link = ("pcie_link_gen", "pcie_link_gen_max", "pcie_link_width", "pcie_link_width_max")
    assert [g5[k] for k in link] == [3, 5, 8, 16]
    assert g5["throttle_reasons"] == 0x40 and sample["gpus"][0]["throttle_reasons"] == 0
    for r in records:
        check(r, policy.validation, now)
    signals = [
        classify(r, policy) for r in records if r["event_type"] not in ("HostInventoried", "HostSampled")
    ]
    assert [(s.error_class, s.gpu) if s else None for s in signals] == [
        ("fell_off_bus", 3),
        None,
    ]  # carrier change: noise


def test_a_host_with_no_job_reporting_is_not_comparable(host: FixtureHost, tmp_path: Path) -> None:
    records = once(host.agent_settings(tmp_path), gap_s=0.05)
    [sample] = [r for r in records if r["event_type"] == "HostSampled"]
    assert sample["payload"]["step_time_ms"] is None and sample["schema_version"] == 2
    store: dict[str, Any] = {}
    stage = HostStage(load_policy().slow_host)
    assert stage.add_sample(store, sample) == ([], False)
    assert store == {}  # never folded into a window, so never scored against its peers
