"""Column-wise decoding of HostSampled values takes a row only when the per-record way would, with its values."""

from __future__ import annotations

import asyncio
import copy
import math
import random
import struct
from typing import Any

import pytest

from ground.degraded import DEGRADED
from schemas import Codec, DecodeError
from streams.core.errors import InvalidRecordError
from streams.core.policy import Policy
from streams.core.samples.checkpoint import PartitionState
from streams.core.samples.columns import SampleColumns
from streams.core.validate import decode_checked
from streams.sample_wire import DEGRADED_GPU, MIN_ROWS, SampleWire
from streams.testing import START_TS
from tests.streams import factories as f
from tests.streams.test_samples import FakeProducer, messages, samples, stage

NOW_MS = START_TS + 3_600_000
CODEC = Codec()
LIMITS = Policy().validation
ODD_FLOATS = (math.nan, math.inf, -math.inf, -1.0, 1e9, 0.0, 100.0, 100.5)
ODD_INTS = (-1, 0, 2**31, 2**40, 10**12)


def varied(rng: random.Random, n: int) -> dict[str, Any]:
    """A believable sample, then now and then one field moved somewhere odd (out of range, null, NaN …)."""
    rec = f.sample(
        rng.choice([None, -5.0, 0.0, rng.uniform(1, 3000)]),
        rng.uniform(0, 500),
        host=rng.choice(["h1", "h2", "rack-7.node-3"] * 5 + ["hé", "h" * 300, "bad id!"]),
        cluster=rng.choice(["c0", "c1", "c-2"] * 5 + [""]),
        job=rng.choice([None, "j1", "j" * 200] * 3 + ["job-ü"]),
        ts=rng.choice([NOW_MS - 60_000 * n, NOW_MS - 1] * 5 + [NOW_MS + 10**9, 5]),
        interval_s=rng.choice([10, 60] * 5 + [0, 10**6]),
    )
    p = rec["payload"]
    p["gpus"] = [copy.deepcopy(p["gpus"][0]) | {"gpu": g} for g in range(rng.choice([0, 1, 8, 8, 8, 16]))]
    p["nics"] = [
        copy.deepcopy(rec["payload"]["nics"][0]) | {"port": k} for k in range(rng.choice([0, 1, 2, 4]))
    ]
    rec["agent_seq"] = rng.choice([1, 7, 2**40, -3])
    for item in p["gpus"]:
        for name in ("pcie_link_gen_max", "pcie_link_width_max", "throttle_reasons"):
            item[name] = rng.choice([item[name], None, 0, 4, 64 if name == "throttle_reasons" else 3])
    for item in p["nics"]:
        item["rx_gbps"] = rng.choice([350.0, 100.0, 10.0, 0.0, 500.0])
    for _ in range(rng.choice([0, 0, 0, 1, 2])):
        where = rng.choice([p, *p["gpus"], *p["nics"]])
        name = rng.choice([k for k in where if k not in ("job_id", "gpus", "nics")])
        if isinstance(where[name], float) or where[name] is None:
            where[name] = (
                rng.choice(ODD_FLOATS + (None,)) if name == "step_time_ms" else rng.choice(ODD_FLOATS)
            )
        else:
            where[name] = rng.choice(ODD_INTS)
    return rec


def encoded(rng: random.Random, rec: dict[str, Any]) -> bytes | None:
    """Its bytes, now and then broken: cut, a byte flipped, bytes after it, another schema's id, or none."""
    try:
        raw = CODEC.encode(rec)
    except Exception:  # a value Avro cannot hold (e.g. 2**40 in an int): what a broken producer might send
        raw = CODEC.encode(f.sample(host="h1", cluster="c0", ts=NOW_MS))
    damage = rng.choice(["none"] * 20 + ["cut", "flip", "trail", "id", "null", "short"])
    if damage == "cut":
        return raw[: rng.randrange(len(raw))]
    if damage == "flip":
        i = rng.randrange(len(raw))
        return raw[:i] + bytes([raw[i] ^ (1 << rng.randrange(8))]) + raw[i + 1 :]
    if damage == "trail":
        return raw + b"\x00"
    if damage == "id":
        return struct.pack(">bI", 0, 2) + raw[5:]  # HostSampled v1's id on a v2 body
    if damage == "null":
        return None
    if damage == "short":
        return raw[:3]
    return raw


def per_record(value: bytes | None) -> dict[str, Any] | None:
    try:
        return decode_checked(CODEC, value, LIMITS, NOW_MS)
    except (DecodeError, InvalidRecordError):
        return None


