"""Column-wise Avro encoding of HostSampled batches (the hot path), byte-identical to fastavro.

Every field of every row becomes a fixed-width slot in one uint8 matrix with a validity mask
(varints are shorter than their slot); ``matrix[mask]`` is then the concatenation of all
records in order. A test checks the bytes against ``schemas.Codec`` on random batches.
"""

from __future__ import annotations

import struct

import numpy as np

Segment = tuple[np.ndarray, np.ndarray]  # (uint8 matrix n×w, lengths n)


def varint(values: np.ndarray) -> Segment:
    """Avro int/long: zig-zag then base-128 varint, one row per value."""
    x = np.asarray(values, dtype=np.int64)
    z = ((x << 1) ^ (x >> 63)).astype(np.uint64)
    bits = np.zeros(len(z), dtype=np.int64)
    nz = z > 0
    bits[nz] = np.floor(np.log2(z[nz].astype(np.float64))).astype(np.int64) + 1
    # float log2 can be off by one near powers of two for huge values: fix up exactly
    over = (bits < 64) & (bits > 0) & ((z >> np.minimum(bits, 63).astype(np.uint64)) > 0)
    bits[over] += 1
    under = (bits > 0) & ((z >> np.maximum(bits - 1, 0).astype(np.uint64)) == 0)
    bits[under] -= 1
    lengths = np.maximum(1, (bits + 6) // 7)
    width = int(lengths.max()) if len(lengths) else 1
    shifts = (7 * np.arange(width)).astype(np.uint64)
    chunks = ((z[:, None] >> shifts[None, :]) & np.uint64(0x7F)).astype(np.uint8)
    more = np.arange(width)[None, :] < (lengths[:, None] - 1)
    chunks[more] |= 0x80
    return chunks, lengths


def float32(values: np.ndarray) -> Segment:
    data = np.ascontiguousarray(np.asarray(values, dtype="<f4")).view(np.uint8).reshape(-1, 4)
    return data, np.full(len(data), 4, dtype=np.int64)


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


def assemble(segments: list[Segment]) -> list[bytes]:
    """Concatenate each row's segments into one bytes object per row."""
    n = len(segments[0][1])
    widths = [m.shape[1] for m, _ in segments]
    matrix = np.empty((n, sum(widths)), dtype=np.uint8)
    mask = np.empty((n, sum(widths)), dtype=bool)
    col = 0
    for (m, lengths), w in zip(segments, widths, strict=True):
        matrix[:, col : col + w] = m
        mask[:, col : col + w] = np.arange(w)[None, :] < lengths[:, None]
        col += w
    flat = matrix[mask].tobytes()
    ends = np.cumsum(mask.sum(axis=1)).tolist()
    starts = [0, *ends[:-1]]
    return [flat[s:e] for s, e in zip(starts, ends, strict=True)]


HEADER = struct.Struct(">bI")

PAYLOAD_ORDER = ("interval_s", "job_id", "step_time_ms", "bus_bw_gbps", "gpus", "nics")


class SampleEncoder:
    """Encodes SampleBatch columns for one fleet and run (per-host constant bytes precomputed)."""

    def __init__(self, *, host_ids: list[str], clusters: list[str], job_ids: list[str], run_id: str,
                 schema_id: int, gpu_fields: dict[str, bool], nic_fields: dict[str, bool]) -> None:  # fmt: skip
        """``gpu_fields`` / ``nic_fields``: item field name → is float, in schema order."""
        self.header = HEADER.pack(0, schema_id)
        self.prefix = strings([f"{run_id}-{h}-".encode() for h in host_ids])
        ident = avro_string("HostSampled") + _varint_bytes(1)
        self.ident = strings([ident + avro_string(h) + avro_string(c) for h, c in zip(host_ids, clusters, strict=True)])
        self.job = strings([b"\x02" + avro_string(j) for j in job_ids])
        self.gpu_fields = gpu_fields
        self.nic_fields = nic_fields

    def encode(
        self, hosts: np.ndarray, seq: np.ndarray, ts: np.ndarray, interval_s: int, columns: dict[str, np.ndarray]
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
            (self.job[0][hosts], self.job[1][hosts]),
            float32(columns["step_time_ms"]),
            float32(columns["bus_bw_gbps"]),
        ]
        for fields in (self.gpu_fields, self.nic_fields):
            units = columns[next(iter(fields))].shape[1]
            segments.append(varint(np.full(n, units)))
            for u in range(units):
                for name, is_float in fields.items():
                    col = columns[name][:, u]
                    segments.append(float32(col) if is_float else varint(col))
            segments.append(constant(b"\x00", n))
        return assemble(segments)
