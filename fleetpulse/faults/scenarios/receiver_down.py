"""receiver-down: the webhook receiver is down for a minute while alerts flow; then it comes back.

AlertRaised records are produced straight to the alerts topic, spread before, during and
after the outage; a real ``fleetpulse dispatch`` process delivers them to a real receiver
(restarted on the same port and JSONL file). Counted: alerts never stored, alerts POSTed
again (dropped by the receiver's Idempotency-Key check), alerts stored twice.

With ``answer_s`` the receiver stays up and answers every request that late instead
(receiver-slow): it stores the alert, but the dispatcher's request times out first.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

from pydantic import SecretStr

from fleetpulse.faults.context import Clock, FaultContext
from fleetpulse.faults.counting import count_alerts
from fleetpulse.faults.errors import ScenarioError
from fleetpulse.faults.kafka_io import produce_raw, records, wait_until
from fleetpulse.faults.results import ScenarioResult
from fleetpulse.faults.sandbox import sandbox
from ground.kafka import admin
from ground.launch import child_env, fleetpulse_argv, launch
from schemas import AlertRaised, Codec
from webhooks import start_receiver
from webhooks.outbox import Outbox

NAME = "receiver-down"


def alert(i: int, run: str, ts: int) -> dict[str, Any]:
    return AlertRaised(
        event_id=f"{run}-alert-{i}",
        host_id=f"fault-h{i % 48:05d}",
        cluster="fault",
        ts=ts,
        payload={
            "alert_id": f"{run}-alr-{i:05d}",
            "alertname": "NewRMA" if i % 3 else "SlowHost",
            "severity": "critical",
            "labels": {"scenario": NAME},
            "annotations": {"summary": f"fault-suite alert {i}"},
        },
    ).to_record()


def stored_keys(out: Path) -> list[str]:
    keys = []
    if out.exists():
        for line in out.read_text().splitlines():
            try:
                keys.append(json.loads(line)["idempotency_key"])
            except (ValueError, KeyError):
                continue
    return keys


def outbox_counts(folder: Path) -> dict[str, int]:
    """The dispatcher's own view: deliveries still pending or given up (dead) in its outbox."""
    with Outbox.in_dir(folder / "outbox") as outbox:
        return outbox.stats()._asdict()


def _dispatcher(
    settings: Any, url: str, secret: str, folder: Path
) -> tuple[subprocess.Popen[bytes], IO[bytes]]:
    dispatch = settings.with_section(
        "webhooks",
        urls=[url],
        secret=SecretStr(secret),
        group_id=f"{settings.topics.prefix}dispatch",
        data_dir=folder / "outbox",
        backoff_base_s=0.5,
        backoff_max_s=5.0,
        timeout_s=3.0,
        max_attempts=10_000,
    )
    env = child_env(dispatch)
    proc, log = launch(fleetpulse_argv("dispatch"), env, folder / "dispatch.log")
    assert log is not None
    return proc, log


def run(
    ctx: FaultContext,
    alerts: int = 300,
    outage_s: float = 60.0,
    before_s: float = 10.0,
    after_s: float = 10.0,
    *,
    answer_s: float = 0.0,
    name: str = NAME,
) -> ScenarioResult:
    clock = Clock()
    folder = ctx.folder(name)
    settings = sandbox(ctx.base, ctx.bootstrap, ctx.prefix(name))
    admin.create_topics(settings, [settings.topics.alerts])
    secret = secrets.token_urlsafe(32)  # strong by the secret rule with a wide margin
    out = folder / "received.jsonl"
    receiver = start_receiver(0, secret.encode(), out)
    port = receiver.port
    proc, log = _dispatcher(settings, f"http://127.0.0.1:{port}/alerts", secret, folder)
    codec = Codec()
    span = before_s + outage_s + after_s
    base_ts = int(time.time() * 1000)
    batch = [alert(i, ctx.run_id, base_ts + i) for i in range(alerts)]
    produced_at: list[float] = []

    def produce() -> None:
        started = time.monotonic()
        for i, record in enumerate(batch):
            due = started + span * i / alerts
            time.sleep(max(0.0, due - time.monotonic()))
            produce_raw(
                settings,
                [(settings.topics.alerts.name, record["payload"]["alert_id"].encode(), codec.encode(record))],
                linger_ms=0,
            )
            produced_at.append(time.monotonic() - started)

    wire_duplicates = 0
    outage: dict[str, float] = {}
    try:
        producer = threading.Thread(target=produce, name="fault-alerts", daemon=True)
        producer.start()
        fault = f"answers {answer_s:g} s late" if answer_s else "goes down"
        ctx.say(
            f"{name}: {alerts} alerts over {span:g} s; receiver {fault} after {before_s:g} s for {outage_s:g} s"
        )
        time.sleep(before_s)
        if answer_s:
            receiver.receiver.ack_delay_s = answer_s
        else:
            receiver.stop()
            wire_duplicates += receiver.stats.duplicates
        down = time.monotonic()
        outage["down_at_s"] = clock()
        time.sleep(outage_s)
        if answer_s:
            receiver.receiver.ack_delay_s = 0.0
        else:
            receiver = start_receiver(port, secret.encode(), out)
        outage["seconds"] = round(time.monotonic() - down, 2)
        outage["up_at_s"] = clock()
        ctx.say(f"{name}: receiver back to normal on port {port}")
        producer.join(span + 120)
        if proc.poll() is not None:
            raise ScenarioError(
                name, f"the dispatcher exited ({proc.returncode}); log {folder / 'dispatch.log'}"
            )
        wanted = {r["payload"]["alert_id"] for r in batch}
        wait_until(lambda: wanted <= set(stored_keys(out)), 120 + answer_s, interval_s=1.0)
        outage["all_stored_after_s"] = round(time.monotonic() - down - outage_s, 1)
        wait_until(lambda: outbox_counts(folder)["pending"] == 0, 120 + answer_s, interval_s=1.0)
        outage["outbox_drained_after_s"] = round(time.monotonic() - down - outage_s, 1)
        time.sleep(3)  # late repeats of already-stored alerts still count as wire duplicates
    finally:
        receiver.stop()
        wire_duplicates += receiver.stats.duplicates
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        log.close()
    in_topic = {r["payload"]["alert_id"] for r in records(settings, settings.topics.alerts.name)}
    produced = {r["payload"]["alert_id"] for r in batch}
    counts = count_alerts(produced, stored_keys(out), wire_duplicates)
    during = sum(1 for t in produced_at if before_s <= t < before_s + outage_s)
    fault = f"answering every request {answer_s:g} s late for" if answer_s else "down"
    result = ScenarioResult(
        scenario=name,
        injected=f"webhook receiver {fault} {outage_s:g} s while {alerts} alerts flowed ({during} during the fault)",
        alerts_lost=counts.lost,
        alerts_wire_duplicates=counts.wire_duplicates,
        alerts_accepted_twice=counts.accepted_twice,
    )
    result.details.update(
        produced=counts.produced,
        in_topic=len(in_topic),
        received=counts.received,
        produced_during_outage=during,
        outage=outage,
        outbox=outbox_counts(folder),
    )
    result.duration_s = clock()
    return result
