"""Column-wise decoding: the plan is the per-record plan, for clean batches and for corrupted ones."""

from __future__ import annotations

import struct
from io import BytesIO
from typing import Any

from fastavro import schemaless_writer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analytics.lake.batch import BatchPlan, plan_batch
from analytics.lake.columnar import BlockDecoder
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
    blocks = BlockDecoder(CODEC.registry)
    column_wise = {s for s in CODEC.registry.subjects if blocks.subject(CODEC.schema_id(s)) == s}
    assert "HostSampled" in column_wise
    assert set(CODEC.registry.subjects) - column_wise == {"AlertRaised", "FindingRaised", "EccErrorObserved"}
    assert blocks.subject(CODEC.registry.versions("HostSampled")[0].schema_id) is None  # older: per record


def test_a_clean_batch_plans_the_same_both_ways() -> None:
    consumed = mixed_batch()
    fast, slow = plan_batch(consumed, CODEC), plan_batch(consumed, CODEC, columnar=False)
    assert summary(fast) == summary(slow)
    assert fast.repeats == 1 and [r.error_type for r in fast.rejected] == ["TimestampOutOfRange"]
    assert fast.tables["host_sampled"].chunks  # the samples went through a block


def test_a_body_one_byte_long_is_caught_by_the_row_after_it_or_the_sentinel() -> None:
    samples = [c for c in mixed_batch() if c.topic.endswith("samples")][:6]
    for i in (2, 5):  # in the middle, and the last body (only the sentinel sees that one)
        bad = [*samples]
        bad[i] = bad[i]._replace(value=bytes(bad[i].value or b"") + b"\x00")
        plan = plan_batch(bad, CODEC)
        assert [(r.record.offset, r.error_type) for r in plan.rejected] == [(bad[i].offset, "PayloadError")]
        assert summary(plan) == summary(plan_batch(bad, CODEC, columnar=False))


def test_body_event_id_reads_the_event_id_or_refuses() -> None:
    body = (CODEC.encode(synthetic_records(n_hosts=1)[0]))[HEADER.size :]
    assert body_event_id(body) == "ev-0000001"
    assert (
        body_event_id(b"") is None
        and body_event_id(b"\x10ab") is None
        and body_event_id(b"\x04\xff\xfe") is None
    )


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
def test_a_damaged_body_never_moves_another_record(mutations: list[tuple[int, str, int, int]]) -> None:
    """Every record is placed exactly as per-record decoding places it, but that a damaged one may be archived
    where fastavro rejects it (and a later copy of its id is then the repeat).

    That one direction is Polars' reader taking a union branch index other than 0 for the value branch,
    where fastavro fails on it (an index error, a short read, trailing bytes); such a body that still
    ends where it should is archived. A damaged body is never archived with other values than
    fastavro's, and never rejected where fastavro accepts it.
    """
    consumed = mixed_batch()
    changed = mutate(consumed, mutations)
    fast = outcomes(plan_batch(consumed, CODEC, chunk_rows=16), consumed)
    slow = outcomes(plan_batch(consumed, CODEC, columnar=False), consumed)
    kept_only_here = set()  # ids of damaged bodies archived here and rejected per record
    for i, (f, s) in enumerate(zip(fast, slow, strict=True)):
        if i in changed and f != s:
            assert s.startswith("rejected PayloadError") and not f.startswith("rejected PayloadError")
            kept_only_here.add(body_event_id(memoryview(consumed[i].value or b"")[HEADER.size :]))
    for i, (f, s) in enumerate(zip(fast, slow, strict=True)):
        if i not in changed and f != s:  # the later copy of such an id is then the repeat
            assert (
                f == "repeat" and body_event_id((consumed[i].value or b"")[HEADER.size :]) in kept_only_here
            )


def test_header_struct_is_the_codecs() -> None:
    assert HEADER.size == 5 and struct.calcsize(">bI") == 5
