"""Benchmark one detect worker: events/s vs a bare aiokafka consume-and-decode loop, and event->action latency.

    python bench/bench_detect.py [--bootstrap HOST:PORT] [--hosts 192] [--minutes 60] [--lemons 40]

Uses the broker at --bootstrap (default: the settings' broker, which must be running),
on topics of its own (a random prefix). Both throughput runs read the same records from
the same topics in the same run; the worker is a real ``fleetpulse detect`` subprocess.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from aiokafka import AIOKafkaConsumer, TopicPartition
from kafka import KafkaProducer

from fleetpulse.settings import Settings
from schemas import Codec, DecodeError, EccErrorObserved
from streams.testing import Scenario
from streams.worker import WorkerProcess, spawn_worker


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def isolated(settings: Settings, bootstrap: str) -> Settings:
    tag = uuid.uuid4().hex[:8]
    kafka = settings.kafka.model_copy(update={"bootstrap_servers": bootstrap})
    topics = settings.topics.model_copy(update={"prefix": f"bench{tag}."})
    topics = type(topics).model_validate(topics.model_dump())  # re-apply the prefix to every name
    detect = settings.detect.model_copy(update={"app_id": f"bench-{tag}", "log_level": "error"})
    return settings.model_copy(update={"kafka": kafka, "topics": topics, "detect": detect})


def produce(settings: Settings, records: list[tuple[str, bytes, bytes]]) -> None:
    producer = KafkaProducer(
        **settings.kafka.kafka_python(settings.bootstrap_servers),
        acks="all",
        linger_ms=20,
        batch_size=512 * 1024,
    )
    for family, key, value in records:
        producer.send(getattr(settings.topics, family).name, key=key, value=value)
    producer.flush(120)
    producer.close()


async def bare_loop(settings: Settings, topics: list[str], expected: int) -> float:
    """Events/s of consume + Codec.decode over the topics, nothing else."""
    codec = Codec()
    consumer = AIOKafkaConsumer(
        enable_auto_commit=False, group_id=None, **settings.kafka.aiokafka(settings.bootstrap_servers)
    )
    await consumer.start()
    try:
        await consumer._client.force_metadata_update()
        tps = [TopicPartition(t, p) for t in topics for p in sorted(consumer.partitions_for_topic(t) or ())]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        n, t0 = 0, None
        while n < expected:
            batches = await consumer.getmany(timeout_ms=500, max_records=5000)
            for messages in batches.values():
                if t0 is None:
                    t0 = time.perf_counter()
                for m in messages:
                    with contextlib.suppress(
                        DecodeError
                    ):  # poison records count as consumed, as in the worker
                        codec.decode(m.value)
                    n += 1
        return n / (time.perf_counter() - (t0 or time.perf_counter()))
    finally:
        await consumer.stop()


NOOP_WORKER = """
import sys, time, uuid, faust
from schemas import Codec
bootstrap, topics = sys.argv[1], sys.argv[2].split(",")
app = faust.App(f"noop-{uuid.uuid4().hex[:6]}", broker=f"kafka://{bootstrap}", store="memory://", web_enabled=False,
                consumer_auto_offset_reset="earliest", autodiscover=False, table_standby_replicas=0)
codec, state = Codec(), {"n": 0, "t0": 0.0, "t1": 0.0}
@app.agent(app.topic(*topics, key_serializer="raw", value_serializer="raw"))
async def count(stream):
    async for value in stream:
        state["t0"] = state["t0"] or time.perf_counter()
        try:
            codec.decode(value)
        except Exception:
            pass
        state["n"] += 1
        state["t1"] = time.perf_counter()
@app.timer(1.0)
async def report():
    if state["n"] and time.perf_counter() - state["t1"] > 2.0:  # idle: everything there was is consumed
        print(f"RATE {state['n']} {state['n'] / (state['t1'] - state['t0']):.0f}", flush=True)
faust.Worker(app, loglevel="error", quiet=True, redirect_stdouts=False).execute_from_commandline()
"""


def faust_noop(settings: Settings, topics: list[str], timeout_s: float = 120.0) -> tuple[int, float]:
    """(events, events/s) of a Faust agent that only decodes: the ceiling any Faust worker has here."""
    proc = subprocess.Popen(
        [sys.executable, "-c", NOOP_WORKER, settings.bootstrap_servers, ",".join(topics)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + timeout_s
    try:
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 1.0)
            line = proc.stdout.readline() if ready else ""
            if line.startswith("RATE "):
                _, n, rate = line.split()
                return int(n), float(rate)
        return 0, 0.0
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def events_total(text: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if line.startswith(("fleetpulse_detect_events_total", "fleetpulse_detect_dead_letters_total")):
            total += float(line.rsplit(" ", 1)[1])
    return total


def stage_work(text: str) -> float:
    """Messages handled by the stages after the first (cluster stage, planner) so far."""
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("fleetpulse_detect_handled_total")
    )


def wait_idle(worker: WorkerProcess, quiet_s: float = 1.0, timeout_s: float = 600.0) -> float:
    """Block until the worker's downstream stages have handled nothing new for ``quiet_s``; returns when."""
    last, since = -1.0, time.perf_counter()
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        now = stage_work(worker.get("/metrics").decode())
        if now != last:
            last, since = now, time.perf_counter()
        elif time.perf_counter() - since >= quiet_s:
            return since
        time.sleep(0.1)
    return since


