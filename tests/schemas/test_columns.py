"""The column decoder against ``Codec.decode``, row by row: it takes a row only as Codec.decode decodes it.

Valid records of every subject it reads come out as ``to_table`` builds them from Codec.decode's records;
damaged bodies (a union branch out of range, truncated varints, wrong lengths, cut or extended bodies,
every single byte changed) are never taken where Codec.decode refuses them, and never cost their
neighbours in the batch their place.
"""

from __future__ import annotations

import random
import string
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas import Codec, DecodeError
from schemas.arrow import to_table
from schemas.columns import ColumnDecoder, SubjectReader, TableBuilder
from schemas.errors import SchemaError
from tests.schemas.strategies import record_for

CODEC = Codec()
READERS = ColumnDecoder(CODEC.registry).readers
SUBJECTS = sorted(reader.subject for reader in READERS.values())
TEXT = string.ascii_letters + "-é中"


def value_of(t: Any, rng: random.Random) -> Any:
    """A deterministic valid value of an Avro type: nulls, empty and full arrays, non-ASCII text, wide ints."""
    if isinstance(t, list):
        return None if rng.random() < 0.3 else value_of(t[1], rng)
    if isinstance(t, dict):
        if t["type"] == "record":
            return {f["name"]: value_of(f["type"], rng) for f in t["fields"]}
        return [value_of(t["items"], rng) for _ in range(rng.choice([0, 1, 3, 8]))]
    return {
        "string": lambda: "".join(rng.choice(TEXT) for _ in range(rng.randrange(10))),
        "bytes": lambda: bytes(rng.randrange(256) for _ in range(rng.randrange(6))),
        "int": lambda: rng.choice([0, -1, 63, 64, 2**31 - 1, -(2**31)]),
        "long": lambda: rng.choice([0, -64, 1_767_222_360_000, 2**63 - 1, -(2**63)]),
        "float": lambda: rng.choice([0.5, -1e30, float("inf")]),
        "double": lambda: rng.choice([0.1, -1e300, float("-inf")]),
    }[t]()


def values_of(subject: str, n: int, seed: int = 0) -> list[bytes]:
    rng = random.Random(seed)
    raw = CODEC.registry.latest(subject).raw
    return [CODEC.encode({**value_of(raw, rng), "event_type": subject}) for _ in range(n)]


def damaged(value: bytes) -> list[bytes]:
    """One value broken every way at once: each byte set to a union branch 3 or -1, a varint that runs on,
    a byte with its top bit, a length one too long; cut at every length; one and ten bytes too many."""
    out = []
    for at in range(5, len(value)):
        for byte in {0x06, 0x01, 0x80, 0xFF, 0x7F, value[at] + 2 & 0xFF}:
            if byte != value[at]:
                out.append(value[:at] + bytes([byte]) + value[at + 1 :])
    out += [value[:cut] for cut in range(len(value))]
    out += [value + b"\x00", value + b"\xff" * 10, value[:-1] + b"\xff" * 11]
    return out


def refused(value: bytes | None) -> bool:
    try:
        CODEC.decode(value)
    except DecodeError:
        return True
    return False


def reader_of(subject: str) -> SubjectReader:
    return READERS[CODEC.schema_id(subject)]


def rows_of(subject: str, values: list[bytes], rows: np.ndarray) -> list[dict[str, Any]]:
    """The lake rows of ``rows`` decoded column-wise."""
    table = TableBuilder(reader_of(subject), CODEC.registry).table(reader_of(subject).read(values), rows)
    return table.to_pylist()


def per_record(subject: str, values: list[bytes]) -> list[dict[str, Any]]:
    """The lake rows of ``values`` decoded one by one."""
    return to_table(subject, [CODEC.decode(v).record for v in values]).to_pylist()


def test_it_reads_every_subject_but_maps_and_booleans() -> None:
    assert set(CODEC.registry.subjects) - set(SUBJECTS) == {
        "AlertRaised",
        "FindingRaised",
        "EccErrorObserved",
    }


