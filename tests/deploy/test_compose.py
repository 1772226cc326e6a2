"""docker-compose.yml cannot be run here (no Docker engine), so its structure is checked instead."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml

from fleetpulse.cli import app
from ground.settings import Settings
from producers.cli import parse_duration

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
FLEETPULSE_SERVICES = {name: svc for name, svc in SERVICES.items() if svc.get("image") == "fleetpulse:dev"}


def broker_properties() -> dict[str, str]:
    """The server.properties deploy/kafka/start-broker.sh writes (its heredoc, before interpolation)."""
    script = (ROOT / "deploy" / "kafka" / "start-broker.sh").read_text()
    body = script.split('server.properties" <<PROPS\n', 1)[1].split("\nPROPS\n", 1)[0]
    return dict(line.split("=", 1) for line in body.splitlines() if line.strip() and not line.startswith("#"))


def resolve(argv: list[str]) -> Any:
    """The command ``fleetpulse argv...`` would run; fails if a sub-command is unknown.

    Duck-typed on ``.commands``: recent Typer releases ship their own click classes.
    """
    command: Any = typer.main.get_command(app)
    for name in argv:
        commands = getattr(command, "commands", None)
        assert commands is not None, f"`fleetpulse {' '.join(argv)}`: {command.name} takes no sub-command"
        assert name in commands, f"`fleetpulse {' '.join(argv)}`: no command {name!r}"
        command = commands[name]
    assert not hasattr(command, "commands"), f"`fleetpulse {' '.join(argv)}` is a group, not a command"
    return command


def test_broker_is_the_official_kafka_image_in_kraft_mode() -> None:
    kafka = SERVICES["kafka"]
    image, _, tag = kafka["image"].partition(":")
    assert image == "apache/kafka" and int(tag.split(".")[0]) >= 4
    props = broker_properties()
    assert props["process.roles"] == "broker,controller"
    assert props["offsets.topic.replication.factor"] == "1"
    assert "healthcheck" in kafka


def test_the_full_stack_is_there() -> None:
    assert {"kafka", "simulator", "detector", "dispatcher", "archiver", "receiver"} <= set(SERVICES)


@pytest.mark.parametrize("name", sorted(FLEETPULSE_SERVICES))
def test_every_service_runs_an_existing_fleetpulse_command_with_known_options(name: str) -> None:
    argv = FLEETPULSE_SERVICES[name]["command"]
    assert argv[0] == "fleetpulse"
    words = [a for a in argv[1:]]
    positional = []
    while words and not words[0].startswith("-"):
        positional.append(words.pop(0))
    command = resolve(positional)
    known = {opt for p in command.params for opt in getattr(p, "opts", [])}
    for word in words:
        if word.startswith("-"):
            assert word.split("=")[0] in known, f"{name}: `{' '.join(argv)}` uses unknown option {word}"


# What a user's .env (deploy/compose-env.sh) provides: every required secret, none of them weak.
DOT_ENV = {
    name: f"{name.lower()}-0123456789abcdef0123456789abcdef"
    for name in (
        "FLEETPULSE_WEBHOOKS__SECRET",
        "FLEETPULSE_DETECT__OPS_TOKEN",
        "KAFKA_ADMIN_PASSWORD",
        "KAFKA_DETECTOR_PASSWORD",
        "KAFKA_DISPATCHER_PASSWORD",
        "KAFKA_SIMULATOR_PASSWORD",
        "KAFKA_ARCHIVER_PASSWORD",
        "KAFKA_AGENT_PASSWORD",
        "KAFKA_OPERATOR_PASSWORD",
        "GRAFANA_ADMIN_PASSWORD",
    )
}


class MissingVariableError(Exception):
    """What ``docker compose`` stops with when a ``${VAR:?message}`` is unset."""


def interpolate(raw: object, env: dict[str, str]) -> str:
    """Compose's interpolation: ``${VAR}``, ``${VAR:-default}`` and ``${VAR:?message}``."""

    def one(m: re.Match[str]) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3) or ""
        value = env.get(name, "")
        if op == ":?" and not value:
            raise MissingVariableError(f"required variable {name} is missing a value: {arg}")
        return value or (arg if op == ":-" else "")

    return re.sub(r"\$\{(\w+)(?:(:-|:\?)([^}]*))?\}", one, str(raw))


def compose_value(raw: object) -> str:
    """A value as the container sees it when the user's .env holds every required secret."""
    return interpolate(raw, DOT_ENV)


def setting_at(settings: Settings, key: str) -> Any:
    """The setting a ``FLEETPULSE_SECTION__KEY`` variable sets; fails if it names none.

    Loading alone is not enough: the settings refuse unknown keys inside a section, but an unknown
    section (``FLEETPULSE_DETECTOR__X``) is an environment variable they never look at.
    """
    node: Any = settings
    for part in key.removeprefix("FLEETPULSE_").lower().split("__"):
        assert part in type(node).model_fields, f"{key}: no setting {part!r} in {type(node).__name__}"
        node = getattr(node, part)
    return node


@pytest.fixture
def service_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[str], Settings]:
    """Loads the settings a service's container would: its environment only, no config file."""

    def load(name: str) -> Settings:
        for key in list(os.environ):
            if key.startswith("FLEETPULSE_") or key == "KAFKA_BOOTSTRAP_SERVERS":
                monkeypatch.delenv(key)
        monkeypatch.chdir(tmp_path)  # no ./fleetpulse.toml
        for key, raw in FLEETPULSE_SERVICES[name].get("environment", {}).items():
            monkeypatch.setenv(key, compose_value(raw))
        return Settings.load()

    return load


def option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


@pytest.mark.parametrize("name", sorted(FLEETPULSE_SERVICES))
def test_services_use_the_cli_settings_names(name: str, service_settings: Callable[[str], Settings]) -> None:
    env = FLEETPULSE_SERVICES[name].get("environment", {})
    for key in env:
        assert key == "KAFKA_BOOTSTRAP_SERVERS" or key.startswith("FLEETPULSE_"), key
    settings = service_settings(name)  # a bad key or value raises ConfigError
    for key in env:
        if key.startswith("FLEETPULSE_"):
            setting_at(settings, key)
    if name != "receiver":  # the one part without Kafka
        assert settings.bootstrap_servers == "kafka:9092"


def test_the_published_detector_api_listens_beyond_the_container(
    service_settings: Callable[[str], Settings],
) -> None:
    detector = SERVICES["detector"]
    assert option(detector["command"], "--web-port") == "6066" and "127.0.0.1:6066:6066" in detector["ports"]
    assert service_settings("detector").detect.web_host == "0.0.0.0"


@pytest.mark.parametrize(("name", "section"), [("detector", "detect"), ("dispatcher", "webhooks")])
def test_worker_state_lives_on_the_data_volume(
    name: str, section: str, service_settings: Callable[[str], Settings]
) -> None:
    mount = next(v.split(":")[1] for v in SERVICES[name]["volumes"] if v.startswith("fleetpulse-data:"))
    data_dir = getattr(service_settings(name), section).data_dir
    assert data_dir is not None and data_dir.is_relative_to(mount), data_dir


def test_the_live_simulator_runs_long_and_keeps_event_time_at_the_wall_clock() -> None:
    """Faster than real time, event time would pass the detectors' future limit within minutes."""
    argv = SERVICES["simulator"]["command"]
    assert option(argv, "--mode") == "live"
    assert float(option(argv, "--speed") or 1) == 1
    assert parse_duration(option(argv, "--duration") or "60s") >= 86_400