def lemon_pairs(scenario: Scenario, lemons: int, base_ts: int) -> list[list[dict]]:
    """Per lemon host: two DRAM UCE faults (ECC + XID 48) one hour apart; the second should open an RMA."""
    out = []
    for k in range(lemons):
        host, cluster = f"bench-lemon-{k:03d}", "c0"
        pair = []
        for n, ts in enumerate((base_ts, base_ts + 3_600_000)):
            env = {
                "event_id": f"{host}-{n}",
                "host_id": host,
                "cluster": cluster,
                "ts": ts + k,
                "agent_seq": n + 1,
            }
            pair.append(
                EccErrorObserved(
                    **env, payload={"gpu": 1, "memory": "dram", "correctable": False, "count": 1}
                ).to_record()
            )
        out.append(pair)
    return out


async def latency(settings: Settings, lemons: list[list[dict]]) -> list[float]:
    """Produce each lemon's second fault and time until its 'suspected' action is on fleet.actions."""
    codec = Codec()
    consumer = AIOKafkaConsumer(
        settings.topics.actions.name, group_id=None, auto_offset_reset="latest",
        **settings.kafka.aiokafka(settings.bootstrap_servers),
    )  # fmt: skip
    await consumer.start()
    producer = KafkaProducer(
        **settings.kafka.kafka_python(settings.bootstrap_servers), acks="all", linger_ms=0
    )
    errors = settings.topics.errors.name
    for pair in lemons:  # first faults: not findings yet
        producer.send(errors, key=pair[0]["host_id"].encode(), value=codec.encode(pair[0]))
    producer.flush()
    await asyncio.sleep(3)
    sent: dict[str, float] = {}
    seen: dict[str, float] = {}
    for pair in lemons:
        second = pair[1]
        sent[second["host_id"]] = time.time()
        producer.send(errors, key=second["host_id"].encode(), value=codec.encode(second))
        producer.flush()
        deadline = time.time() + 10
        while second["host_id"] not in seen and time.time() < deadline:
            batches = await consumer.getmany(timeout_ms=50)
            for messages in batches.values():
                for m in messages:
                    rec = codec.decode(m.value).record
                    if rec["payload"]["kind"] == "suspected":
                        seen.setdefault(rec["host_id"], time.time())
    producer.close()
    await consumer.stop()
    return [1000 * (seen[h] - sent[h]) for h in sent if h in seen]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--hosts", type=int, default=192)
    parser.add_argument("--minutes", type=int, default=60)
    parser.add_argument("--interval", type=int, default=10)
    parser.add_argument("--lemons", type=int, default=40)
    args = parser.parse_args()
    base = Settings.load()
    settings = isolated(base, args.bootstrap or base.bootstrap_servers)
    scenario = Scenario(hosts=args.hosts, interval_s=args.interval, duration_min=args.minutes)
    records = list(scenario.records())
    stream = [r for r in records if r[0] in ("samples", "errors")]
    print(
        f"records: {len(stream)} on samples+errors ({args.hosts} hosts, {args.minutes} min at {args.interval} s)"
    )
    from fleetpulse import admin

    admin.create_topics(settings)
    t = time.perf_counter()
    produce(settings, records)
    print(f"produced in {time.perf_counter() - t:.1f} s")

    topics = [settings.topics.samples.name, settings.topics.errors.name]
    bare = asyncio.run(bare_loop(settings, topics, len(stream)))
    print(f"bare aiokafka consume+decode: {bare:,.0f} events/s")
    noop_n, noop = faust_noop(settings, topics)
    print(
        f"Faust agent, decode only:     {noop:,.0f} events/s ({noop / bare:.0%} of the bare loop), {noop_n} events"
    )

    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        worker = spawn_worker(settings, web_port=port, data_dir=Path(tmp) / "w", log_path=Path(tmp) / "w.log")
        try:
            worker.wait_ready(90)
            t0 = t1 = None
            done = 0.0
            deadline = time.time() + 600
            while done < len(stream) and time.time() < deadline:
                done = events_total(worker.get("/metrics").decode())
                now = time.perf_counter()
                if t0 is None and done > 0:
                    t0 = now
                t1 = now
                time.sleep(0.1)
            rate = done / (t1 - t0) if t0 and t1 and t1 > t0 else 0.0
            print(
                f"detect worker:                {rate:,.0f} events/s ({rate / bare:.0%} of the bare loop, "
                f"{rate / noop:.0%} of the Faust decode-only agent), {done:.0f} events"
            )
            idle = wait_idle(worker)
            whole = done / (idle - t0) if t0 and idle > t0 else 0.0
            print(
                f"  until every stage is idle:  {whole:,.0f} events/s ({whole / bare:.0%} of the bare loop; "
                f"cluster stage done {idle - (t1 or idle):.1f} s after the last sample was consumed)"
            )
            lat = asyncio.run(
                latency(settings, lemon_pairs(scenario, args.lemons, scenario.start_ts + 3 * 3_600_000))
            )
            if lat:
                lat.sort()
                p99 = lat[min(len(lat) - 1, int(round(0.99 * (len(lat) - 1))))]
                print(
                    f"event->action latency over {len(lat)} lemons: p50 {statistics.median(lat):.0f} ms, p99 {p99:.0f} ms"
                )
            else:
                print("event->action latency: no actions seen", file=sys.stderr)
        finally:
            worker.stop()
        from fleetpulse import admin as _admin

        names = [s.name for s in settings.topics.all()]
        _admin.delete_topics(settings, names)


if __name__ == "__main__":
    main()
