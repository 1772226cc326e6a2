"""Column-wise Avro encoding of HostSampled batches (the hot path), byte-identical to fastavro.

Every field of every row becomes a fixed-width slot in one uint8 matrix with a validity mask
(varints are shorter than their slot); ``matrix[mask]`` is then the concatenation of all
records in order. A test checks the bytes against ``schemas.Codec`` on random batches.
A nullable (``["null", T]``) field's column holds NaN (float) or ``NULL_INT`` (integer) for null.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

Segment = tuple[np.ndarray, np.ndarray]  # (uint8 matrix n×w, lengths n)
NULL_INT = np.iinfo(np.int64).min  # null in the column of a nullable integer field (no counter gets there)


class Field(NamedTuple):
    """How one column is written: Avro float or int/long, optionally as the union ``["null", T]``."""

    is_float: bool
    nullable: bool = False


def varint(values: np.ndarray) -> Segment:
    """Avro int/long: zig-zag then base-128 varint; works on any shape (slots on a new last axis)."""
    x = np.asarray(values, dtype=np.int64)
    z = ((x << 1) ^ (x >> 63)).astype(np.uint64)
    top = int(z.max()) if z.size else 0
    width = max(1, (top.bit_length() + 6) // 7)
    lengths = np.ones(z.shape, dtype=np.int64)
    for k in range(1, width):
        lengths += (z >> np.uint64(7 * k)) != 0
    shifts = (7 * np.arange(width)).astype(np.uint64)
    chunks = ((z[..., None] >> shifts) & np.uint64(0x7F)).astype(np.uint8)
    chunks |= ((np.arange(width) < (lengths[..., None] - 1)) * 0x80).astype(np.uint8)
    return chunks, lengths


def float32(values: np.ndarray) -> Segment:
    """Avro float: 4 bytes little-endian; works on any shape."""
    arr = np.ascontiguousarray(np.asarray(values, dtype="<f4"))
    return arr.view(np.uint8).reshape(*arr.shape, 4), np.full(arr.shape, 4, dtype=np.int64)


def nullable(segment: Segment, is_null: np.ndarray) -> list[Segment]:
    """Avro ``["null", T]``: the branch (zig-zag 0 for null, 1 for T), then T's bytes, which a null lacks.

    Two segments rather than one matrix: the caller concatenates all segments once anyway."""
    m, lengths = segment
    branch = np.where(is_null, 0, 2).astype(np.uint8)[..., None]
    return [(branch, np.ones(is_null.shape, dtype=np.int64)), (m, np.where(is_null, 0, lengths))]


def column(values: np.ndarray, field: Field) -> list[Segment]:
    """One column as its field is written (see ``Field``): one segment, two for a nullable field; any shape."""
    if field.is_float:
        seg = float32(values)
        return nullable(seg, np.isnan(values)) if field.nullable else [seg]
    if not field.nullable:
        return [varint(values)]
    is_null = values == NULL_INT
    return nullable(varint(np.where(is_null, 0, values)), is_null)


def constant(raw: bytes, n: int) -> Segment:
    data = np.frombuffer(raw, dtype=np.uint8)
    return np.broadcast_to(data, (n, len(raw))), np.full(n, len(raw), dtype=np.int64)


def strings(encoded: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Byte strings padded into a matrix (used once per host for its constant parts)."""
    width = max((len(s) for s in encoded), default=0) or 1
    out = np.zeros((len(encoded), width), dtype=np.uint8)
    lengths = np.array([len(s) for s in encoded], dtype=np.int64)
    for i, s in enumerate(encoded):
        out[i, : len(s)] = np.frombuffer(s, dtype=np.uint8)
    return out, lengths


def avro_string(text: str) -> bytes:
    raw = text.encode()
    return _varint_bytes(len(raw)) + raw


