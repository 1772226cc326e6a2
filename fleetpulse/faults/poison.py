"""Fuzzed poison records for the samples and errors topics, each with distinct bytes and a kind.

Pure and seeded: ``fuzz(templates, count, now_ms=..., seed=...)`` takes valid decoded records
of the normal stream as templates and returns poison of five kinds in equal shares:
bad framing, unknown schema id, wrong types (valid header, body that is not that schema),
absurd values (valid Avro, unbelievable content) and future timestamps (days ahead).
"""

from __future__ import annotations

import copy
import math
import random
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from schemas import Codec, topic_family

PoisonKind = Literal["bad_framing", "unknown_schema", "wrong_types", "absurd_value", "future_ts"]
KINDS: tuple[PoisonKind, ...] = ("bad_framing", "unknown_schema", "wrong_types", "absurd_value", "future_ts")
Family = Literal["samples", "errors"]
DAY_MS = 86_400_000
HEADER = struct.Struct(">bI")


@dataclass(frozen=True, slots=True)
class Poison:
    kind: PoisonKind
    family: Family
    key: bytes | None
    value: bytes


Mutator = Callable[[dict[str, Any], random.Random], str]


def _gpus(p: dict[str, Any]) -> list[dict[str, Any]]:
    return list(p.get("gpus") or [])


def _sample_mutators() -> list[Mutator]:
    def gpu_index(p: dict[str, Any], r: random.Random) -> str:
        _gpus(p)[0]["gpu"] = r.choice([999, 16, 4096, -1])
        return "gpu index out of range"

    def temp(p: dict[str, Any], r: random.Random) -> str:
        _gpus(p)[-1]["temp_c"] = r.choice([1e9, 5e3, math.nan, math.inf, -400.0])
        return "temperature"

    def power(p: dict[str, Any], r: random.Random) -> str:
        _gpus(p)[0]["power_w"] = r.choice([-5.0, 1e7, math.nan])
        return "power"

    def negative_counter(p: dict[str, Any], r: random.Random) -> str:
        g = r.choice(_gpus(p))
        g[r.choice(["ecc_sbe", "ecc_dbe", "retired_pages", "pcie_replay", "nvlink_errors"])] = -r.randint(
            1, 10**6
        )
        return "negative counter"

    def huge_counter(p: dict[str, Any], r: random.Random) -> str:
        r.choice(_gpus(p))["ecc_sbe"] = r.randint(10**8, 2**31 - 1)
        return "absurd counter"

    def step_time(p: dict[str, Any], r: random.Random) -> str:
        p["step_time_ms"] = r.choice([-1.0, 1e12, math.nan])
        return "step time"

    def interval(p: dict[str, Any], r: random.Random) -> str:
        p["interval_s"] = r.choice([0, -10, 10**9])
        return "interval"

    def nic(p: dict[str, Any], r: random.Random) -> str:
        nics = p.get("nics") or []
        if not nics:
            p["bus_bw_gbps"] = -1.0
            return "bus bandwidth"
        n = r.choice(nics)
        if r.random() < 0.5:
            n["port"] = r.choice([999, -2])
        else:
            n["symbol_errors"] = -r.randint(1, 10**9)
        return "nic"

    return [gpu_index, temp, power, negative_counter, huge_counter, step_time, interval, nic]


def _error_mutators(event_type: str) -> list[Mutator]:
    def gpu(p: dict[str, Any], r: random.Random) -> str:
        p["gpu"] = r.choice([999, 64, -3])
        return "gpu index out of range"

    def count(p: dict[str, Any], r: random.Random) -> str:
        p["count"] = r.choice([-1, -1000, 2**31 - 1])
        return "count"

    def vocab(field: str) -> Mutator:
        def mutate(p: dict[str, Any], r: random.Random) -> str:
            p[field] = r.choice(["plasma", "apocalyptic", "", "DRAM!"])
            return f"unknown {field}"

        return mutate

    def xid(p: dict[str, Any], r: random.Random) -> str:
        p["xid"] = -r.randint(1, 1000)
        return "negative xid"

    def port(p: dict[str, Any], r: random.Random) -> str:
        p["port"] = r.choice([999, -1, 4096])
        return "port out of range"

    def job_gpus(p: dict[str, Any], r: random.Random) -> str:
        p["job_gpus"] = -r.randint(1, 4096)
        return "negative job size"

    table: dict[str, list[Mutator]] = {
        "XidRaised": [gpu, xid],
        "EccErrorObserved": [gpu, count, vocab("memory")],
        "PcieAerReported": [vocab("severity")],
        "LinkEventObserved": [port, count, vocab("kind")],
        "JobInterrupted": [job_gpus],
    }
    return table.get(event_type, [])


