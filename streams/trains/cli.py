"""``fleetpulse train``: start, watch, pause, resume and abort change campaigns (records on ``fleet.actions``).

Every detect worker folds them; the planner moves the campaign's hosts domain by domain.
"""

from __future__ import annotations

import time
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console

from ground.cli_context import settings_of
from ground.tables import FormatOpt, OutputFormat, Sheet, show
from streams.core.errors import CampaignError
from streams.core.policy import parse_duration_ms
from streams.trains.commands import (
    CampaignSpec,
    Step,
    describe,
    find,
    rollback_records,
    start_record,
    step_record,
)
from streams.trains.log_io import read_fleet, send_records
from streams.trains.timeline import render, steps, timeline

app = typer.Typer(no_args_is_help=True)
ACTOR = typer.Option(help="Who takes the step (a person, a system).")


def _say(text: str) -> None:
    Console().print(text, markup=False, highlight=False)


@app.command("start")
def start(
    ctx: typer.Context,
    change: Annotated[str, typer.Option(help="COMPONENT=VERSION, e.g. driver=560.35.")],
    actor: Annotated[str, ACTOR],
    scope: Annotated[
        list[str] | None, typer.Option(help="A cluster or maintenance domain (repeat); default: the fleet.")
    ] = None,
    canary: Annotated[int, typer.Option(min=0, help="Hosts changed and verified before the rest.")] = 0,
    max_parallel_domains: Annotated[int, typer.Option(min=1, help="Domains changed at once.")] = 1,
    reason: Annotated[str, typer.Option(help="Why, in words.")] = "",
) -> None:
    """Start a campaign rolling CHANGE through the fleet (or --scope) domain by domain."""
    try:
        spec = CampaignSpec(
            change=change,
            scope=scope or [],
            canary=canary,
            max_parallel_domains=max_parallel_domains,
            actor=actor,
            reason=reason,
        )
    except ValidationError as exc:
        raise typer.BadParameter(exc.errors()[0]["msg"].removeprefix("Value error, ")) from None
    record = start_record(spec, int(time.time() * 1000))
    send_records(settings_of(ctx), [record])
    _say(f"started campaign {record['payload']['campaign_id']}: {change}")


@app.command("status")
def status(
    ctx: typer.Context,
    campaign: Annotated[str | None, typer.Argument(help="Campaign id; default: every campaign.")] = None,
    fmt: FormatOpt = OutputFormat.json,
) -> None:
    """Print campaigns (JSON by default): status, hosts per phase, the safety gate, halts with their evidence."""
    trains = read_fleet(settings_of(ctx)).trains
    try:
        shown = [find(trains, campaign)] if campaign else list(trains.campaigns.values())
    except CampaignError as exc:
        raise typer.BadParameter(str(exc)) from None
    records = [describe(c) for c in shown]
    if fmt is OutputFormat.table:  # a person reads the steps' history with --format json
        records = [{k: v for k, v in r.items() if k != "history"} for r in records]
    show(fmt, Sheet.of_records("campaigns", records))


@app.command("timeline")
def show_timeline(
    ctx: typer.Context,
    campaign: Annotated[str, typer.Argument(help="Campaign id (its rollbacks are shown with it).")],
    every: Annotated[str, typer.Option(help="One point this often, e.g. 6h, 1d.")] = "1d",
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """A campaign over time: hosts per version, hosts out for the change per domain, its halts with their evidence."""
    try:
        every_ms = parse_duration_ms(every)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--every") from None
    fleet = read_fleet(settings_of(ctx))
    try:
        camp = find(fleet.trains, campaign)
    except CampaignError as exc:
        raise typer.BadParameter(str(exc)) from None
    points = timeline(fleet.trains, camp, every_ms, max(fleet.clock, camp.started_ts))
    if fmt is not OutputFormat.table:
        rows = [{"ts": p.ts, "versions": p.versions, "out": p.out} for p in points]
        show(
            fmt,
            Sheet.of_records("campaign", [describe(camp)]),
            Sheet.of_records("points", rows),
            Sheet.of_records("steps", steps(fleet.trains, camp)),
        )
    else:
        _say(render(fleet.trains, camp, points))


def _step(ctx: typer.Context, campaign: str, step: Step, actor: str, reason: str) -> None:
    settings = settings_of(ctx)
    trains = read_fleet(settings).trains
    try:
        record = step_record(
            trains, campaign, step, actor=actor, now_ms=int(time.time() * 1000), reason=reason
        )
    except CampaignError as exc:
        raise typer.BadParameter(str(exc)) from None
    send_records(settings, [record])
    _say(f"campaign {campaign} {step}")


@app.command("pause")
def pause(ctx: typer.Context, campaign: str, actor: Annotated[str, ACTOR], reason: str = "") -> None:
    """Stop starting hosts (those changing finish their change)."""
    _step(ctx, campaign, "paused", actor, reason)


@app.command("resume")
def resume(ctx: typer.Context, campaign: str, actor: Annotated[str, ACTOR], reason: str = "") -> None:
    """Go on with a paused campaign, or one the safety test halted (a person's decision)."""
    _step(ctx, campaign, "resumed", actor, reason)


@app.command("abort")
def abort(
    ctx: typer.Context,
    campaign: str,
    actor: Annotated[str, ACTOR],
    rollback: Annotated[
        bool, typer.Option(help="Also take the hosts it changed back to their previous version.")
    ] = False,
    reason: str = "",
) -> None:
    """End a campaign; with --rollback, start one back to the version its hosts ran before."""
    if not rollback:
        _step(ctx, campaign, "aborted", actor, reason)
        return
    settings = settings_of(ctx)
    try:
        records = rollback_records(
            read_fleet(settings).trains, campaign, actor=actor, now_ms=int(time.time() * 1000)
        )
    except CampaignError as exc:
        raise typer.BadParameter(str(exc)) from None
    send_records(settings, records)
    back = [r["payload"] for r in records if r["payload"]["kind"] == "started"]
    _say(
        f"campaign {campaign} aborted"
        + (
            f"; rollback {back[0]['campaign_id']}: {back[0]['component']}={back[0]['version']} on {len(back[0]['hosts'])} hosts"
            if back
            else ""
        )
    )
