"""Semantic validation of decoded records: what Avro cannot check (clocks, ranges, NaN).

``check(record, limits, now_ms)`` raises ``InvalidRecordError`` with a short reason; the
agent then dead-letters the record and goes on. ``decode_checked`` is the one entry point
for raw Kafka values: decode, then check.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from schemas import FLEET, Codec, DecodeError
from schemas.bounds import ID_RULE, MAX_ID_CHARS, valid_id
from schemas.taxonomy import INCIDENT_CAUSES
from streams.core.errors import InvalidRecordError
from streams.core.policy import ValidationLimits

ECC_MEMORY = frozenset({"dram", "sram"})
AER_SEVERITY = frozenset({"correctable", "nonfatal", "fatal"})
LINK_KINDS = frozenset({"flap", "down", "up", "symbol_errors", "carrier_change", "nic_lost"})
GPU_COUNTERS = ("ecc_sbe", "ecc_dbe", "retired_pages", "pcie_replay", "nvlink_errors")
NIC_COUNTERS = ("symbol_errors", "link_downed", "carrier_changes")


def _bad(reason: str, record: Mapping[str, Any]) -> InvalidRecordError:
    host = record.get("host_id")
    host = host[:MAX_ID_CHARS] if isinstance(host, str) else None  # a forged id may be megabytes
    return InvalidRecordError(reason, host_id=host, event_type=record.get("event_type"))


def _finite(value: Any, low: float, high: float) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and low <= value <= high


def _gpu(record: Mapping[str, Any], gpu: Any, limits: ValidationLimits, *, nullable: bool = False) -> None:
    if gpu is None and nullable:
        return
    if not isinstance(gpu, int) or not 0 <= gpu <= limits.max_gpu_index:
        raise _bad(f"gpu_out_of_range: gpu={gpu!r} (0..{limits.max_gpu_index})", record)


def _count(record: Mapping[str, Any], name: str, value: Any, limits: ValidationLimits) -> None:
    if not isinstance(value, int) or value < 0:
        raise _bad(f"negative_count: {name}={value!r}", record)
    if value > limits.max_count:
        raise _bad(f"absurd_count: {name}={value!r} > {limits.max_count}", record)


@functools.lru_cache(maxsize=1 << 16)  # a fleet repeats its ids: checked once each, not per record
def envelope_id_ok(value: str) -> bool:
    return value == FLEET or valid_id(value)  # the rule every way in checks (schemas.bounds)


def _check_id(record: Mapping[str, Any], field: str) -> None:
    value = record.get(field)
    if not value:
        raise _bad(f"missing_{field}", record)
    if not isinstance(value, str) or not envelope_id_ok(value):
        shown = value[:40] if isinstance(value, str) else value
        raise _bad(f"malformed_{field}: {shown!r} ({ID_RULE})", record)


def check_envelope(record: Mapping[str, Any], limits: ValidationLimits, now_ms: int) -> None:
    ts = record.get("ts")
    if not isinstance(ts, int) or ts < limits.min_ts_ms:
        raise _bad(f"ts_absurd: ts={ts!r} is before {limits.min_ts_ms}", record)
    if ts > now_ms + limits.max_future:
        ahead_s = (ts - now_ms) / 1000
        raise _bad(f"ts_in_future: ts is {ahead_s:.0f} s ahead of the worker clock", record)
    _check_id(record, "host_id")
    if "cluster" in record:
        _check_id(record, "cluster")
    if record.get("agent_seq", 0) < 0:
        raise _bad(f"negative_agent_seq: {record.get('agent_seq')!r}", record)


def _check_sample(record: Mapping[str, Any], p: Mapping[str, Any], limits: ValidationLimits) -> None:
    if not 1 <= p["interval_s"] <= limits.max_interval_s:
        raise _bad(f"absurd_interval: interval_s={p['interval_s']!r}", record)
    if p["step_time_ms"] is not None and not _finite(p["step_time_ms"], 0.0, limits.max_step_time_ms):
        raise _bad(f"absurd_value: step_time_ms={p['step_time_ms']!r}", record)
    if not _finite(p["bus_bw_gbps"], 0.0, limits.max_bus_bw_gbps):
        raise _bad(f"absurd_value: bus_bw_gbps={p['bus_bw_gbps']!r}", record)
    for g in p["gpus"]:
        _gpu(record, g["gpu"], limits)
        if not _finite(g["temp_c"], -50.0, limits.max_temp_c):
            raise _bad(f"absurd_value: gpu {g['gpu']} temp_c={g['temp_c']!r}", record)
        if not _finite(g["power_w"], 0.0, limits.max_power_w):
            raise _bad(f"absurd_value: gpu {g['gpu']} power_w={g['power_w']!r}", record)
        if not _finite(g["util_pct"], 0.0, 100.0):
            raise _bad(f"absurd_value: gpu {g['gpu']} util_pct={g['util_pct']!r}", record)
        for name in GPU_COUNTERS:
            _count(record, name, g[name], limits)
    for nic in p["nics"]:
        if not 0 <= nic["port"] <= limits.max_port_index:
            raise _bad(f"port_out_of_range: port={nic['port']!r}", record)
        if not (
            _finite(nic["rx_gbps"], 0.0, limits.max_bus_bw_gbps)
            and _finite(nic["tx_gbps"], 0.0, limits.max_bus_bw_gbps)
        ):
            raise _bad(f"absurd_value: port {nic['port']} rx/tx", record)
        for name in NIC_COUNTERS:
            _count(record, name, nic[name], limits)


Bound = tuple[str, float, float]  # field, lowest and highest believable value


@dataclass(frozen=True, slots=True)
class SampleBounds:
    """The ranges a HostSampled payload's numbers must lie in (``_check_sample`` names which one failed).

    One table for every way a sample is checked: record by record here (``_sample_believable``) and over
    a batch's columns (the backtest's lake reader builds its column test from the same table).
    """

    top: tuple[Bound, ...]  # payload fields; ``step_time_ms`` may also be null (no job)
    gpus: tuple[Bound, ...]  # every item of ``gpus``
    nics: tuple[Bound, ...]  # every item of ``nics``
    nullable: frozenset[str] = frozenset({"step_time_ms"})


@functools.lru_cache(maxsize=8)
def sample_bounds(limits: ValidationLimits) -> SampleBounds:
    mc, mbw = limits.max_count, limits.max_bus_bw_gbps
    counts = tuple((name, 0, mc) for name in GPU_COUNTERS)
    return SampleBounds(
        top=(
            ("interval_s", 1, limits.max_interval_s),
            ("step_time_ms", 0.0, limits.max_step_time_ms),
            ("bus_bw_gbps", 0.0, mbw),
        ),
        gpus=(
            ("gpu", 0, limits.max_gpu_index),
            ("temp_c", -50.0, limits.max_temp_c),
            ("power_w", 0.0, limits.max_power_w),
            ("util_pct", 0.0, 100.0),
            *counts,
        ),
        nics=(
            ("port", 0, limits.max_port_index),
            ("rx_gbps", 0.0, mbw),
            ("tx_gbps", 0.0, mbw),
            *((name, 0, mc) for name in NIC_COUNTERS),
        ),
    )


def _sample_believable(p: Mapping[str, Any], limits: ValidationLimits) -> bool:
    """The hot path: True when every range check of ``_check_sample`` passes (``sample_bounds``).

    Values come typed by the Avro schema, and a chained comparison against finite bounds is
    already False for NaN and infinities, so no isinstance/isfinite calls are needed here;
    anything else (False, or a TypeError) sends the record through ``_check_sample``, which
    names the problem. Same verdicts, a fraction of the function calls (samples are most of
    a worker's input).
    """
    bounds = sample_bounds(limits)
    for name, low, high in bounds.top:
        value = p[name]
        if not ((value is None and name in bounds.nullable) or low <= value <= high):
            return False
    for items, table in ((p["gpus"], bounds.gpus), (p["nics"], bounds.nics)):
        for item in items:
            for name, low, high in table:
                if not low <= item[name] <= high:
                    return False
    return True


def check_payload(record: Mapping[str, Any], limits: ValidationLimits) -> None:
    """Per-event-type range and vocabulary checks."""
    event_type = record["event_type"]
    p = record["payload"]
    if event_type == "HostSampled":
        try:
            if _sample_believable(p, limits):
                return
        except TypeError:
            pass
        _check_sample(record, p, limits)
    elif event_type == "XidRaised":
        _gpu(record, p["gpu"], limits, nullable=True)
        if p["xid"] < 0:
            raise _bad(f"absurd_value: xid={p['xid']!r}", record)
    elif event_type == "EccErrorObserved":
        _gpu(record, p["gpu"], limits, nullable=True)
        if p["memory"] not in ECC_MEMORY:
            raise _bad(f"unknown_vocabulary: memory={p['memory']!r}", record)
        _count(record, "count", p["count"], limits)
        _count(record, "remapped_rows_total", p["remapped_rows_total"], limits)
    elif event_type == "PcieAerReported":
        _gpu(record, p["gpu"], limits, nullable=True)
        if p["severity"] not in AER_SEVERITY:
            raise _bad(f"unknown_vocabulary: severity={p['severity']!r}", record)
    elif event_type == "LinkEventObserved":
        if p["port"] is not None and not 0 <= p["port"] <= limits.max_port_index:
            raise _bad(f"port_out_of_range: port={p['port']!r}", record)
        if p["kind"] not in LINK_KINDS:
            raise _bad(f"unknown_vocabulary: kind={p['kind']!r}", record)
        _count(record, "count", p["count"], limits)
    elif event_type == "ComponentFaultObserved":
        if p["cause"] not in INCIDENT_CAUSES:
            raise _bad(f"unknown_vocabulary: cause={p['cause']!r}", record)
        _count(record, "count", p["count"], limits)
    elif event_type == "JobInterrupted":
        _gpu(record, p["gpu"], limits, nullable=True)
        _count(record, "job_gpus", p["job_gpus"], limits)
    elif event_type == "HostInventoried":
        if p["gpu_count"] < 0 or p["gpu_count"] > limits.max_gpu_index + 1:
            raise _bad(f"absurd_value: gpu_count={p['gpu_count']!r}", record)
        if not p["maintenance_domain"]:
            raise _bad("missing_maintenance_domain", record)


def check(record: Mapping[str, Any], limits: ValidationLimits, now_ms: int) -> None:
    """Raise InvalidRecordError if the record is not believable."""
    check_envelope(record, limits, now_ms)
    try:
        check_payload(record, limits)
    except (KeyError, TypeError) as exc:  # a field of the wrong shape: decoded, but not by our contract
        raise _bad(f"malformed_payload: {type(exc).__name__}: {exc}", record) from exc


def decode_checked(
    codec: Codec, value: bytes | None, limits: ValidationLimits, now_ms: int
) -> dict[str, Any]:
    """Decode a raw value and check it; raises ``DecodeError`` or ``InvalidRecordError`` (both dead-lettered)."""
    record = codec.decode(value).record  # type: ignore[arg-type]  # None fails to decode, with a reason
    check(record, limits, now_ms)
    return record


def reason_label(exc: DecodeError | InvalidRecordError) -> str:
    """A low-cardinality label for metrics and counts: the reason's first word."""
    if isinstance(exc, InvalidRecordError):
        return exc.reason.split(":", 1)[0]
    return type(exc).__name__
