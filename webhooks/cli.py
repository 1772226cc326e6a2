"""Command-line entry points of ``webhooks`` (merged into ``fleetpulse``): dispatch, receiver, outbox, score."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ground.cli_context import settings_of
from ground.settings import Settings
from ground.tables import FormatOpt, OutputFormat, Sheet, messages, show

app = typer.Typer()

DEFAULT_SECRET_ENV = "FLEETPULSE_WEBHOOKS__SECRET"


def _run_until_signal(main: object) -> None:
    """Run a coroutine function ``main(stop)`` until SIGINT/SIGTERM sets ``stop``."""
    import asyncio
    import signal

    async def runner() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await main(stop)  # type: ignore[operator]

    asyncio.run(runner())


@app.command()
def dispatch(
    ctx: typer.Context,
    url: Annotated[
        list[str] | None, typer.Option("--url", help="Webhook URL (repeatable); overrides webhooks.urls.")
    ] = None,
    alertmanager: Annotated[
        list[str] | None,
        typer.Option(
            "--alertmanager",
            help="Alertmanager base URL to push alerts into (repeatable); overrides webhooks.alertmanager_urls.",
        ),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(help="Outbox directory (default webhooks.data_dir, else <paths.home>/webhooks)."),
    ] = None,
    topic: Annotated[str | None, typer.Option(help="Alerts topic (default topics.alerts.name).")] = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(help="Serve Prometheus metrics on this port (default webhooks.metrics_port; 0: off)."),
    ] = None,
    metrics_host: Annotated[
        str,
        typer.Option(help="Address the metrics port binds (as the other listeners: loopback by default)."),
    ] = "127.0.0.1",
) -> None:
    """Deliver alerts from fleet.alerts to the webhook URLs (signed, retried, via a durable outbox).

    The secret comes from FLEETPULSE_WEBHOOKS__SECRET; Ctrl-C stops cleanly and anything
    undelivered is retried on the next start.
    """
    import asyncio

    from webhooks.dispatcher import Dispatcher, data_dir_of

    settings = settings_of(ctx)
    update: dict[str, object] = {}
    if url:
        update["urls"] = list(url)
    if alertmanager:
        update["alertmanager_urls"] = list(alertmanager)
    if data_dir is not None:
        update["data_dir"] = data_dir
    if update:
        settings = settings.model_copy(update={"webhooks": settings.webhooks.model_copy(update=update)})
    dispatcher = Dispatcher(settings, topic=topic)
    if port := settings.webhooks.metrics_port if metrics_port is None else metrics_port:
        from prometheus_client import start_http_server

        start_http_server(port, addr=metrics_host, registry=dispatcher.metrics.registry)
    console = Console(stderr=True)
    m = dispatcher.metrics

    def summary() -> str:
        return (
            f"ingested {m.value('fleetpulse_webhook_alerts_ingested_total'):.0f}"
            f"  delivered {m.total(m.delivered):.0f}  retries {m.total(m.retries):.0f}"
            f"  dead {m.total(m.failures):.0f}  pending {m.value('fleetpulse_webhook_outbox_depth'):.0f}"
        )

    async def main(stop: asyncio.Event) -> None:
        console.print(
            f"dispatching {dispatcher.topic} → {len(dispatcher.ws.urls)} URL(s); outbox {data_dir_of(settings)}"
        )
        with console.status(summary()) as status:

            async def refresh() -> None:
                while not stop.is_set():
                    status.update(summary())
                    await asyncio.sleep(1.0)

            ticker = asyncio.create_task(refresh())
            try:
                await dispatcher.run(stop)
            finally:
                ticker.cancel()
        console.print(summary())

    try:
        _run_until_signal(main)
    finally:
        dispatcher.close()


@app.command()
def receiver(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option(help="JSONL file accepted alerts are appended to.")],
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 9099,
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    secret_env: Annotated[
        str, typer.Option(help="Environment variable holding the HMAC secret.")
    ] = DEFAULT_SECRET_ENV,
    tolerance_s: Annotated[
        float | None, typer.Option(help="Max signature age (default webhooks.signature_tolerance_s).")
    ] = None,
) -> None:
    """Run a webhook receiver: verify signatures, drop repeats by Idempotency-Key, append to --out; GET /stats."""
    import asyncio

    from ground.secret_strength import secret_bytes
    from webhooks.errors import WebhookConfigError
    from webhooks.receiver import WebhookReceiver, serve_forever

    settings = settings_of(ctx)
    secret = _secret_from(
        secret_env, settings.webhooks.secret.get_secret_value() if settings.webhooks.secret else None
    )
    if not secret:
        raise WebhookConfigError(f"no receiver secret: set the environment variable {secret_env}")
    app_ = WebhookReceiver(
        secret_bytes(secret, secret_env),
        out,
        scheme=settings.webhooks.signature_scheme,
        tolerance_s=tolerance_s or settings.webhooks.signature_tolerance_s,
        secret_source=secret_env,
    )
    console = Console(stderr=True)
    console.print(f"receiver on http://{host}:{port}/  (stats: /stats)  → {out}")

    async def main(stop: asyncio.Event) -> None:
        await serve_forever(app_, host, port, stop)

    _run_until_signal(main)
    console.print(f"receiver stopped: {app_.stats}")


def _secret_from(env_name: str, configured: str | None) -> str | None:
    # The default name is the settings' own webhooks.secret; another name is read by ground.settings too.
    if env_name == DEFAULT_SECRET_ENV:
        return configured

    secret = Settings.secret_from_env(env_name)
    return secret.get_secret_value() if secret else None


@app.command()
def outbox(
    ctx: typer.Context,
    data_dir: Annotated[
        Path | None,
        typer.Option(help="Outbox directory (default webhooks.data_dir, else <paths.home>/webhooks)."),
    ] = None,
    requeue_dead: Annotated[bool, typer.Option(help="Give dead deliveries a fresh set of attempts.")] = False,
    fmt: FormatOpt = OutputFormat.table,
) -> None:
    """Show the webhook outbox (pending, delivered, dead) and optionally requeue dead deliveries."""
    import time

    from webhooks.dispatcher import data_dir_of
    from webhooks.errors import OutboxError
    from webhooks.metrics import redact_url
    from webhooks.outbox import OUTBOX_FILE, Outbox

    directory = data_dir or data_dir_of(settings_of(ctx))
    if not (
        directory / OUTBOX_FILE
    ).is_file():  # opening would create an empty one: a wrong path looking fine
        raise OutboxError(
            directory / OUTBOX_FILE,
            "no outbox there (pass --data-dir or set FLEETPULSE_WEBHOOKS__DATA_DIR; `fleetpulse dispatch` makes it)",
        )
    console = messages(fmt)
    with Outbox.in_dir(directory) as box:
        if requeue_dead:
            console.print(f"requeued {box.requeue_dead(time.time())} dead deliveries")
        stats = box.stats()
        table = Table(title=f"outbox {box.path}")
        for col in ("alerts", "pending", "delivered", "dead"):
            table.add_column(col, justify="right")
        table.add_row(*(str(v) for v in stats))
        dead = [r for r in box.deliveries() if r.state == "dead"]
        if fmt is not OutputFormat.table:
            rows = [(r.alert_id, redact_url(r.url), r.attempts, r.last_error) for r in dead]
            show(fmt, table, Sheet.of("dead deliveries", ["alert", "url", "attempts", "last error"], rows))
            return
        console.print(table)
        for row in dead:
            console.print(
                f"dead: {row.alert_id} → {redact_url(row.url)} after {row.attempts} attempts: {row.last_error}"
            )
