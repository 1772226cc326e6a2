"""The pipeline's long-running parts and its live simulator, started the same way for the demo and the soak."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from fleetpulse.supervisor import Part, PartFailedError, Supervisor, wait_until
from ground.launch import fleetpulse_argv

if TYPE_CHECKING:
    from fleetpulse.demo_run import DemoPlan


@dataclass(frozen=True)
class RunningParts:
    receiver: Part
    detectors: list[Part]
    dispatcher: Part
    archiver: Part

    def all(self) -> list[Part]:
        return [self.receiver, *self.detectors, self.dispatcher, self.archiver]


def start_parts(sup: Supervisor, plan: DemoPlan) -> RunningParts:
    """Receiver, detectors, dispatcher and archiver, returned once the receiver and detectors answer HTTP."""
    receiver = sup.start(
        "receiver",
        fleetpulse_argv(
            "receiver", "--port", str(plan.receiver_port), "--out", str(plan.run_dir / "alerts.jsonl")
        ),
    )
    detectors = [
        sup.start(
            f"detect-{i}",
            fleetpulse_argv(
                "detect", "--web-port", str(port), "--data-dir", str(plan.run_dir / f"detect-{i}")
            ),
        )
        for i, port in enumerate(plan.web_ports)
    ]
    dispatcher = sup.start(
        "dispatch", fleetpulse_argv("dispatch", *metrics_port_args(plan.dispatch_metrics_port))
    )
    archiver = sup.start("archive", fleetpulse_argv("archive", *metrics_port_args(plan.archive_metrics_port)))
    wait_http(f"{plan.receiver_url}/stats", 30, sup, receiver)
    for port, part in zip(plan.web_ports, detectors, strict=True):
        wait_http(f"http://127.0.0.1:{port}/health", 90, sup, part)
    return RunningParts(receiver, detectors, dispatcher, archiver)


def metrics_port_args(port: int) -> list[str]:
    """``--metrics-port`` for a part given a port; 0 says off explicitly, so a setting cannot open one."""
    return ["--metrics-port", str(port)]


def simulator_command(plan: DemoPlan) -> str:
    """Closed loop (``fleetpulse loop``) the fleet answers the planner's actions; open loop it ignores them."""
    return "loop" if plan.closed_loop else "simulate"


def live_simulator_argv(plan: DemoPlan) -> list[str]:
    """The live phase at ``plan.speed``: continues the history's fleet when there is one, else a fresh fleet."""
    args = [
        simulator_command(plan),
        "--preset",
        plan.preset,
        "--mode",
        "live",
        "--duration",
        f"{plan.live_seconds:g}s",
        "--speed",
        str(plan.speed),
        "--seed",
        str(plan.seed),
        "--truth-out",
        str(plan.live_truth),
    ]
    if not plan.closed_loop:
        args.append("--no-progress")
    if plan.history_days > 0:
        args += ["--continue-from", str(plan.truth)]
    return fleetpulse_argv(*args)


def wait_http(url: str, timeout_s: float, sup: Supervisor, part: Part) -> None:
    def up() -> bool:
        sup.check_alive(part)
        try:
            return httpx.get(url, timeout=2).status_code < 500
        except httpx.HTTPError:
            return False

    if not wait_until(up, timeout_s):
        raise PartFailedError(
            f"{part.name} did not answer {url} within {timeout_s:.0f} s (log {part.log_path})"
        )