@pytest.mark.parametrize("seed", range(6))
def test_rows_taken_are_the_valid_ones_with_the_values_the_per_record_way_folds(seed: int) -> None:
    rng = random.Random(seed)
    values = [encoded(rng, varied(rng, n)) for n in range(400)]
    wire = SampleWire(CODEC, LIMITS).decode(values, NOW_MS)
    taken = 0
    for i, value in enumerate(values):
        record = per_record(value)
        row = wire.row[i]
        if row < 0:
            # Declined rows go the per-record way; a valid, plain one should not be declined.
            assert record is None or not all(
                s.isascii()
                for s in (
                    record["event_id"],
                    record["host_id"],
                    record["cluster"],
                    record["payload"]["job_id"] or "",
                )
            ), f"message {i} is valid and plain but was not taken"
            continue
        taken += 1
        assert record is not None, f"message {i} was taken but the per-record way rejects it"
        want = SampleColumns.of_records([record])
        got = wire.take([row])
        for name in SampleColumns.__struct_fields__:
            assert list(getattr(got, name)) == list(getattr(want, name)), (i, name)
    assert taken > 40  # a good share of them are believable and plain


def test_a_batch_of_nothing_but_broken_values_takes_no_row() -> None:
    broken = [None, b"", b"\x00\x00\x00\x00\x0e", b"\xff" * 40] * (MIN_ROWS // 4 + 1)
    assert SampleWire(CODEC, LIMITS).decode(broken, NOW_MS).row == [-1] * len(broken)


def test_a_union_branch_other_than_null_or_value_is_not_taken() -> None:
    """Branch 3 of ``["null", "float"]`` reads as long as branch 1 (the row stays in place), but the per-record
    way refuses it; a reader taking every branch but 0 as the value would let it in."""
    plain = f.sample(1000.0, host="h1", cluster="c0", ts=NOW_MS - 1)
    raw = CODEC.encode(plain)
    idle = CODEC.encode(plain | {"payload": plain["payload"] | {"step_time_ms": None}})
    branch = next(i for i, (a, b) in enumerate(zip(raw, idle, strict=False)) if a != b)
    assert (raw[branch], idle[branch]) == (2, 0)  # the step time's union branch: 1 (float), 0 (null)
    odd = raw[:branch] + bytes([6]) + raw[branch + 1 :]
    assert per_record(raw) is not None and per_record(odd) is None
    values = [odd if k % 2 else raw for k in range(MIN_ROWS)]
    wire = SampleWire(CODEC, LIMITS).decode(values, NOW_MS)
    assert [row >= 0 for row in wire.row] == [k % 2 == 0 for k in range(MIN_ROWS)]


def test_a_string_length_near_2_to_the_63_is_declined_not_an_index_error() -> None:
    """Its row's position once overflowed to a negative index and the whole batch raised IndexError."""
    raw = CODEC.encode(f.sample(1000.0, host="h1", cluster="c0", ts=NOW_MS - 1))
    id_length = raw[5] >> 1  # a one-byte varint: the event id is short
    huge = bytes([0xFC] + [0xFF] * 8 + [0x01])  # zig-zag of 2**63 - 2
    odd = raw[:5] + huge + raw[6 + id_length :]
    assert per_record(odd) is None
    values = [odd, *[raw] * (MIN_ROWS - 1)]
    wire = SampleWire(CODEC, LIMITS).decode(values, NOW_MS)
    assert [row >= 0 for row in wire.row] == [False] + [True] * (MIN_ROWS - 1)


def test_the_gpu_fields_read_for_degraded_are_the_rules() -> None:
    rule = {field for test in DEGRADED.below_max for field in test} | {test.field for test in DEGRADED.bits}
    assert set(DEGRADED_GPU) == rule


def test_a_small_batch_is_left_to_the_per_record_way() -> None:
    values = [CODEC.encode(f.sample(host="h1", cluster="c0", ts=NOW_MS - k)) for k in range(MIN_ROWS)]
    wire = SampleWire(CODEC, LIMITS)
    assert wire.decode(values[1:], NOW_MS).row == [-1] * (MIN_ROWS - 1)
    assert wire.decode(values, NOW_MS).row == list(range(MIN_ROWS))


def test_a_fetched_batch_folds_and_dead_letters_as_it_did_record_by_record() -> None:
    """Column rows, dead letters and records taken one by one, interleaved: the same sends and state."""
    records: list[dict[str, Any] | None] = list(samples(8, 40))
    rng = random.Random(3)
    for k in range(0, len(records), 19):
        plain = records[k]
        assert plain is not None
        taken_alone = plain | {"payload": plain["payload"] | {"job_id": "jöb"}}  # valid, but not ASCII
        xid = f.xid(79, host="h1", cluster="c0", ts=plain["ts"])
        records[k] = rng.choice([None, xid, f.sample(-1.0, 380.0), taken_alone, taken_alone])
    assert len(records) >= 2 * MIN_ROWS

    def run(columns: bool) -> tuple[list[tuple[str, bytes]], list[str], PartitionState]:
        dead: list[str] = []

        async def dead_letter(exc: Exception, source: Any) -> Any:
            dead.append(f"{source.offset}: {exc}")
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done

        producer = FakeProducer()
        s = stage(producer, dead_letter)
        if not columns:
            s.partitions.wire.plan = None  # every value the per-record way
        msgs = messages(records)
        asyncio.run(s.partitions.fold_batch(0, msgs[:150]))
        asyncio.run(s.partitions.fold_batch(0, msgs[150:]))
        return producer.sent, dead, s.partitions.parts[0]

    assert run(columns=True) == run(columns=False)
