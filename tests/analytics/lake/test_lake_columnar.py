"""Column-wise decoding: the plan is the per-record plan, for clean batches and for damaged ones, row by row."""

from __future__ import annotations

import struct
from io import BytesIO
from typing import Any

from fastavro import schemaless_writer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analytics.lake.batch import BatchPlan, column_readers, plan_batch
from analytics.lake.records import ConsumedRecord
from analytics.lake.synthetic import synthetic_records
from schemas import Codec
from schemas.codec import HEADER, MAGIC_BYTE, body_event_id
from tests.analytics.lake.helpers import as_consumed

CODEC = Codec()


def summary(plan: BatchPlan) -> dict[str, Any]:
    """What a plan decides, independent of the order rows sit in a table (the two paths group differently)."""
    tables = {}
    for name, batch in plan.tables.items():
        rows = batch.arrow().to_pylist()
        assert len(rows) == len(batch.sources)
        tables[name] = repr(sorted(zip(batch.sources, map(repr, rows), strict=True)))  # repr: NaN equals NaN
    rejected = [(r.record.tp, r.record.offset, r.error_type, r.reason) for r in plan.rejected]
    return {"tables": tables, "rejected": rejected, "repeats": plan.repeats, "ranges": plan.ranges}


def older_sample(record: dict[str, Any]) -> bytes:
    """A HostSampled framed with its first schema version, as an agent not yet upgraded sends it."""
    v1 = CODEC.registry.versions("HostSampled")[0]
    buf = BytesIO()
    buf.write(HEADER.pack(MAGIC_BYTE, v1.schema_id))
    schemaless_writer(buf, v1.parsed, record)
    return buf.getvalue()


def mixed_batch() -> list[ConsumedRecord]:
    records = synthetic_records(n_hosts=3, samples_per_host=12)
    samples = [r for r in records if r["event_type"] == "HostSampled"]
    off_calendar = {**samples[4], "event_id": "far-future", "ts": samples[4]["ts"] * 1000}
    consumed = as_consumed([*records, samples[2], off_calendar], partitions=2)  # one repeat, one bad time
    old = consumed[-1]._replace(
        offset=consumed[-1].offset + 1, value=older_sample({**samples[7], "event_id": "v1"})
    )
    return [*consumed, old]


def test_every_subject_but_maps_and_booleans_decodes_column_wise() -> None:
    readers = column_readers(CODEC)
    column_wise = {s for s in CODEC.registry.subjects if CODEC.schema_id(s) in readers}
    assert all(readers[CODEC.schema_id(s)].reader.subject == s for s in column_wise)
    assert "HostSampled" in column_wise
    assert set(CODEC.registry.subjects) - column_wise == {"AlertRaised", "FindingRaised", "EccErrorObserved"}
    assert CODEC.registry.versions("HostSampled")[0].schema_id not in readers  # older: per record


def test_a_clean_batch_plans_the_same_both_ways() -> None:
    consumed = mixed_batch()
    fast, slow = plan_batch(consumed, CODEC), plan_batch(consumed, CODEC, columnar=False)
    assert summary(fast) == summary(slow)
    assert fast.repeats == 1 and [r.error_type for r in fast.rejected] == ["TimestampOutOfRange"]
    assert fast.tables["host_sampled"].chunks  # the samples went through a block


def test_a_body_one_byte_long_is_rejected_and_the_rest_of_its_chunk_stays_column_wise() -> None:
    samples = [c for c in mixed_batch() if c.topic.endswith("samples")][:6]
    for i in (2, 5):  # in the middle, and the last body
        bad = [*samples]
        bad[i] = bad[i]._replace(value=bytes(bad[i].value or b"") + b"\x00")
        plan = plan_batch(bad, CODEC)
        batch = plan.tables["host_sampled"]
        assert not batch.records and sum(t.num_rows for t in batch.chunks) == 5  # no row went one by one
        assert [(r.record.offset, r.error_type) for r in plan.rejected] == [(bad[i].offset, "PayloadError")]
        assert summary(plan) == summary(plan_batch(bad, CODEC, columnar=False))


