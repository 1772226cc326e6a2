"""The agent's side of the shared bounds (``schemas.bounds``): what a source reports is clamped or refused
per value, so one absurd reading never drops a whole sample and never reaches Kafka.

Facts (XIDs, ECC, AER, link events) with a time outside [2000-01-01, now + a day] or an XID, GPU or
port outside an int are refused, one at a time; counts are clamped into an int; texts lose control and
bidi characters and are cut. Sample values are clamped into their field's type.
"""

from __future__ import annotations

import math
from typing import Any

from producers.agent.collector import Fact
from schemas import BoundsError
from schemas.bounds import INT_MAX, LONG_MAX, check_int, check_ts, clamp, cut_text

MAX_FACT_TEXT = 512
_REFUSED_INTS = ("xid", "gpu", "port")  # identities: a wrong one would blame another unit
FLOAT32_MAX = 3.4028234663852886e38
# HostSampled fields that are Avro longs; every other integer field is an int
_LONG_FIELDS = frozenset({"symbol_errors", "throttle_reasons"})


def bounded_fact(fact: Fact, now_ms: int) -> Fact | str:
    """The fact within the bounds, or why it is refused."""
    try:
        check_ts(fact.ts, now_ms, what="event time")
        payload = dict(fact.payload)
        for key, value in payload.items():
            if isinstance(value, str):
                payload[key] = cut_text(value, MAX_FACT_TEXT)
            elif isinstance(value, bool) or value is None:
                continue
            elif key in _REFUSED_INTS:
                payload[key] = check_int(value, what=key)
                if value < 0:
                    raise BoundsError(f"{key} {value} is negative")
            elif isinstance(value, int):
                payload[key] = clamp(value, 0, INT_MAX)
    except BoundsError as exc:
        return str(exc)
    return fact._replace(payload=payload)


def _number(key: str, value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return clamp(value, 0, LONG_MAX if key in _LONG_FIELDS else INT_MAX)
    if isinstance(value, float):
        return 0.0 if math.isnan(value) else max(-FLOAT32_MAX, min(FLOAT32_MAX, value))
    if isinstance(value, str):  # job ids from a job's own file
        return cut_text(value, MAX_FACT_TEXT)
    return value


def bounded_sample(payload: dict[str, Any]) -> dict[str, Any]:
    """A HostSampled payload whose every number fits its field (one bad value never drops the sample)."""
    out = {k: _number(k, v) for k, v in payload.items() if k not in ("gpus", "nics")}
    out["gpus"] = [{k: _number(k, v) for k, v in g.items()} for g in payload.get("gpus", [])]
    out["nics"] = [{k: _number(k, v) for k, v in n.items()} for n in payload.get("nics", [])]
    return out
