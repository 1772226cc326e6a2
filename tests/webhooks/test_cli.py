"""``fleetpulse dispatch`` serves its metrics on loopback unless told otherwise, like every other listener."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import prometheus_client
import pytest
from typer.testing import CliRunner

from fleetpulse.cli import app
from tests.webhooks.conftest import SECRET
from webhooks.errors import OutboxError


class Bound(Exception):
    """Raised by the stand-in server once it has seen where it was asked to bind."""


@pytest.fixture
def binds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Where the command asked its metrics server to bind (the stand-in raises ``Bound`` once asked)."""
    seen: dict[str, Any] = {}

    def start_http_server(port: int, addr: str = "0.0.0.0", **kw: Any) -> None:  # the library's own default
        seen.update(port=port, addr=addr)
        raise Bound

    monkeypatch.setattr(prometheus_client, "start_http_server", start_http_server)
    monkeypatch.chdir(tmp_path)
    return seen


def dispatch_env(tmp_path: Path) -> dict[str, str]:
    return {
        "FLEETPULSE_WEBHOOKS__SECRET": SECRET,
        "FLEETPULSE_WEBHOOKS__URLS": '["http://a.example/hook"]',
        "FLEETPULSE_WEBHOOKS__DATA_DIR": str(tmp_path / "outbox"),
    }


@pytest.mark.parametrize(("argv", "addr"), [([], "127.0.0.1"), (["--metrics-host", "0.0.0.0"], "0.0.0.0")])
def test_the_metrics_port_binds_loopback_by_default(
    tmp_path: Path, binds: dict[str, Any], argv: list[str], addr: str
) -> None:
    env = dispatch_env(tmp_path)
    result = CliRunner().invoke(app, ["dispatch", "--metrics-port", "9464", *argv], env=env)
    assert isinstance(result.exception, Bound), result.output
    assert binds == {"port": 9464, "addr": addr}


def test_a_weak_receiver_secret_is_refused_naming_its_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env = {"RECEIVER_KEY": "change-me"}
    argv = ["receiver", "--out", str(tmp_path / "a.jsonl"), "--port", "0", "--secret-env", "RECEIVER_KEY"]
    result = CliRunner().invoke(app, argv, env=env)
    assert "RECEIVER_KEY cannot be used: it is a placeholder value" in str(result.exception)


@pytest.mark.parametrize(("command", "variable"), [("dispatch", "WEBHOOKS"), ("archive", "LAKE")])
def test_the_metrics_port_comes_from_the_settings_without_the_option(
    tmp_path: Path, binds: dict[str, Any], command: str, variable: str
) -> None:
    env = dispatch_env(tmp_path) | {
        "FLEETPULSE_LAKE__PATH": str(tmp_path / "lake"),
        f"FLEETPULSE_{variable}__METRICS_PORT": "9465",
    }
    result = CliRunner().invoke(app, [command], env=env)
    assert isinstance(result.exception, Bound), result.output
    assert binds == {"port": 9465, "addr": "127.0.0.1"}


def test_outbox_on_a_folder_without_one_is_a_one_line_error_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["outbox", "--data-dir", str(tmp_path / "nope")])
    error = result.exception  # ``fleetpulse.cli.main`` prints it as one line and exits 2
    assert isinstance(error, OutboxError), result.output
    assert "no outbox there" in str(error) and "\n" not in str(error)
    assert not (tmp_path / "nope").exists()
