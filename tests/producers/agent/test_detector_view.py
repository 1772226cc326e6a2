"""What the detectors make of the agent's events: valid records, and a host without a job is never slow."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from producers.agent.service import once
from producers.agent.testing import FixtureHost, fake_pynvml
from streams.classify import classify
from streams.policy import load_policy
from streams.slow import HostStage
from streams.validate import check


def test_every_event_passes_validation_and_faults_classify(host: FixtureHost, tmp_path: Path) -> None:
    host.fall_off_bus(3)
    host.log("mlx5_core 0000:1a:00.0 ibp26s0: Link down")
    policy = load_policy()
    records = once(host.agent_settings(tmp_path, nvml={"enabled": True}), nvml=fake_pynvml(), gap_s=0.05)
    now = int(time.time() * 1000)
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
    store: dict[str, Any] = {}
    stage = HostStage(load_policy().slow_host)
    assert stage.add_sample(store, sample) == ([], False)
    assert store == {}  # never folded into a window, so never scored against its peers
