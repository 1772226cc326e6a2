"""The ``fleetpulse`` sub-commands by name, loaded from their part's Typer app only when one runs.

Listing them (``fleetpulse --help``, completion) uses the names and one-line helps below, so it
imports no part; running one imports its part's ``cli`` module. tests/fleetpulse/test_commands.py
checks this table against the parts' own commands and help lines.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import typer.main
from typer.core import TyperCommand, TyperGroup


class Part(NamedTuple):
    module: str  # its Typer ``app``: a group of its own (``group``) or commands merged at the top
    help: str
    group: bool = False


PARTS: dict[str, Part] = {
    "broker": Part("fleetpulse.broker.cli", "Run the local Apache Kafka broker.", group=True),
    "topics": Part("fleetpulse.topics_cli", "Create and list fleetpulse topics.", group=True),
    "faults": Part("fleetpulse.faults.cli", "Fault-injection scenarios (reliability).", group=True),
    "train": Part(
        "streams.trains.cli",
        "Change campaigns: roll a driver, firmware or kernel version through the fleet domain by domain.",
        group=True,
    ),
    "ops": Part(
        "streams.ops_cli", "Record operators' steps on hosts (out of service, repair, RMA).", group=True
    ),
    "agent": Part(
        "producers.cli",
        "Collect this host's GPU, NIC, PCIe and kernel-log telemetry and send the simulator's events to Kafka.",
    ),
    "simulate": Part(
        "producers.cli",
        "Simulate a GPU fleet's telemetry and failures into Kafka, the Delta lake or nowhere.",
    ),
    "import": Part(
        "producers.importer.cli",
        "Import a fleet's incident history into Kafka: detectors, lake and analytics see it like live data.",
    ),
    "detect": Part(
        "streams.cli",
        "Run a detect worker: validation, repeat-offender and slow-host detectors, planner, API.",
    ),
    "detect-policy": Part(
        "streams.cli",
        "Validate a detection policy file and print its rules (by default the one `detect` would run).",
    ),
    "detect-resume": Part(
        "streams.cli",
        "Resume a maintenance train the planner halted (records train_resumed on fleet.actions).",
    ),
    "dispatch": Part(
        "webhooks.cli",
        "Deliver alerts from fleet.alerts to the webhook URLs (signed, retried, via a durable outbox).",
    ),
    "receiver": Part(
        "webhooks.cli",
        "Run a webhook receiver: verify signatures, drop repeats by Idempotency-Key, append to --out; GET /stats.",
    ),
    "outbox": Part(
        "webhooks.cli",
        "Show the webhook outbox (pending, delivered, dead) and optionally requeue dead deliveries.",
    ),
    "archive": Part(
        "analytics.archive_cli",
        "Archive the fleet topics into the Delta lake, exactly once; safe to kill and restart at any time.",
    ),
    "lake": Part(
        "analytics.cli",
        "Inspect and maintain the Delta lake: status, compaction, vacuum, quality re-checks, quarantine.",
    ),
    "analyze": Part(
        "analytics.jobs.cli", "Run one analytics job over the lake and print its headline numbers."
    ),
    "report": Part(
        "analytics.jobs.cli",
        "Run every job and write report.html (self-contained) and summary.md with plots.",
    ),
    "demo": Part(
        "fleetpulse.demo",
        "Run the whole pipeline end to end on a local Kafka broker and print what it found.",
    ),
    "score": Part(
        "fleetpulse.evaluation.cli",
        "Score detector findings against the simulator's ground truth: TP/FP/FN, precision, recall, time to detect.",
    ),
    "loop": Part(
        "fleetpulse.twin.live_cli",
        "Simulate the fleet into Kafka closed loop: it answers the planner's drains, repairs, returns, retirements.",
    ),
    "twin": Part(
        "fleetpulse.twin.cli",
        "Closed loop: the simulated fleet answers the real detectors' and planner's actions; ETTR, goodput, "
        "GPU-hours lost by cause, pages and precision/recall per policy variant, with 95 % intervals over seeds.",
    ),
    "backtest": Part(
        "fleetpulse.backtest.cli",
        "What a policy would have done over the lake's history: findings, actions, capacity, against the live run.",
    ),
}


def load(name: str) -> Any:
    """The real command ``name``: from its part's Typer app, as typer builds it."""
    part = PARTS[name]
    app = importlib.import_module(part.module).app
    if part.group:  # a group even with one sub-command (``ops record``): get_command would collapse it
        group = typer.main.get_group(app)
        group.name, group.help = name, part.help
        return group
    command = typer.main.get_command(app)
    found = command.commands.get(name) if isinstance(command, TyperGroup) else command
    if found is None:
        raise LookupError(f"{part.module} has no command {name!r}")
    return found


class PartCommands(Mapping[str, Any]):
    """The commands by name, each loaded on first access (the group's ``commands``, lazily)."""

    def __init__(self) -> None:
        self.loaded: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in PARTS:
            raise KeyError(name)
        if name not in self.loaded:
            self.loaded[name] = load(name)
        return self.loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(PARTS)

    def __len__(self) -> int:
        return len(PARTS)


class LazyParts(TyperGroup):
    """The root group: lists ``PARTS`` without importing them, runs a command from its part."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = PartCommands()  # type: ignore[assignment]

    def list_commands(self, ctx: Any) -> list[str]:
        return list(PARTS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The loaded command, else a stand-in that only names it and says what it does (for listings)."""
        commands: PartCommands = self.commands  # type: ignore[assignment]
        if cmd_name in commands.loaded:
            return commands.loaded[cmd_name]
        part = PARTS.get(cmd_name)
        return None if part is None else TyperCommand(cmd_name, help=part.help, short_help=part.help)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """The command to run: the real one, loaded from its part (``get_command`` may give a stand-in)."""
        name, command, rest = super().resolve_command(ctx, args)
        if name in PARTS:
            command = self.commands[name]
        return name, command, rest
