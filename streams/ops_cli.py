"""``fleetpulse ops record``: an operator's step on a host, from the command line onto ``fleet.actions``.

The same record ``POST /ops/events`` makes; every detect worker folds it, so the planner counts
the host as out until it is returned.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING, Annotated

import typer
from kafka import KafkaProducer
from kafka.errors import KafkaError
from rich.console import Console

from ground.cli_context import settings_of
from ground.kafka.reading import read_to_end
from schemas import Codec, DecodeError, HostInventoried
from schemas.bounds import terminal_safe
from streams.core.errors import CampaignError, StreamsError
from streams.operator_events import StepError, operator_record, parse_step
from streams.trains.commands import change_applied_record

if TYPE_CHECKING:
    from ground.settings import Settings

app = typer.Typer()


def cluster_of(settings: Settings, host_id: str) -> str | None:
    """The host's cluster per the inventory topic (None: the fleet does not know the host)."""
    codec, found = Codec(), None
    for raw in read_to_end(settings.bootstrap_servers, settings.kafka, settings.topics.inventory.name):
        try:
            record = codec.decode(raw.value).record  # type: ignore[arg-type]
        except DecodeError:
            continue
        if record["event_type"] == HostInventoried.EVENT_TYPE and record["host_id"] == host_id:
            found = record["cluster"]
    return found


def send_step(settings: Settings, record: dict[str, object]) -> None:
    try:
        producer = KafkaProducer(
            **settings.kafka.kafka_python(settings.bootstrap_servers), acks="all", enable_idempotence=True
        )
        try:
            producer.send(
                settings.topics.actions.name,
                key=str(record["host_id"]).encode(),
                value=Codec().encode(record),
            ).get(timeout=30)
        finally:
            producer.close()
    except KafkaError as exc:
        raise StreamsError(f"cannot record the step on {settings.topics.actions.name}: {exc}") from exc


@app.command("record")
def record(
    ctx: typer.Context,
    host: Annotated[str, typer.Argument(help="Host id.")],
    kind: Annotated[
        str,
        typer.Argument(
            help="out_of_service, returned_to_service, repair_started, repair_finished, rma_shipped, rma_replaced, "
            "or change_applied (with --version: a campaign's change is on the host)."
        ),
    ],
    actor: Annotated[str, typer.Option(help="Who takes the step (a person, a system).")],
    reason: Annotated[str, typer.Option(help="Why, in words.")] = "",
    ticket: Annotated[str | None, typer.Option(help="Ticket id in your ticket system.")] = None,
    cause: Annotated[
        str | None, typer.Option(help="Cause in fleetpulse's taxonomy (e.g. psu, hbm3).")
    ] = None,
    at: Annotated[
        str | None, typer.Option(help="When it happened, ISO 8601 (UTC unless zoned); default: now.")
    ] = None,
    version: Annotated[str | None, typer.Option(help="change_applied: the version now on the host.")] = None,
    component: Annotated[
        str, typer.Option(help="change_applied: driver, cuda_driver, vbios, ...")
    ] = "driver",
) -> None:
    """Record an operator's step on a host (out of service, returned, repair, RMA, change applied) on fleet.actions."""
    settings = settings_of(ctx)
    now_ms = int(time.time() * 1000)
    if kind == "change_applied":
        try:
            rec = change_applied_record(
                host,
                component,
                version or "",
                actor=actor,
                cluster=cluster_of(settings, host) or "-",
                now_ms=now_ms,
            )
        except CampaignError as exc:
            raise typer.BadParameter(terminal_safe(str(exc))) from None
        send_step(settings, rec)
        Console().print(
            terminal_safe(f"recorded change_applied {component}={version} on {host}"),
            markup=False,
            highlight=False,
        )
        return
    try:
        ts = None
        if at is not None:
            when = dt.datetime.fromisoformat(at)
            ts = round((when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp() * 1000)
    except (ValueError, OverflowError):
        raise typer.BadParameter(f"--at {terminal_safe(repr(at))} is not an ISO 8601 date or time") from None
    fields = {"host_id": host, "kind": kind, "actor": actor, "reason": reason, "ticket_id": ticket}
    try:
        step = parse_step({**fields, "cause": cause, "ts": ts}, now_ms)
    except StepError as exc:
        raise typer.BadParameter(terminal_safe(str(exc))) from None
    cluster = cluster_of(settings, host)
    rec = operator_record(step, cluster=cluster or "-", now_ms=now_ms)
    send_step(settings, rec)
    console = Console()
    console.print(f"recorded {kind} on {host} ({rec['event_id']})", markup=False, highlight=False)
    if cluster is None:
        console.print(f"note: {host} is not in the inventory", markup=False, highlight=False)
