"""disk-full: the disk under the lake, the webhook outbox and the detect worker's state fills up, then frees.

The disk is a 64 MB tmpfs mounted in an unprivileged user namespace (``faults.small_disk``): a real
full filesystem with real ENOSPC, for the folders alone (logs stay outside), with no root; the
three parts run in that namespace. While the simulator produces and alerts flow, a filler file
takes every free byte for ``full_s``, then is deleted. Counted: the simulator's events in the lake
(exactly once), findings and actions against a clean reference worker, the live worker's alerts
stored once by the receiver (with a few alerts produced while the disk is full, so that the outbox
meets it), and the parts that exited (restarted as any supervisor would).
"""

from __future__ import annotations

import contextlib
import secrets
import time
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from analytics.lake.layout import OFFSETS_TABLE
from analytics.lake.reader import Lake
from analytics.tables import TABLES
from fleetpulse.faults.context import Clock, FaultContext
from fleetpulse.faults.counting import count_alerts, count_events
from fleetpulse.faults.detectors import Detector
from fleetpulse.faults.errors import ScenarioError
from fleetpulse.faults.kafka_io import produce_raw, records, wait_until
from fleetpulse.faults.parts import Watched
from fleetpulse.faults.results import ScenarioResult
from fleetpulse.faults.sandbox import sandbox, variant
from fleetpulse.faults.scenarios.common import judge, outputs, paced_producer, reference_run
from fleetpulse.faults.scenarios.receiver_down import alert, stored_keys
from fleetpulse.faults.small_disk import SmallDisk
from ground.kafka import admin
from ground.kafka.reading import group_lags
from ground.launch import child_env, fleetpulse_argv
from schemas import Codec
from streams.state_store import EXIT_STATE_WRITE
from webhooks import start_receiver
from webhooks.outbox import OUTBOX_FILE, Outbox

NAME = "disk-full"
FULL_MARKS = ("No space left on device", "database or disk is full", "os error 28", "Errno 28")


def lake_rows(lake_dir: Path) -> tuple[list[dict[str, str]], dict[str, int]]:
    """Every data row of the lake as ``{event_type, event_id}``, and rows set aside (quarantine, rejects)."""
    lake = Lake(lake_dir)
    rows: list[dict[str, str]] = []
    aside = {"rejected": lake.rejected().select("reason").collect().height}
    for table, event_type in TABLES.items():
        ids = lake.scan(table).select("event_id").collect().get_column("event_id").to_list()
        rows += [{"event_type": event_type, "event_id": i} for i in ids]
        held = lake.quarantined(table)
        if held is not None:
            aside[f"quarantined:{table}"] = held.select("event_id").collect().height
    return rows, aside


