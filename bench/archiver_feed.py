"""The archiver bench's producer (not a test): the synthetic fleet mix into Kafka, as a backlog or live at a rate.

    .venv/bin/python bench/archiver_feed.py BOOTSTRAP PREFIX RATE --records 40000000 --fleet 48000

Hosts come in 100-host chunks. Each chunk is one of ``TEMPLATES`` synthetic chunks encoded once, with
placeholder stamps in its host ids and event ids that are overwritten per chunk and pass with stamps of
the same length, so every Avro string keeps its length prefix: building and encoding each record anew
took a whole core at 6,100 records/s, more than the archiver it fed. Chunks sharing a template share
their sample values (not their hosts or ids).
"""

from __future__ import annotations

import argparse
import itertools
import subprocess
import sys
import time
from pathlib import Path

from kafka import KafkaProducer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analytics.lake.synthetic import synthetic_records  # noqa: E402
from bench.benchkit import exit_on_sigterm  # noqa: E402
from ground.settings import Settings  # noqa: E402
from producers.sinks.kafka import producer_config  # noqa: E402
from schemas import FLEET, Codec  # noqa: E402
from schemas.events import topic_family  # noqa: E402

SAMPLES_PER_HOST = 500  # one host: 1 inventory + 500 samples + 5 error events
CHUNK = 100
TEMPLATES = 4
HOST_MARK = "-######"  # becomes -NNNNNN, the chunk's first host number

Encoded = tuple[str, bytes, bytes]  # (topic, key, value)


def settings_on(base: Settings, bootstrap: str, prefix: str) -> Settings:
    """``base`` pointed at one broker, with every topic name under ``prefix`` (each bench run its own topics)."""
    topics = type(base.topics).model_validate({**base.topics.model_dump(), "prefix": prefix})
    kafka = base.kafka.model_copy(update={"bootstrap_servers": bootstrap})
    return base.model_copy(update={"kafka": kafka, "topics": topics})


def stamp(tag: str, lap: int, chunk: int) -> str:
    """The event-id prefix of one chunk in one pass over the fleet (fixed width: laps and chunks < 10**6)."""
    return f"{tag}{lap:06d}-{chunk:06d}"


def templates(settings: Settings, tag: str) -> list[list[Encoded]]:
    """``TEMPLATES`` encoded chunks whose host ids end in ``HOST_MARK`` and whose event ids start with '#'s."""
    codec, id_mark = Codec(), "#" * len(stamp(tag, 0, 0))
    out = []
    for seed in range(TEMPLATES):
        chunk = []
        for record in synthetic_records(
            n_hosts=CHUNK, samples_per_host=SAMPLES_PER_HOST, seed=seed, id_prefix=id_mark
        ):
            if record["host_id"] != FLEET:
                record["host_id"] += HOST_MARK
            topic = getattr(settings.topics, topic_family(record["event_type"])).name
            chunk.append((topic, record["host_id"].encode(), codec.encode(record)))
        out.append(chunk)
    return out


def restamped(template: list[Encoded], tag: str, lap: int, chunk: int) -> list[Encoded]:
    """A template chunk as chunk ``chunk`` of pass ``lap``: its own hosts and new event ids."""
    ids = (b"#" * len(stamp(tag, 0, 0)), stamp(tag, lap, chunk).encode())
    hosts = (HOST_MARK.encode(), f"-{chunk:06d}".encode())
    return [
        (topic, key.replace(*hosts), value.replace(*ids).replace(*hosts)) for topic, key, value in template
    ]


def fill(settings: Settings, records: int, *, rate: float = 0.0, tag: str = "c", fleet: int = 0) -> int:
    """Send ``records`` of the fleet mix, at most ``rate`` a second if set.

    With ``fleet`` set the chunks cycle over that many hosts (a fixed fleet, as the soak's: the known-host set
    stops growing), each pass with new event ids; without it every chunk has new hosts.
    """
    hosts = max(1, records // (SAMPLES_PER_HOST + 6))
    named = min(hosts, fleet) if fleet else hosts
    chunks = templates(settings, tag)
    producer = KafkaProducer(**producer_config(settings, settings.simulator.producer, "bench-archiver"))
    n, started, cpu = 0, time.perf_counter(), time.process_time()
    try:
        for lap in itertools.count():
            for index, chunk in enumerate(range(0, named, CHUNK)):
                for topic, key, value in restamped(chunks[index % TEMPLATES], tag, lap, chunk):
                    producer.send(topic, key=key, value=value)
                    n += 1
                    if rate and n % 500 == 0:
                        time.sleep(max(0.0, n / rate - (time.perf_counter() - started)))
                if n >= records:
                    break
            if n >= records or not fleet:
                break
        producer.flush(300)
    finally:
        producer.close()
        wall = time.perf_counter() - started
        print(
            f"feed: {n:,} records in {wall:.0f} s ({n / wall:,.0f}/s) at {(time.process_time() - cpu) / wall:.2f} "
            "of a core (templates built before)",
            flush=True,
        )
    return n


def live(settings: Settings, rate: float, records: int, fleet: int) -> subprocess.Popen[bytes]:
    """A producer process adding the mix at ``rate`` records/s while the archiver runs (the soak's case)."""
    argv = [sys.executable, __file__, settings.bootstrap_servers, settings.topics.prefix, str(rate)]
    return subprocess.Popen([*argv, "--records", str(records), "--fleet", str(fleet)])


def main() -> None:
    exit_on_sigterm()  # the bench stops a live feed with SIGTERM: its figures still print
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("bootstrap")
    p.add_argument("prefix", help="the topics' prefix")
    p.add_argument("rate", type=float, help="records/s")
    p.add_argument("--records", type=int, required=True)
    p.add_argument("--fleet", type=int, default=0)
    args = p.parse_args()
    settings = settings_on(Settings.load(), args.bootstrap, args.prefix)
    fill(settings, args.records, rate=args.rate, tag="live", fleet=args.fleet)


if __name__ == "__main__":
    main()
