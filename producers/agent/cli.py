"""``fleetpulse agent``: run the host agent, or print one round of events as JSON (``--once --print``)."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from prometheus_client import CollectorRegistry, start_http_server

from ground.cli_context import settings_of
from ground.stop_signals import stop_on_signals
from producers.agent.service import once, serve
from producers.agent.testing import FixtureHost

log = logging.getLogger(__name__)


def agent(
    ctx: typer.Context,
    run_once: Annotated[
        bool, typer.Option("--once", help="Poll every source once (twice, 1 s apart) and stop.")
    ] = False,
    print_events: Annotated[
        bool, typer.Option("--print", help="With --once: print the events as JSON lines, no Kafka.")
    ] = False,
    sysfs_root: Annotated[
        Path | None, typer.Option(help="Read sysfs here (default settings.agent.sysfs_root, /sys).")
    ] = None,
    kmsg_path: Annotated[
        Path | None, typer.Option(help="Kernel log device or file (default /dev/kmsg).")
    ] = None,
    state_dir: Annotated[
        Path | None, typer.Option(help="Spool and resume state (default settings.agent.state_dir).")
    ] = None,
    nvml: Annotated[bool | None, typer.Option("--nvml/--no-nvml", help="Read GPUs through NVML.")] = None,
    dcgm_url: Annotated[
        str | None, typer.Option(help="Scrape this dcgm-exporter page (turns the scraper on).")
    ] = None,
    host_id: Annotated[
        str | None, typer.Option(help="Host id of the events (default: the host name).")
    ] = None,
    fixture_host: Annotated[
        Path | None,
        typer.Option(
            help="Build a synthetic 8-GPU, 8-port host under this folder and read it (demos, compose)."
        ),
    ] = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(help="Serve Prometheus metrics (spool depth, drops, deliveries) on this port."),
    ] = None,
    metrics_host: Annotated[
        str, typer.Option(help="Address the metrics port binds (loopback by default).")
    ] = "127.0.0.1",
) -> None:
    """Collect this host's GPU, NIC, PCIe and kernel-log telemetry and send the simulator's events to Kafka.

    On a real host it needs read access to /dev/kmsg and /sys (see the README's "On real hosts").
    """
    settings = settings_of(ctx)
    a = settings.agent
    update: dict[str, Any] = {}
    if sysfs_root is not None:
        update["sysfs_root"] = sysfs_root
    if state_dir is not None:
        update["state_dir"] = state_dir
    if host_id is not None:
        update["host_id"] = host_id
    if fixture_host is not None:
        host = FixtureHost(fixture_host)
        kernel = {"kmsg_path": host.kmsg, "boot_id_path": host.boot_id, "journalctl": False}
        update |= {"sysfs_root": host.sys, "kernel_log": a.kernel_log.model_copy(update=kernel)}
        update["nvml"] = a.nvml.model_copy(update={"enabled": False})
    if kmsg_path is not None:
        update["kernel_log"] = update.get("kernel_log", a.kernel_log).model_copy(
            update={"kmsg_path": kmsg_path}
        )
    if nvml is not None:
        update["nvml"] = a.nvml.model_copy(update={"enabled": nvml})
    if dcgm_url is not None:
        update["dcgm"] = a.dcgm.model_copy(update={"enabled": True, "url": dcgm_url})
    a = a.model_copy(update=update)
    if run_once:
        for record in once(a):
            if print_events:
                sys.stdout.write(json.dumps(record, sort_keys=True) + "\n")
        return
    if print_events:
        raise typer.BadParameter("--print needs --once (the long-running agent sends to Kafka)")
    registry = CollectorRegistry()
    if metrics_port is not None:
        start_http_server(metrics_port, addr=metrics_host, registry=registry)
    with stop_on_signals() as stop:
        summary = serve(settings.model_copy(update={"agent": a}), stop.is_set, registry=registry)
    typer.echo(json.dumps(summary, sort_keys=True))
