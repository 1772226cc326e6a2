"""The demo's plan makes its own webhook secret and never shows it (its repr reaches logs and tracebacks)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleetpulse import demo_run
from fleetpulse.cli import app
from fleetpulse.demo_run import DemoPlan
from webhooks.schemes import check_secret


def plan(tmp_path: Path) -> DemoPlan:
    return DemoPlan(
        run_id="demo-1",
        run_dir=tmp_path,
        preset="demo",
        history_days=1.0,
        live_seconds=0.0,
        speed=10.0,
        seed=7,
        workers=1,
        receiver_port=1,
        web_ports=[2],
    )


def test_the_plan_repr_masks_its_webhook_secret(tmp_path: Path) -> None:
    made = plan(tmp_path)
    secret = made.webhook_secret.get_secret_value()
    check_secret(secret.encode())  # strong enough for the dispatcher and the receiver
    assert secret not in repr(made) and secret not in str(made)
    assert plan(tmp_path).webhook_secret.get_secret_value() != secret  # fresh per run


def test_the_plan_names_every_part_that_serves_metrics(tmp_path: Path) -> None:
    made = replace(plan(tmp_path), web_ports=[2, 3], dispatch_metrics_port=4, archive_metrics_port=0)
    assert made.metrics_urls == {
        "detect-0": "http://127.0.0.1:2/metrics",
        "detect-1": "http://127.0.0.1:3/metrics",
        "dispatch": "http://127.0.0.1:4/metrics",
    }


class Planned(Exception):
    """Raised by the stand-in run once it has seen the demo's plan."""


def test_the_demo_takes_fixed_metrics_ports_from_the_settings_and_free_ones_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[DemoPlan] = []

    def run_demo(settings: object, made: DemoPlan) -> dict[str, object]:
        seen.append(made)
        raise Planned

    monkeypatch.setattr(demo_run, "run_demo", run_demo)
    env = {"FLEETPULSE_KAFKA__BOOTSTRAP_SERVERS": "127.0.0.1:1", "FLEETPULSE_LAKE__METRICS_PORT": "9109"}
    result = CliRunner().invoke(app, ["demo", "--workers", "2", "--out", str(tmp_path)], env=env)
    assert isinstance(result.exception, Planned), result.output
    made = seen[0]
    assert made.archive_metrics_port == 9109 and len(made.web_ports) == 2
    free = {made.receiver_port, *made.web_ports, made.dispatch_metrics_port}
    assert len(free) == 4 and 0 not in free and 9109 not in free
    assert set(made.metrics_urls) == {"detect-0", "detect-1", "dispatch", "archive"}
