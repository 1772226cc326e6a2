"""docker-compose.yml cannot be run here (no Docker engine), so its structure is checked instead."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml

from fleetpulse.cli import app

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
FLEETPULSE_SERVICES = {name: svc for name, svc in SERVICES.items() if name != "kafka"}


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
    env = kafka["environment"]
    assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == 1
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


@pytest.mark.parametrize("name", sorted(FLEETPULSE_SERVICES))
def test_services_use_the_cli_settings_names(name: str) -> None:
    env = FLEETPULSE_SERVICES[name].get("environment", {})
    for key in env:
        assert key == "KAFKA_BOOTSTRAP_SERVERS" or key.startswith("FLEETPULSE_"), key
