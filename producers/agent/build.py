"""Wiring: the collectors, spool and sender a settings object asks for, with production defaults."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ground.settings.agent import AgentSettings
from producers.agent.aer import AerCollector
from producers.agent.agent import Agent, Commit
from producers.agent.collector import Collector, Problems
from producers.agent.dcgm import DcgmCollector
from producers.agent.errors import AgentError
from producers.agent.infiniband import InfinibandCollector
from producers.agent.kernel_log import KernelLogCollector
from producers.agent.nvml import NvmlCollector
from producers.agent.steptime import StepTimeServer
from producers.agent.sysfs import SysfsReader
from producers.agent.topology import gpu_bus_ids
from producers.agent.units import Units
from producers.agent.versions import VersionsCollector
from schemas.bounds import ID_RULE, valid_id


@dataclass
class Parts:
    units: Units
    problems: Problems
    collectors: list[Collector]
    step_time: StepTimeServer | None


def build_parts(
    settings: AgentSettings, *, nvml: ModuleType | None = None, problems: Problems | None = None
) -> Parts:
    problems = problems or Problems()
    units = Units()
    reader = SysfsReader(settings.sysfs_root, problems, "sysfs")
    units.set_gpus(gpu_bus_ids(reader))
    collectors: list[Collector] = []
    if settings.infiniband.enabled:
        reader_ib = SysfsReader(settings.sysfs_root, problems, "infiniband")
        collectors.append(InfinibandCollector(settings.infiniband, reader_ib, problems, units))
    if settings.nvml.enabled:
        collectors.append(NvmlCollector(settings.nvml, units, problems, nvml))
    if settings.dcgm.enabled:
        collectors.append(DcgmCollector(settings.dcgm, units, problems))
    if settings.aer.enabled:
        collectors.append(
            AerCollector(settings.aer, SysfsReader(settings.sysfs_root, problems, "aer"), units, problems)
        )
    if settings.kernel_log.enabled:
        collectors.append(
            KernelLogCollector(settings.kernel_log, units, problems, emit_aer=not settings.aer.enabled)
        )
    if settings.versions.enabled:
        reader_v = SysfsReader(settings.sysfs_root, problems, "versions")
        collectors.append(
            VersionsCollector(settings.versions, reader_v, problems, nvml, use_nvml=settings.nvml.enabled)
        )
    step = None
    if settings.step_time.enabled:
        try:
            step = StepTimeServer(settings.step_time.host, settings.step_time.port, problems)
        except OSError as exc:
            problems.add(
                "step_time", "bind_failed", f"{settings.step_time.host}:{settings.step_time.port}", str(exc)
            )
    return Parts(units, problems, collectors, step)


def build_agent(
    settings: AgentSettings,
    commit: Commit,
    saved: dict[str, Any] | None = None,
    *,
    nvml: ModuleType | None = None,
    problems: Problems | None = None,
) -> Agent:
    host_id = settings.host_id or socket.gethostname()
    if not valid_id(host_id):  # the detector would dead-letter every event of this host
        raise AgentError(
            f"host id {host_id[:40]!r} breaks the id rule ({ID_RULE}); set --host-id or FLEETPULSE_AGENT__HOST_ID"
        )
    parts = build_parts(settings, nvml=nvml, problems=problems)
    return Agent(
        settings,
        host_id,
        parts.collectors,
        parts.units,
        parts.problems,
        commit,
        step_time=parts.step_time,
        saved=saved,
    )