def _mutators(event_type: str) -> list[Mutator]:
    return _sample_mutators() if event_type == "HostSampled" else _error_mutators(event_type)


class _Fuzzer:
    def __init__(self, templates: Sequence[Mapping[str, Any]], now_ms: int, seed: int, codec: Codec) -> None:
        self.rng = random.Random(seed)
        self.codec = codec
        self.now_ms = now_ms
        self.by_family: dict[Family, list[Mapping[str, Any]]] = {
            family: [
                t for t in templates if topic_family(t["event_type"]) == family and _mutators(t["event_type"])
            ]
            for family in ("samples", "errors")
        }
        if not all(self.by_family.values()):
            raise ValueError("fuzz needs templates of both HostSampled and error events")
        self.ids = {v.schema_id for s in codec.registry.subjects for v in codec.registry.versions(s)}
        self.serial = 0

    def _fresh(self, pool: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        record = copy.deepcopy(dict(self.rng.choice(pool)))
        self.serial += 1
        record["event_id"] = f"poison-{self.serial:06d}-{self.rng.getrandbits(32):08x}"
        return record

    def bad_framing(self, family: Family) -> tuple[bytes | None, bytes]:
        r = self.rng
        style = r.random()
        if style < 0.3:  # JSON where Avro was expected
            value = f'{{"host_id": "h{r.randint(0, 9999)}", "temp_c": {r.random() * 100:.6f}}}'.encode()
        elif style < 0.35:  # shorter than the 5-byte header
            value = bytes([0]) + r.randbytes(r.randint(0, 3))
        else:  # wrong magic byte
            value = bytes([r.randint(1, 255)]) + r.randbytes(r.randint(4, 80))
        return r.randbytes(8), value

    def unknown_schema(self, family: Family) -> tuple[bytes | None, bytes]:
        record = self._fresh(self.by_family[family])
        body = self.codec.encode(record)[HEADER.size :]
        schema_id = self.rng.randint(1, 2**31 - 1)
        while schema_id in self.ids:
            schema_id = self.rng.randint(1, 2**31 - 1)
        return record["host_id"].encode(), HEADER.pack(0, schema_id) + body

    def wrong_types(self, family: Family) -> tuple[bytes | None, bytes]:
        r = self.rng
        record = self._fresh(self.by_family[family])
        framed = self.codec.encode(record)
        header, body = framed[: HEADER.size], framed[HEADER.size :]
        style = r.random()
        if style < 0.4:  # valid header, garbage body
            value = header + r.randbytes(r.randint(1, 200))
        elif style < 0.7:  # the body of another event type under this header
            pool = [*self.by_family["samples"], *self.by_family["errors"]]
            others = [t for t in pool if t["event_type"] != record["event_type"]]
            other = self._fresh(others or pool)
            value = header + self.codec.encode(other)[HEADER.size :]
        else:  # a valid body cut short
            value = header + body[: r.randint(1, max(1, len(body) - 1))]
        return record["host_id"].encode(), value

    def absurd_value(self, family: Family) -> tuple[bytes | None, bytes]:
        record = self._fresh(self.by_family[family])
        mutate = self.rng.choice(_mutators(record["event_type"]))
        mutate(record["payload"], self.rng)
        return record["host_id"].encode(), self.codec.encode(record)

    def future_ts(self, family: Family) -> tuple[bytes | None, bytes]:
        record = self._fresh(self.by_family[family])
        record["ts"] = self.now_ms + self.rng.randint(2 * DAY_MS, 60 * DAY_MS)
        return record["host_id"].encode(), self.codec.encode(record)


def fuzz(
    templates: Sequence[Mapping[str, Any]],
    count: int,
    *,
    now_ms: int,
    seed: int = 0,
    codec: Codec | None = None,
) -> list[Poison]:
    """``count`` poison records with pairwise distinct values, kinds and topics in turn (equal shares)."""
    f = _Fuzzer(templates, now_ms, seed, codec or Codec())
    seen: set[bytes] = set()
    out: list[Poison] = []
    while len(out) < count:
        kind = KINDS[len(out) % len(KINDS)]
        family: Family = "samples" if (len(out) // len(KINDS)) % 2 == 0 else "errors"
        for _ in range(100):
            key, value = getattr(f, kind)(family)
            if value not in seen:
                break
        else:
            raise ValueError(f"could not make a distinct {kind} record")
        seen.add(value)
        out.append(Poison(kind, family, key, value))
    return out