def full_lines(log: Path) -> int:
    """Log lines of a part that report the disk full (the proof that the fault reached it)."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return 0
    return sum(1 for line in text.splitlines() if any(m in line for m in FULL_MARKS))


def run(
    ctx: FaultContext,
    full_s: float = 120.0,
    produce_s: float = 90.0,
    first_after_s: float = 10.0,
    size_mb: int = 64,
) -> ScenarioResult:
    clock = Clock()
    folder = ctx.folder(NAME)
    settings = sandbox(ctx.base, ctx.bootstrap, ctx.prefix(NAME))
    admin.create_topics(settings)
    live_settings = variant(settings, "live")
    disk = SmallDisk(folder / "disk", size_mb)
    disk.start()
    root = disk.mount_point
    secret = secrets.token_urlsafe(32)  # strong by the secret rule with a wide margin
    received = folder / "received.jsonl"
    receiver = start_receiver(0, secret.encode(), received)
    dispatch = live_settings.with_section(
        "webhooks",
        urls=[f"http://127.0.0.1:{receiver.port}/alerts"],
        secret=SecretStr(secret),
        group_id=f"{settings.topics.prefix}dispatch",
        data_dir=root / "outbox",
        backoff_base_s=0.5,
        backoff_max_s=5.0,
        timeout_s=3.0,
        max_attempts=10_000,
    )
    archive = settings.with_section(
        "lake", path=str(root / "lake"), group_id=f"{settings.topics.prefix}archiver", flush_seconds=2.0
    )
    dispatcher = Watched(
        "dispatch", disk.wrap(fleetpulse_argv("dispatch")), child_env(dispatch), folder / "dispatch.log"
    )
    archiver = Watched(
        "archive", disk.wrap(fleetpulse_argv("archive")), child_env(archive), folder / "archive.log"
    )
    live = Detector(live_settings, folder / "live", NAME, state_dir=root / "state", wrap=disk.wrap)
    producer, outcome = paced_producer(ctx, settings, folder / "truth", produce_s)
    fault: dict[str, Any] = {}
    detect_exits: list[dict[str, Any]] = []
    started_full = [
        False
    ]  # per start of the worker: whether the disk was full then  # each exit of the worker: code, when, whether the disk was full

    sent_while_full: list[str] = []
    alerts_topic = live_settings.topics.alerts.name

    def send_alert(i: int) -> str:
        record = alert(i, f"{ctx.run_id}-full", int(time.time() * 1000))
        produce_raw(live_settings, [(alerts_topic, None, Codec().encode(record))], linger_ms=0)
        return str(record["payload"]["alert_id"])

    def watch() -> bool:
        """Start again every part that exited, as a supervisor would; True (to chain it in a wait's predicate)."""
        dispatcher.restart_if_dead()
        archiver.restart_if_dead()
        if not live.alive():
            code = None if live.worker is None else live.worker.process.returncode
            # a worker started before the disk was freed met the full disk, even if its end is seen later
            detect_exits.append(
                {
                    "code": code,
                    "seen_at_s": clock(),
                    "disk_full": started_full[-1] or "freed_at_s" not in fault,
                }
            )
            started_full.append("freed_at_s" not in fault)
            with contextlib.suppress(ScenarioError):  # e.g. RocksDB cannot open on the full disk: next look
                live.start(ready_timeout_s=60)
        return True

    try:
        live.start()
        dispatcher.start()
        archiver.start()
        up = [root / "outbox" / OUTBOX_FILE, root / "lake" / OFFSETS_TABLE / "_delta_log"]
        if not wait_until(lambda: all(disk.outside(p).exists() for p in up), 120, interval_s=0.5):
            raise ScenarioError(NAME, f"dispatch or archive did not start; logs in {folder}")
        producer.start()
        ctx.say(
            f"{NAME}: simulator producing for {produce_s:g} s; detect, dispatch, archive on a {size_mb} MB disk"
        )
        time.sleep(first_after_s)
        fault["used_before_bytes"] = disk.usage()[0]
        fault["full_from_s"] = clock()
        fault["free_after_fill_bytes"] = disk.fill()
        fault["producing_when_full"] = producer.is_alive()
        ctx.say(f"{NAME}: disk full ({fault['free_after_fill_bytes']} bytes free) for {full_s:g} s")
        until = time.monotonic() + full_s
        while time.monotonic() < until:
            time.sleep(2.0)
            sent_while_full.append(send_alert(len(sent_while_full)))  # the outbox must take alerts meanwhile
            disk.fill()  # what a part deleted (a compaction, a temp file) is taken again
            watch()
        watch()
        disk.free()
        fault["freed_at_s"] = clock()
        fault["while_producing"] = producer.is_alive()
        ctx.say(f"{NAME}: disk freed ({disk.usage()[1] // 2**20} MB free)")
        producer.join(produce_s * 4 + 300)
        watch()
        fault["worker_drained_after_s"] = round(live.wait_drained(), 1)

        def wanted() -> set[str]:
            return {
                r["payload"]["alert_id"] for r in records(live_settings, live_settings.topics.alerts.name)
            }

        if not wait_until(lambda: watch() and wanted() <= set(stored_keys(received)), 180, interval_s=1.0):
            raise ScenarioError(NAME, f"alerts not delivered within 180 s; log {dispatcher.log_path}")
        outbox_of = lambda: outbox_counts(disk.copy_out(root / "outbox", folder / "outbox-copy"))  # noqa: E731
        wait_until(lambda: outbox_of()["pending"] == 0, 60, interval_s=1.0)
        lake_group = archive.lake.group_id
        inputs = [getattr(settings.topics, f).name for f in archive.lake.families]
        caught_up = lambda: all(  # noqa: E731
            lag == 0
            for lag in group_lags(settings.bootstrap_servers, settings.kafka, lake_group, inputs).values()
        )
        if not wait_until(lambda: watch() and caught_up(), 180, interval_s=1.0):
            raise ScenarioError(NAME, f"the archiver did not catch up within 180 s; log {archiver.log_path}")
        fault["all_recovered_after_s"] = round(clock() - fault["freed_at_s"], 1)
        outbox = outbox_of()
        rows, aside = lake_rows(disk.copy_out(root / "lake", folder / "lake-copy"))
        live.stop()
        ctx.say(f"{NAME}: recovered; reference worker on the same topics")
        reference = reference_run(settings, folder, NAME)
    finally:
        live.stop()
        dispatcher.stop()
        archiver.stop()
        receiver.stop()
        disk.stop()
    after = [e for e in detect_exits if not e["disk_full"]]
    crashes = {
        "detect_while_full": len(detect_exits) - len(after),
        "detect_after": len(after),
        "dispatch": dispatcher.crashes,
        "archive": archiver.crashes,
    }
    result = ScenarioResult(
        scenario=NAME,
        injected=f"the {size_mb} MB disk under the lake, the outbox and the worker's state full for "
        f"{full_s:g} s while the simulator produced",
    )
    sim = outcome.get("sim")
    events = count_events(sim.counts if sim is not None else {}, rows)
    result.events_lost, result.events_duplicated = events.lost, events.duplicated
    judge(result, outputs(reference.settings, folder / "truth"), outputs(live.settings, folder / "truth"))
    produced = {r["payload"]["alert_id"] for r in records(live_settings, live_settings.topics.alerts.name)}
    alerts = count_alerts(produced, stored_keys(received), receiver.stats.duplicates)
    result.alerts_lost, result.alerts_wire_duplicates = alerts.lost, alerts.wire_duplicates
    result.alerts_accepted_twice = alerts.accepted_twice
    result.parts_restarted = crashes["detect_after"] + dispatcher.crashes + archiver.crashes
    hits = {
        "detect": full_lines(live.log_path),
        "dispatch": full_lines(dispatcher.log_path),
        "archive": full_lines(archiver.log_path),
    }
    result.details.update(
        fault=fault,
        alerts_sent_while_full=len(sent_while_full),
        part_crashes=crashes,
        detect_exits=detect_exits,
        disk_full_log_lines=hits,
        lake_events=events.per_type,
        lake_aside=aside,
        outbox=outbox,
        alerts=alerts.__dict__,
        simulator_error=outcome.get("error"),
    )
    if outcome.get("error"):
        result.explanations.append(f"the simulator failed: {outcome['error']}")
    if crashes["detect_while_full"]:
        codes = sorted({str(e["code"]) for e in detect_exits if e["disk_full"]})
        result.explanations.append(
            f"while the disk was full the detect worker ended itself {crashes['detect_while_full']}× (exit codes "
            f"{', '.join(codes)}; {EXIT_STATE_WRITE}: a refused state write, before acknowledging its record) and "
            "was started again, as its supervisor does (compose: restart on-failure)"
        )
    for part in ("detect_after", "dispatch", "archive"):
        if crashes[part]:
            result.explanations.append(
                f"{part}: exited {crashes[part]}× and was restarted (logs in {folder})"
            )
    result.duration_s = clock()
    return result


def outbox_counts(outbox_dir: Path) -> dict[str, int]:
    with Outbox.in_dir(outbox_dir) as outbox:
        return outbox.stats()._asdict()