def _varint_bytes(value: int) -> bytes:
    z = (value << 1) ^ (value >> 63)
    out = bytearray()
    while True:
        byte = z & 0x7F
        z >>= 7
        if z:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def decimal(values: np.ndarray) -> Segment:
    """Non-negative integers as ASCII decimal digits."""
    x = np.asarray(values, dtype=np.int64)
    digits = np.maximum(1, np.floor(np.log10(np.maximum(x, 1))).astype(np.int64) + 1)
    # exact fix-up of float log10 at powers of ten
    digits += (x >= 10 ** np.minimum(digits, 18)).astype(np.int64)
    width = int(digits.max()) if len(digits) else 1
    pos = digits[:, None] - 1 - np.arange(width)[None, :]  # power of ten for each output column
    out = (x[:, None] // (10 ** np.maximum(pos, 0)) % 10 + ord("0")).astype(np.uint8)
    return out, digits


def _mask(segment: Segment) -> np.ndarray:
    m, lengths = segment
    return np.arange(m.shape[-1]) < lengths[..., None]


def items(segments: list[Segment]) -> tuple[np.ndarray, np.ndarray]:
    """Array items: segments shaped (n, units, w) → one (n, units·W) matrix and its mask."""
    matrix = np.concatenate(
        [np.broadcast_to(m, (*lengths.shape, m.shape[-1])) for m, lengths in segments], axis=2
    )
    mask = np.concatenate([_mask(seg) for seg in segments], axis=2)
    n = matrix.shape[0]
    return matrix.reshape(n, -1), mask.reshape(n, -1)


def assemble(
    segments: list[Segment], blocks: Sequence[tuple[int, tuple[np.ndarray, np.ndarray]]] = ()
) -> list[bytes]:
    """Concatenate each row's segments into one bytes object per row.

    ``blocks`` inserts pre-masked (matrix, mask) pairs after the segment with the given index.
    """
    matrices: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    after = dict(blocks)
    for i, seg in enumerate(segments):
        matrices.append(seg[0])
        masks.append(_mask(seg))
        if i in after:
            matrices.append(after[i][0])
            masks.append(after[i][1])
    matrix = np.concatenate(matrices, axis=1)
    mask = np.concatenate(masks, axis=1)
    flat = matrix[mask].tobytes()
    ends = np.cumsum(mask.sum(axis=1)).tolist()
    starts = [0, *ends[:-1]]
    return [flat[s:e] for s, e in zip(starts, ends, strict=True)]


HEADER = struct.Struct(">bI")

PAYLOAD_ORDER = ("interval_s", "job_id", "step_time_ms", "bus_bw_gbps", "gpus", "nics")


class SampleEncoder:
    """Encodes SampleBatch columns for one fleet and run (per-host constant bytes precomputed)."""

    def __init__(
        self,
        *,
        host_ids: list[str],
        clusters: list[str],
        job_ids: list[str],
        run_id: str,
        schema_id: int,
        schema_version: int,
        scalar_fields: dict[str, Field],
        gpu_fields: dict[str, Field],
        nic_fields: dict[str, Field],
    ) -> None:
        """``job_ids``: every job a sample may name; ``scalar_fields``: ``step_time_ms`` and ``bus_bw_gbps``;
        ``gpu_fields`` / ``nic_fields``: item field name → how it is written, in schema order."""
        self.header = HEADER.pack(0, schema_id)
        self.prefix = strings([f"{run_id}-{h}-".encode() for h in host_ids])
        ident = avro_string("HostSampled") + _varint_bytes(schema_version)
        self.ident = strings(
            [ident + avro_string(h) + avro_string(c) for h, c in zip(host_ids, clusters, strict=True)]
        )
        self.job = strings([b"\x00"] + [b"\x02" + avro_string(j) for j in job_ids])  # 0: null (idle)
        self.scalar_fields = scalar_fields
        self.gpu_fields = gpu_fields
        self.nic_fields = nic_fields

    def encode(
        self,
        hosts: np.ndarray,
        seq: np.ndarray,
        ts: np.ndarray,
        interval_s: int,
        columns: dict[str, np.ndarray],
    ) -> list[bytes]:
        n = len(hosts)
        if n == 0:
            return []
        digits = decimal(seq)
        prefix = (self.prefix[0][hosts], self.prefix[1][hosts])
        segments: list[Segment] = [
            constant(self.header, n),
            varint(prefix[1] + digits[1]),
            prefix,
            digits,
            (self.ident[0][hosts], self.ident[1][hosts]),
            varint(ts),
            varint(seq),
            varint(np.full(n, interval_s)),
            (self.job[0][columns["job"] + 1], self.job[1][columns["job"] + 1]),
            *(seg for f, how in self.scalar_fields.items() for seg in column(columns[f], how)),
        ]
        blocks = []
        for fields in (self.gpu_fields, self.nic_fields):
            units = columns[next(iter(fields))].shape[1]
            segments.append(varint(np.full(n, units)))
            block = items([seg for f, how in fields.items() for seg in column(columns[f], how)])
            blocks.append((len(segments) - 1, block))
            segments.append(constant(b"\x00", n))
        return assemble(segments, blocks)
