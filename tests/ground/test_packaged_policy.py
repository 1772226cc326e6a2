"""The rule defaults a batch job runs with are read from the packaged policy file, not held a second time."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
from types import ModuleType
from typing import Any

import pytest

from analytics.jobs import operations, repairs
from ground.packaged_policy import PACKAGED, parse_duration_ms
from ground.slow_peers import PeerRule, judge_window


def _fresh(name: str) -> ModuleType:
    """A new copy of module ``name``, its defaults read again (the imported one is left as it is)."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _changed(value: Any) -> Any:
    return "17m" if isinstance(value, str) else value + 1 if isinstance(value, int) else value / 2


def test_the_peer_rules_defaults_are_the_packaged_slow_host_table() -> None:
    table = PACKAGED["slow_host"]
    for field in dataclasses.fields(PeerRule):
        value = table[field.name]
        assert field.default == (parse_duration_ms(value) if field.name == "window" else value), field.name


def test_a_changed_packaged_file_changes_every_default_of_the_batch_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No default is held in Python: each follows the file (a literal left in a module would not move)."""
    slow = {k: _changed(v) for k, v in PACKAGED["slow_host"].items() if isinstance(v, int | float | str)}
    monkeypatch.setitem(PACKAGED, "slow_host", {**PACKAGED["slow_host"], **slow})
    monkeypatch.setitem(
        PACKAGED, "planner", {**PACKAGED["planner"], "capacity_buffer_pct": 37.5, "reset_within": "3h"}
    )
    rule = _fresh("ground.slow_peers").PeerRule()
    for field in dataclasses.fields(PeerRule):
        want = parse_duration_ms("17m") if field.name == "window" else slow[field.name]
        assert getattr(rule, field.name) == want, field.name
    assert _fresh("ground.domain_buffer").PACKAGED_CAPACITY_BUFFER_PCT == 37.5
    assert _fresh("analytics.jobs.repairs").PACKAGED_RESET_WITHIN_H == 3.0


def test_the_operations_jobs_reset_bound_is_the_packaged_one() -> None:
    assert (
        parse_duration_ms(PACKAGED["planner"]["reset_within"]) / 3_600_000 == repairs.PACKAGED_RESET_WITHIN_H
    )
    for job in (operations.run_incidents, operations.run_maintenance_domain):
        default = inspect.signature(job).parameters["reset_within_hours"].default
        assert default is repairs.PACKAGED_RESET_WITHIN_H, job.__name__  # not a copy of its value


def test_a_changed_packaged_degraded_table_changes_the_degraded_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """The degraded-telemetry bounds and the share that makes a lone host slow follow ``[degraded]``."""
    gpus = [{"throttle_reasons": 0x08}]  # NVML: a power brake, not a thermal slowdown
    nics = [{"rx_gbps": 100.0}, {"rx_gbps": 100.0}, {"rx_gbps": 92.0}]  # one port 8 % below the others
    alone = {"h1": (100.0, 50.0, "j1")}  # alone in its job: judged by its telemetry only
    degraded = _fresh("ground.degraded")
    assert not degraded.sample_degraded(gpus, [])
    assert degraded.sample_degraded([], nics)
    assert [v.slow for v in judge_window(alone, PeerRule(), {"h1": 0.4})] == [False]

    monkeypatch.setitem(
        PACKAGED,
        "degraded",
        {"throttle_mask": 0x08, "port_drop": 0.1, "min_ports": 4, "telemetry_share": 0.3},
    )
    degraded = _fresh("ground.degraded")
    assert degraded.sample_degraded(gpus, [])
    assert not degraded.sample_degraded([], nics)  # 8 % is under 10 %, and 3 ports are under 4
    assert degraded.sample_degraded([], [*nics, {"rx_gbps": 100.0}, {"rx_gbps": 80.0}])
    peers = _fresh("ground.slow_peers")
    assert [v.slow for v in peers.judge_window(alone, peers.PeerRule(), {"h1": 0.4})] == [True]
