"""Alerts pushed into a real Alertmanager (Debian's ``prometheus-alertmanager``) through ``/api/v2/alerts``."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from schemas import Codec
from streams.alerts import alerts_for
from streams.core.fleet.lifecycle import FleetState
from streams.core.planning.planner import Planner
from streams.core.policy import load_policy
from tests.conftest import free_ports
from tests.streams import factories as f
from tests.webhooks.conftest import webhook_settings
from tests.webhooks.test_dispatcher import FakeRecord
from webhooks import Dispatcher
from webhooks.alertmanager import API_PATH, api_url, postable_alerts
from webhooks.payload import notification

CONSOLE = "http://detector.example:6066"
DAY_MS = 86_400_000
TTL_S = 60 * 86_400.0  # the firing alert still firing when it reaches Alertmanager 30 days after it started
CONFIG = """
route:
  receiver: fleet-team
  group_by: [alertname, cluster, domain]
receivers:
  - name: fleet-team
"""


def rma_alerts(now_ms: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A NewRMA firing 30 days before ``now_ms`` and its resolved notification from when the host returned."""
    planner, state = Planner(load_policy()), FleetState()
    start = now_ms - 30 * DAY_MS
    opened = planner.on_finding(state, f.finding("h7", ts=start), "c0-md1", 20)
    firing = [a for action in opened for a in alerts_for(action)]
    back = planner.reconcile(state, "c0-md1", 20, now_ms)
    resolved = [a for action in back for a in alerts_for(action)]
    assert [a["payload"]["alertname"] for a in firing + resolved] == ["NewRMA", "NewRMA"]
    assert resolved[0]["ts"] < now_ms
    return firing[0], resolved[0]


def test_the_postable_alert_keeps_labels_links_and_ends_after_its_ttl() -> None:
    firing, resolved = rma_alerts(int(time.time() * 1000))
    (alert,) = json.loads(postable_alerts(notification(firing, console_url=CONSOLE).body, ttl_s=7200))
    assert alert["labels"]["host_id"] == "h7" and alert["labels"]["domain"] == "c0-md1"
    assert alert["generatorURL"] == f"{CONSOLE}/hosts/h7"
    assert alert["endsAt"] > alert["startsAt"]
    (done,) = json.loads(postable_alerts(notification(resolved, console_url=CONSOLE).body, ttl_s=7200))
    assert done["labels"] == alert["labels"]  # the same fingerprint: it ends the firing one
    assert done["endsAt"] == done["startsAt"]
    assert api_url("http://am:9093/") == "http://am:9093" + API_PATH


def test_without_a_console_the_generator_url_stays_empty() -> None:
    firing, _ = rma_alerts(int(time.time() * 1000))
    body = json.loads(notification(firing).body)
    assert body["alerts"][0]["generatorURL"] == ""
    assert "generatorURL" not in json.loads(postable_alerts(notification(firing).body, ttl_s=60))[0]


@pytest.fixture
def alertmanager(tmp_path: Path) -> Iterator[str]:
    binary = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
    if binary is None:
        pytest.skip(
            "Alertmanager is not installed (Debian: apt-get install prometheus-alertmanager; .ci/run does it)"
        )
    (port,) = free_ports(1)
    (tmp_path / "am.yml").write_text(CONFIG)
    log = (tmp_path / "am.log").open("w")
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={tmp_path / 'am.yml'}",
            f"--storage.path={tmp_path / 'am-data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/-/ready", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "am.log").read_text()
            time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def deliver(dispatcher: Dispatcher, alert: dict[str, Any], offset: int) -> None:
    async def go() -> None:
        await dispatcher.ingest({"tp": [FakeRecord("fleet.alerts", 0, offset, Codec().encode(alert))]})
        async with httpx.AsyncClient(timeout=5) as client:
            deliverer = dispatcher._make_deliverer(client)
            assert await deliverer.drain(20)

    asyncio.run(go())


def test_the_dispatcher_pushes_into_alertmanager_and_resolves(alertmanager: str, tmp_path: Path) -> None:
    settings = webhook_settings(
        tmp_path, [], alertmanager_urls=[alertmanager], console_url=CONSOLE, alertmanager_alert_ttl_s=TTL_S
    )
    dispatcher = Dispatcher(settings)
    firing, resolved = rma_alerts(int(time.time() * 1000))
    try:
        deliver(dispatcher, firing, 0)
        (got,) = httpx.get(f"{alertmanager}/api/v2/alerts").json()
        assert got["status"]["state"] == "active"
        assert got["generatorURL"] == f"{CONSOLE}/hosts/h7"
        labels = got["labels"]
        assert labels["alertname"] == "NewRMA" and labels["severity"] == "critical"
        assert labels["host_id"] == "h7" and labels["domain"] == "c0-md1" and labels["cluster"]
        assert got["annotations"]["summary"].startswith("RMA opened for h7")
        (group,) = httpx.get(f"{alertmanager}/api/v2/alerts/groups").json()
        assert group["labels"] == {k: labels[k] for k in ("alertname", "cluster", "domain")}
        assert group["receiver"]["name"] == "fleet-team"

        deliver(dispatcher, resolved, 1)
        assert httpx.get(f"{alertmanager}/api/v2/alerts", params={"active": "true"}).json() == []
        assert dispatcher.metrics.value("fleetpulse_webhook_delivered_total", url=api_url(alertmanager)) == 2
    finally:
        dispatcher.close()


def test_alertmanager_refusing_a_bad_alert_is_dead_not_retried(alertmanager: str, tmp_path: Path) -> None:
    settings = webhook_settings(
        tmp_path, [], alertmanager_urls=[alertmanager], alertmanager_alert_ttl_s=TTL_S
    )
    dispatcher = Dispatcher(settings)
    firing, _ = rma_alerts(int(time.time() * 1000))
    firing["payload"]["labels"]["bad label"] = "x"  # not a Prometheus label name: Alertmanager says 400
    try:
        deliver(dispatcher, firing, 0)
        assert dispatcher.outbox.dead() == 1
        assert httpx.get(f"{alertmanager}/api/v2/alerts").json() == []
    finally:
        dispatcher.close()
