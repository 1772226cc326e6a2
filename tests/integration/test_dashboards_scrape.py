"""Every metric the Grafana dashboards name is in a scrape of the running parts, over the real broker.

The registry test (tests/deploy/test_grafana_dashboards.py) builds each part's registry in-process,
with stand-ins for what the part wires in. This one starts the long-running parts as the demo does
(``fleetpulse.demo_parts.start_parts``: ``fleetpulse detect``, ``dispatch``, ``archive`` as child
processes with their settings in the environment, a webhook receiver for the dispatcher; and an
``agent``) on the metrics ports the demo's plan names, feeds them a day of the small simulated fleet, and reads their ``/metrics``
over HTTP. So it also proves: every part actually serves its metrics on the port its option names,
the collectors are registered in the real process (fleet gauges, consumer lag), and families that
appear only once a part has worked (the agent's last delivery) appear when it runs.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from fleetpulse.demo_parts import start_parts, wait_http
from fleetpulse.supervisor import Part, Supervisor
from ground.kafka import admin
from ground.launch import child_env, fleetpulse_argv
from ground.settings import Settings
from tests.conftest import KafkaCluster, free_ports
from tests.deploy.exported import scraped_names
from tests.deploy.panels import Named, missing, panel_metrics
from tests.fleetpulse.test_demo_plan import plan as demo_plan
from tests.streams.kafka_io import isolated_settings, with_own_lake

pytestmark = pytest.mark.integration
SCRAPE_TIMEOUT_S = 30.0  # after the day is fed: the families that need work done


def parts_settings(kafka: KafkaCluster, run_dir: Path, receiver_port: int) -> Settings:
    """Topics, groups, lake and outbox of this test alone; alerts go to its receiver; the agent samples every second."""
    settings = with_own_lake(isolated_settings(kafka.settings), str(run_dir / "lake"))
    return settings.with_section(
        "webhooks",
        urls=[f"http://127.0.0.1:{receiver_port}/alerts"],
        secret=SecretStr(secrets.token_urlsafe(32)),
        group_id=f"{settings.detect.app_id}-webhooks",
        data_dir=run_dir / "outbox",
    ).with_section("agent", sample_interval_s=1)


def scrape(url: str) -> str | None:
    try:
        response = httpx.get(url, timeout=2)
    except httpx.HTTPError:
        return None
    return response.text if response.status_code == 200 else None


def test_every_metric_a_panel_names_is_in_a_scrape_of_the_running_parts(
    kafka: KafkaCluster, tmp_path: Path
) -> None:
    web, receiver, dispatch, archive, agent = free_ports(5)
    settings = parts_settings(kafka, tmp_path, receiver)
    admin.create_topics(settings)
    named = panel_metrics()
    assert named, "no dashboard names a fleetpulse metric"
    plan = replace(
        demo_plan(tmp_path),
        receiver_port=receiver,
        web_ports=[web],
        dispatch_metrics_port=dispatch,
        archive_metrics_port=archive,
    )
    metrics = {part.split("-")[0]: url for part, url in plan.metrics_urls.items()}
    metrics["agent"] = f"http://127.0.0.1:{agent}/metrics"
    with Supervisor(tmp_path / "logs", child_env(settings)) as sup:
        demo = start_parts(sup, plan)  # as `fleetpulse demo` starts them, on the ports its plan prints
        parts: list[Part] = [
            *demo.all(),
            sup.start(
                "agent",
                fleetpulse_argv(
                    "agent",
                    "--fixture-host",
                    str(tmp_path / "fixture-host"),
                    "--state-dir",
                    str(tmp_path / "agent"),
                    "--host-id",
                    "scrape-h00001",
                    "--metrics-port",
                    str(agent),
                ),
            ),
        ]
        # every part answers on its metrics port before the data comes (the archiver's imports take a while)
        for part in (demo.dispatcher, demo.archiver, parts[-1]):
            wait_http(metrics[part.name], 90, sup, part)
        day = ["--preset", "small", "--mode", "fast-forward", "--days", "1", "--seed", "7", "--no-progress"]
        sup.run("simulate", fleetpulse_argv("simulate", *day), timeout_s=60)

        deadline = time.monotonic() + SCRAPE_TIMEOUT_S
        absent: list[Named] = sorted(named)
        pages: dict[str, str | None] = {}
        while absent and time.monotonic() < deadline:
            sup.check_alive(*parts)
            pages = {part: scrape(url) for part, url in metrics.items()}
            absent = missing(named, scraped_names(p for p in pages.values() if p is not None))
            if absent:
                time.sleep(1)
    silent = sorted(part for part, page in pages.items() if page is None)
    assert not silent, f"no /metrics from {silent}"
    assert not absent, f"panels query metrics no scrape of the running parts holds: {absent}"
