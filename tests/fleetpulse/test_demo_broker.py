"""Demos side by side: a demo that has to start a broker starts one of its own on free ports, in its run folder."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleetpulse import demo_run
from fleetpulse.cli import app
from fleetpulse.demo_run import DemoPlan
from ground.settings import Settings


class Planned(Exception):
    """Raised by the stand-in run once it has seen the settings the demo runs with."""


def run_demo_seeing(seen: list[tuple[Settings, DemoPlan]]) -> object:
    def run_demo(settings: Settings, plan: DemoPlan) -> dict[str, object]:
        seen.append((settings, plan))
        raise Planned

    return run_demo


def test_a_demo_beside_another_broker_on_the_default_port_starts_its_own_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[Settings, DemoPlan]] = []
    monkeypatch.setattr(demo_run, "run_demo", run_demo_seeing(seen))
    with socket.socket() as taken:  # another demo's broker holds the configured port
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {
            "FLEETPULSE_BROKER__PORT": str(port),
            "FLEETPULSE_BROKER__DATA_DIR": str(tmp_path / "shared-broker"),
        }
        for _ in range(2):
            result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "out")], env=env)
            assert isinstance(result.exception, Planned), result.output
    (first, plan_a), (second, plan_b) = seen
    assert plan_a.run_dir != plan_b.run_dir  # two demos in the same second get two folders
    for settings, plan in seen:
        assert settings.broker.port != port and settings.broker.effective_controller_port != port + 1
        assert settings.broker.data_dir == plan.run_dir / "kafka"
    assert first.broker.bootstrap != second.broker.bootstrap


def test_keep_broker_runs_on_the_configured_local_broker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[Settings, DemoPlan]] = []
    monkeypatch.setattr(demo_run, "run_demo", run_demo_seeing(seen))
    env = {"FLEETPULSE_BROKER__PORT": "29092", "FLEETPULSE_BROKER__DATA_DIR": str(tmp_path / "broker")}
    result = CliRunner().invoke(app, ["demo", "--keep-broker", "--out", str(tmp_path / "out")], env=env)
    assert isinstance(result.exception, Planned), result.output
    assert seen[0][0].broker.port == 29092 and seen[0][0].broker.data_dir == tmp_path / "broker"
