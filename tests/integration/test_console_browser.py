"""The operator console in Debian's headless Chromium, on a live detect worker over the real broker.

The worker folds a small scenario (lemons, slow hosts, one change campaign); the browser signs in
with the ops token through the form, reads the overview and a host page. Screenshots of every page
are kept under the test's temporary folder (``screenshots/``).
"""

from __future__ import annotations

import secrets
from pathlib import Path

import httpx
import pytest

from streams.testing import START_TS, Scenario
from streams.trains.commands import CampaignSpec, start_record
from streams.trains.log_io import send_records
from streams.worker import spawn_worker
from tests.conftest import free_ports
from tests.streams.console.webdriver import Browser, browser
from tests.streams.kafka_io import isolated_settings, produce, wait_for

pytestmark = pytest.mark.integration
SCENARIO = Scenario()
TOKEN = secrets.token_urlsafe(24)
OPEN_HOSTS = SCENARIO.lemon_hosts | SCENARIO.slow_host_ids
T0 = START_TS  # the scenario's start: in the past, as the worker requires of fleet.actions


def cells(b: Browser, table: str, column: int) -> list[str]:
    return [row.find_all("td")[column].text for row in b.find_all(f"table#{table} tbody tr")]


def test_console_in_chromium_on_a_live_worker(kafka, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    settings = isolated_settings(kafka.settings)
    (port,) = free_ports(1)
    worker = spawn_worker(
        settings,
        web_port=port,
        data_dir=tmp_path / "w",
        log_path=tmp_path / "w.log",
        extra_env={"FLEETPULSE_DETECT__OPS_TOKEN": TOKEN},
    )
    base = f"http://127.0.0.1:{port}/console"
    try:
        worker.wait_ready(60)
        produce(settings, SCENARIO.records())
        send_records(
            settings, [start_record(CampaignSpec(change="driver=560.35", actor="test", scope=["c9-md9"]), T0)]
        )
        wait_for(
            lambda: (
                {h["host_id"] for h in worker.get_json("/work")} == OPEN_HOSTS
                and len(worker.get_json("/findings")) == 5
                and worker.get_json("/trains")
            ),
            60,
            "the fleet's state",
        )

        # without the token: no page, whatever the path (and the bearer header works as the ops endpoint's)
        assert httpx.get(base).status_code == 401
        assert httpx.get(f"{base}/hosts/h0017").status_code == 401
        assert httpx.get(base, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200

        with browser(tmp_path) as b:
            b.open(base)
            assert b.find("#message").text == "the console needs the ops token"
            b.screenshot("sign-in")
            b.find("#login input[name=token]").type("not-the-token")
            b.find("#login button").click()
            b.wait(lambda: b.find("#message").text == "wrong token", "the wrong token's page")
            assert not b.find_all("table#domains")

            b.find("#login input[name=token]").type(TOKEN)
            b.find("#login button").click()
            b.wait(lambda: b.title == "fleetpulse · Fleet overview", "the overview after signing in")
            assert b.url == base
            b.screenshot("overview")
            domains = {row[0]: row for row in zip(*(cells(b, "domains", i) for i in range(11)), strict=True)}
            assert domains["c1-md0"][2] == "1" and domains["c1-md0"][9] == "1"  # one out, one queued
            out_links = {a.text for a in b.find_all("table#domains a.host")}
            assert out_links and out_links <= OPEN_HOSTS
            assert set(cells(b, "operations", 0)) == OPEN_HOSTS
            assert cells(b, "trains", 1) == ["driver=560.35"]
            assert set(cells(b, "findings", 1)) == OPEN_HOSTS and len(cells(b, "findings", 1)) == 5
            evidence = cells(b, "findings", 10)
            assert all("=" in e for e in evidence), evidence  # every finding shows its evidence

            next(a for a in b.find_all("table#operations a.host") if a.text == "h0017").click()
            b.wait(lambda: b.title == "fleetpulse · Host h0017", "the host page")
            assert b.url == f"{base}/hosts/h0017"
            b.screenshot("host-h0017")
            kinds = cells(b, "history", 1)
            assert "finding" in kinds and "suspected" in kinds, kinds
            assert cells(b, "host-findings", 3) == ["fell_off_bus_repeat_gpu"]
            assert cells(b, "host-operations", 0) == ["rma"]

            b.open(f"{base}/hosts/no-such-host")
            assert b.find("#message").text.startswith("no host no-such-host")
        shots = sorted(p.name for p in (tmp_path / "screenshots").iterdir())
        assert shots == ["host-h0017.png", "overview.png", "sign-in.png"]
        assert all((tmp_path / "screenshots" / s).stat().st_size > 10_000 for s in shots)
    finally:
        worker.stop()
