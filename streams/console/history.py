"""A host's event history for its console page, newest first, from what a worker folds.

Findings raised on the host, its operations (suspected, started), its times out (incidents and
operators' steps) and returns, and the versions it reported: each a ``HistoryEvent``. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple


class HistoryEvent(NamedTuple):
    ts: int
    kind: str
    detail: str


def _operations(host: Mapping[str, Any] | None) -> Iterable[HistoryEvent]:
    if host is None:
        return
    ops = ([host["current"]] if host.get("current") else []) + list(host.get("waiting") or [])
    for op in ops:
        yield HistoryEvent(
            op["suspected_ts"], "suspected", f"{op['operation']} for {op['finding_id']} ({op['phase']})"
        )
        if op.get("started_ts") is not None:
            yield HistoryEvent(op["started_ts"], "operation started", f"{op['operation']} ({op['op_id']})")


def host_history(
    host: Mapping[str, Any] | None,
    findings: Iterable[Mapping[str, Any]],
    outages: Iterable[Mapping[str, Any]],
    repairs: Iterable[tuple[int, str]],
    versions: Mapping[str, Mapping[str, Any]],
) -> list[HistoryEvent]:
    """Every event known for one host, newest first (ties in a stable order).

    ``host``: its ``describe_host`` view or None; ``outages``: its outages as dicts (``streams.core.fleet.outages``);
    ``repairs``: (returned ts, operation); ``versions``: component -> {version, reported_ts}.
    """
    events = list(_operations(host))
    for f in findings:
        events.append(
            HistoryEvent(
                f["ts"],
                "finding",
                f"{f['detector']}/{f['rule']} on {f['scope_key']}: {f['error_class']} x{f['count']}",
            )
        )
    for o in outages:
        why = f"{o['source']}: {o.get('cause') or 'no cause given'}"
        events.append(HistoryEvent(o["start_ts"], "out of service", why))
        if o.get("end_ts") is not None:
            events.append(HistoryEvent(o["end_ts"], "back in service", why))
    events += [HistoryEvent(ts, "returned to service", f"from {op}") for ts, op in repairs]
    events += [
        HistoryEvent(v["reported_ts"], "version reported", f"{c}={v['version']}") for c, v in versions.items()
    ]
    return sorted(events, key=lambda e: (-e.ts, e.kind, e.detail))
