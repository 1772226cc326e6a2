"""poison: 10,000 fuzzed poison records and duplicated valid records mixed into a normal stream.

The simulator writes the normal stream to a clean set of topics (processed by the reference
worker); a mixed copy interleaves it, per partition in order, with the poison and with
second copies of valid records (processed by the worker under test). Poison is matched in
the DLQ by its original bytes.
"""

from __future__ import annotations

import heapq
import random
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from fleetpulse.faults.context import Clock, FaultContext, simulate
from fleetpulse.faults.counting import dlq_share
from fleetpulse.faults.detectors import Detector
from fleetpulse.faults.kafka_io import Message, produce_raw, read_topic
from fleetpulse.faults.poison import Poison, fuzz
from fleetpulse.faults.results import ScenarioResult
from fleetpulse.faults.sandbox import sandbox, variant
from fleetpulse.faults.scenarios.common import judge, outputs
from ground.kafka import admin

if TYPE_CHECKING:
    from ground.settings import Settings

NAME = "poison"
Item = tuple[bytes | None, bytes]  # key, value


def event_order(messages: Sequence[Message]) -> list[Message]:
    """All partitions merged by event time, each partition's own order kept (a k-way merge)."""
    by_partition: dict[int, list[Message]] = {}
    for m in messages:
        by_partition.setdefault(m.partition, []).append(m)

    def keyed(part: list[Message]) -> Iterator[tuple[int, int, int, Message]]:
        for m in part:
            ts = m.record["ts"] if m.record else 0
            yield ts, m.partition, m.offset, m

    return [
        m for *_, m in heapq.merge(*(keyed(sorted(p, key=lambda m: m.offset)) for p in by_partition.values()))
    ]


def mix(
    normal: Sequence[Message], poison: Sequence[Poison], duplicates: int, rng: random.Random
) -> tuple[list[Item], int]:
    """Normal records in order, poison at random places, second copies of valid records later on."""
    items: list[Item] = [(m.key, m.value or b"") for m in normal]
    dup_of = sorted(rng.sample(range(len(items)), min(duplicates, len(items))), reverse=True)
    for i in dup_of:  # from the back, so earlier indices stay valid
        items.insert(rng.randint(i + 1, len(items)), items[i])
    for p in poison:
        items.insert(rng.randint(0, len(items)), (p.key, p.value))
    return items, len(dup_of)


def _copy_inventory(source: Settings, target: Settings) -> int:
    msgs = read_topic(source, source.topics.inventory.name)
    return produce_raw(target, [(target.topics.inventory.name, m.key, m.value or b"") for m in msgs])


def run(ctx: FaultContext, count: int = 10_000, duplicates: int = 500) -> ScenarioResult:
    clock = Clock()
    folder = ctx.folder(NAME)
    clean = sandbox(ctx.base, ctx.bootstrap, ctx.prefix(NAME, "clean"))
    mixed = sandbox(ctx.base, ctx.bootstrap, ctx.prefix(NAME, "mixed"))
    truth = folder / "truth"
    sim = simulate(ctx, clean, truth)

    admin.create_topics(mixed)
    rng = random.Random(ctx.seed)
    normal = {
        fam: event_order(read_topic(clean, getattr(clean.topics, fam).name)) for fam in ("samples", "errors")
    }
    templates = [m.record for msgs in normal.values() for m in msgs if m.record is not None]
    poison = fuzz(templates, count, now_ms=int(time.time() * 1000), seed=ctx.seed)
    share = {
        fam: round(duplicates * len(msgs) / max(1, sum(map(len, normal.values()))))
        for fam, msgs in normal.items()
    }
    share["errors"] = min(
        len(normal["errors"]), max(share["errors"], duplicates // 2)
    )  # errors drive repeat offenders
    share["samples"] = duplicates - share["errors"]
    sent: dict[str, int] = {}
    _copy_inventory(clean, mixed)
    dup_total = 0
    for fam in ("samples", "errors"):
        items, dups = mix(normal[fam], [p for p in poison if p.family == fam], share[fam], rng)
        dup_total += dups
        topic = getattr(mixed.topics, fam).name
        sent[fam] = produce_raw(mixed, [(topic, k, v) for k, v in items])
    ctx.say(
        f"{NAME}: {sim.total:,} normal events, {len(poison):,} poison, {dup_total} duplicates; two workers"
    )
    reference = Detector(variant(clean, "ref"), folder / "ref", NAME)
    fuzzed = Detector(variant(mixed, "fuzz"), folder / "fuzz", NAME)
    try:
        reference.start()
        fuzzed.start()
        fuzzed.wait_drained(timeout_s=600)
        reference.wait_drained()
    finally:
        fuzzed.stop()
        reference.stop()
    ref_out, fuzz_out = outputs(reference.settings, truth), outputs(fuzzed.settings, truth)
    dlq = dlq_share({p.value: p.kind for p in poison}, fuzz_out.dlq)
    result = ScenarioResult(
        scenario=NAME,
        injected=f"{len(poison):,} fuzzed poison records (5 kinds) and {dup_total} duplicated valid records "
        f"mixed into {sim.total:,} normal events",
        dlq_share=dlq.share,
    )
    judge(result, ref_out, fuzz_out, extras=True)
    result.details.update(
        poison=dlq.poison,
        dead_lettered=dlq.dead_lettered,
        without_reason=dlq.without_reason,
        dlq_not_poison=dlq.other,
        by_kind=dlq.by_kind,
        reasons=dlq.reasons,
        missing=dlq.missing_examples,
        duplicates=dup_total,
        sent=sent,
        reference_dlq=len(ref_out.dlq),
    )
    if dlq.other:
        result.explanations.append(
            f"{dlq.other} DLQ record(s) are not poison (a valid record dead-lettered?)"
        )
    result.duration_s = clock()
    return result
