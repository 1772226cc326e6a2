"""A closed-loop simulation against a live detect worker on the test broker (for the closed-loop tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fleetpulse.twin.live import BrokerLoop, Lockstep
from fleetpulse.twin.settings import TwinSettings
from producers.config import FleetConfig
from producers.runner import SimulationRequest, SimulationResult, run_simulation
from streams.worker import spawn_worker
from tests.conftest import free_ports
from tests.fleetpulse.twin.conftest import START_TS


def run_closed_loop(
    settings: Any,
    tmp_path: Path,
    config: FleetConfig,
    twin: TwinSettings,
    *,
    seed: int,
    days: float,
    interval_s: int,
    policy_file: Path | None = None,
) -> SimulationResult:
    """Fast-forward, in lockstep with a detect worker; the truth goes to ``tmp_path / "truth"``."""
    (port,) = free_ports(1)
    worker = spawn_worker(
        settings, web_port=port, data_dir=tmp_path / "w", policy_file=policy_file, log_path=tmp_path / "w.log"
    )
    loop = BrokerLoop(settings, twin, seed, Lockstep(timeout_s=30))
    try:
        worker.wait_ready(60)
        request = SimulationRequest(
            mode="fast-forward",
            days=days,
            interval_s=interval_s,
            fleet=config,
            seed=seed,
            start_ts=START_TS,
            truth_out=tmp_path / "truth",
        )
        return run_simulation(settings, request, answer=loop)
    finally:
        loop.close()
        worker.stop()
