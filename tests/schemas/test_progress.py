"""Producers' progress reports: typed, versioned, and refused with a reason when malformed."""

from __future__ import annotations

import pytest

from schemas import DecodeError
from schemas.progress import WriterProgress, decode_progress, encode_progress


def test_a_report_round_trips() -> None:
    progress = WriterProgress("simulator", "fleet.errors", 3, 41, 1_700_000_000_000)
    assert decode_progress(encode_progress(progress)) == progress


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (None, "empty record"),
        (b"\x00\x01", "progress:"),
        (b'{"type": "finding", "writer": "s"}', "progress:"),
        (b'{"type": "writer_progress", "writer": "s", "topic": "t", "partition": 0, "through": 1}', "ts"),
        (
            b'{"type": "writer_progress", "writer": "s", "topic": "t", "partition": 0, "through": 1, "ts": 5, "v": 2}',
            "version 2",
        ),
        (
            b'{"type": "writer_progress", "writer": "", "topic": "t", "partition": 0, "through": 1, "ts": 5}',
            "empty writer",
        ),
    ],
)
def test_a_malformed_report_is_refused_with_its_reason(value: bytes | None, reason: str) -> None:
    with pytest.raises(DecodeError, match=reason):
        decode_progress(value)
