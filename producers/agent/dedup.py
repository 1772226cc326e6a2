"""One XID seen by two sources (kernel log, NVML events, dcgm-exporter) is one event.

A report from one source is dropped when another source reported the same (GPU, XID) within the
window and that report was not matched yet; repeats from the same source are always kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from producers.agent.collector import Fact


@dataclass(slots=True)
class _Seen:
    ts: int
    source: str
    matched: bool = False


class XidDeduper:
    def __init__(self, window_ms: int) -> None:
        self.window_ms = window_ms
        self.recent: dict[tuple[int, int], list[_Seen]] = {}

    def keep(self, fact: Fact) -> bool:
        if fact.event_type != "XidRaised":
            return True
        key = (int(fact.payload["gpu"]), int(fact.payload["xid"]))
        seen = [e for e in self.recent.get(key, []) if e.ts > fact.ts - self.window_ms]
        self.recent[key] = seen
        for entry in seen:
            if (
                entry.source != fact.source
                and not entry.matched
                and abs(fact.ts - entry.ts) <= self.window_ms
            ):
                entry.matched = True
                return False
        seen.append(_Seen(fact.ts, fact.source))
        return True