@pytest.mark.parametrize("subject", SUBJECTS)
def test_valid_values_come_out_as_codec_decode_and_to_table_make_them(subject: str) -> None:
    values = values_of(subject, 40)
    columns = reader_of(subject).read(values)
    assert columns.ok.all()
    wide = columns.wide.tolist()  # an int fastavro reads past 32 bits: not for an int32 column
    keep = [v for v, w in zip(values, wide, strict=True) if not w]
    assert repr(rows_of(subject, values, np.flatnonzero(~columns.wide))) == repr(per_record(subject, keep))


@pytest.mark.parametrize("subject", ["HostSampled", "CampaignRecorded", "RecordDeadLettered", "XidRaised"])
def test_damaged_bodies_are_refused_row_by_row_as_codec_decode_refuses_them(subject: str) -> None:
    good = values_of(subject, 3, seed=1)
    broken = [d for g in good for d in damaged(g)]
    values: list[bytes | None] = [*good, *broken, None, *good]  # good rows on both sides of the damaged ones
    columns = reader_of(subject).read(values)
    ok = columns.ok.tolist()
    assert all(ok[: len(good)]) and all(ok[-len(good) :])  # damage elsewhere costs a row nothing
    assert not ok[len(good) + len(broken)]
    refuses = [refused(v) for v in values]
    assert [i for i in range(len(values)) if ok[i] and refuses[i]] == []
    taken = np.flatnonzero(columns.ok & ~columns.wide)
    kept = [values[i] or b"" for i in taken.tolist()]
    assert repr(rows_of(subject, values, taken)) == repr(per_record(subject, kept))  # the same values
    declined = sum(not (o or r) for o, r in zip(ok, refuses, strict=True))
    assert declined <= len(values) // 50  # what Codec.decode takes, it takes too (save a rare odd encoding)


def test_a_union_branch_out_of_range_truncated_varint_or_wrong_length_is_not_taken() -> None:
    record = value_of(CODEC.registry.latest("HostSampled").raw, random.Random(2))
    record.update(event_type="HostSampled", event_id="e1")
    record["payload"]["job_id"] = "j1"
    sample = CODEC.encode(record)
    job = sample.index(b"\x02\x04j1")  # ["null", "string"]: branch 1, length 2
    after_id = 5 + 1 + len(b"e1")
    cases = [
        sample[:job] + b"\x06" + sample[job + 1 :],  # branch 3
        sample[:5] + bytes([0xA0, 0x9C, 0x01]) + sample[6:],  # event_id 10,000 bytes long, past its record
        sample[:5] + b"\x01" + sample[6:],  # a length of -1
        sample[:5] + b"\x06" + sample[6:],  # a length one too long
        sample[:after_id] + b"\xff" * 11 + sample[after_id + 1 :],  # a varint past ten bytes
        sample[: after_id + 1 + len(b"HostSampled") + 1] + b"\x80",  # cut inside a varint
        sample + b"\x00",  # a byte after the record
    ]
    assert all(refused(v) for v in cases)
    minus_one = sample[:job] + b"\x01" + sample[job + 1 :]  # branch -1: fastavro reads the last branch
    assert not refused(minus_one)  # (a Python list index): declined here, decoded one by one
    ok = reader_of("HostSampled").read([sample, *cases, minus_one, sample]).ok.tolist()
    assert ok == [True] + [False] * len(cases) + [False, True]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(SUBJECTS).flatmap(
        lambda s: st.tuples(
            st.just(s), st.lists(record_for(CODEC.registry.latest(s).raw), min_size=1, max_size=6)
        )
    )
)
def test_any_valid_records_decode_column_wise_as_codec_decode_does(
    case: tuple[str, list[dict[str, Any]]],
) -> None:
    subject, records = case
    try:
        values = [CODEC.encode(r) for r in records]
    except SchemaError:
        return
    columns = reader_of(subject).read(values)
    assert columns.ok.all()
    rows = np.flatnonzero(~columns.wide)
    assert repr(rows_of(subject, values, rows)) == repr(
        per_record(subject, [values[i] for i in rows.tolist()])
    )