def test_a_union_branch_out_of_range_is_rejected_with_its_reason_alone() -> None:
    """The body Polars' block reader took (branch 1 → 3): now a dead letter with fastavro's reason, its chunk kept."""
    samples = [c for c in mixed_batch() if c.topic.endswith("samples")][:6]
    value = bytes(samples[3].value or b"")
    gpu = CODEC.decode(value).record["payload"]["gpus"][-1]
    unions = ("pcie_link_gen_max", "pcie_link_width_max", "throttle_reasons")
    tail = bytes(
        [b for name in unions for b in (2, 2 * gpu[name])] + [0]
    )  # branch 1 and a value each; the array's end
    assert value.find(tail, HEADER.size) > 0
    at = value.rindex(tail)
    samples[3] = samples[3]._replace(value=value[:at] + b"\x06" + value[at + 1 :])
    plan = plan_batch(samples, CODEC)
    batch = plan.tables["host_sampled"]
    assert not batch.records and sum(t.num_rows for t in batch.chunks) == 5  # no row went one by one
    assert [(r.record.offset, r.error_type) for r in plan.rejected] == [(samples[3].offset, "PayloadError")]
    assert "IndexError" in plan.rejected[0].reason
    assert summary(plan) == summary(plan_batch(samples, CODEC, columnar=False))


def test_body_event_id_reads_the_event_id_or_refuses() -> None:
    body = (CODEC.encode(synthetic_records(n_hosts=1)[0]))[HEADER.size :]
    assert body_event_id(body) == "ev-0000001"
    assert (
        body_event_id(b"") is None
        and body_event_id(b"\x10ab") is None
        and body_event_id(b"\x04\xff\xfe") is None
    )


def test_an_int_past_32_bits_is_rejected_with_its_reason_and_its_chunk_stays_column_wise() -> None:
    """Codec.decode returns it as it is; the lake's int32 column cannot hold it (Polars' block wrapped it)."""
    samples = [c for c in mixed_batch() if c.topic.endswith("samples")][:6]
    record = CODEC.decode(samples[2].value).record
    record["payload"]["gpus"][0]["sm_clock_mhz"] = 10**12
    samples[2] = samples[2]._replace(value=CODEC.encode(record))
    plan = plan_batch(samples, CODEC)
    assert [(r.record.offset, r.error_type) for r in plan.rejected] == [(samples[2].offset, "IntOutOfRange")]
    assert "outside 32 bits" in plan.rejected[0].reason
    batch = plan.tables["host_sampled"]
    assert not batch.records and sum(t.num_rows for t in batch.chunks) == 5


MUTATIONS = st.lists(
    st.tuples(
        st.integers(min_value=0),  # which record
        st.sampled_from(["flip", "byte", "truncate", "extend", "varint"]),
        st.integers(min_value=0),  # where in it
        st.integers(min_value=0, max_value=255),
    ),
    min_size=1,
    max_size=3,
)


def mutate(consumed: list[ConsumedRecord], mutations: list[tuple[int, str, int, int]]) -> set[int]:
    """Damage bodies in place; the indices of the records changed."""
    changed = set()
    for which, kind, where, byte in mutations:
        i = which % len(consumed)
        value = bytearray(consumed[i].value or b"")
        at = HEADER.size + where % max(
            1, len(value) - HEADER.size
        )  # bodies: the header is the framing's test
        if kind == "flip" and at < len(value):
            value[at] ^= 1 << (byte % 8)
        elif kind == "byte" and at < len(value):
            value[at] = byte
        elif kind == "truncate":
            value = value[:at]
        elif kind == "extend":
            value += bytes([byte]) * (1 + byte % 5)
        elif kind == "varint":
            value[at : at + 9] = b"\xff" * 9
        if bytes(value) != consumed[i].value:
            consumed[i] = consumed[i]._replace(value=bytes(value))
            changed.add(i)
    return changed


def outcomes(plan: BatchPlan, consumed: list[ConsumedRecord]) -> list[str]:
    """Where each consumed record ended: a table row (with its values), a rejection (with its reason) or a repeat."""
    placed: dict[tuple[Any, int], str] = {}
    for name, batch in plan.tables.items():
        for (tp, offset), row in zip(batch.sources, batch.arrow().to_pylist(), strict=True):
            placed[(tp, offset)] = f"{name} {row!r}"  # repr: NaN equals NaN
    for r in plan.rejected:
        assert (r.record.tp, r.record.offset) not in placed
        placed[(r.record.tp, r.record.offset)] = f"rejected {r.error_type}: {r.reason}"
    out = [placed.pop((c.tp, c.offset), "repeat") for c in consumed]
    assert not placed and out.count("repeat") == plan.repeats
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MUTATIONS)
def test_a_damaged_body_is_placed_exactly_as_per_record_decoding_places_it(
    mutations: list[tuple[int, str, int, int]],
) -> None:
    """Every record, damaged or not, ends where decoding one by one puts it: the same row, or the same reason."""
    consumed = mixed_batch()
    mutate(consumed, mutations)
    fast = outcomes(plan_batch(consumed, CODEC, chunk_rows=16), consumed)
    slow = outcomes(plan_batch(consumed, CODEC, columnar=False), consumed)
    assert fast == slow


def test_header_struct_is_the_codecs() -> None:
    assert HEADER.size == 5 and struct.calcsize(">bI") == 5
