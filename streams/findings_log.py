"""The findings every worker has seen on ``fleet.findings``, newest kept, for the ``/findings`` endpoint.

Each worker raises only its partitions' findings; a tail of the whole topic gives every worker the
fleet's. Bounded (``MAX_KEPT``): the oldest are forgotten first; a re-delivered finding (same id) is
kept once.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from streams.core.findings import Finding

MAX_KEPT = 10_000


class FindingsLog:
    """Findings in the order they arrived, each with what the planner made of it (see ``view``)."""

    def __init__(self, max_kept: int = MAX_KEPT) -> None:
        self.max_kept = max_kept
        self._by_id: OrderedDict[str, Finding] = OrderedDict()

    def __len__(self) -> int:
        return len(self._by_id)

    def apply(self, record: Mapping[str, Any]) -> None:
        """Keep one decoded FindingRaised record (the tailer's ``on_record``)."""
        finding = Finding.from_record(record)
        if finding.finding_id in self._by_id:
            return
        self._by_id[finding.finding_id] = finding
        while len(self._by_id) > self.max_kept:
            self._by_id.popitem(last=False)

    def view(self, planned: Mapping[str, Any], *, host_id: str | None = None) -> list[dict[str, Any]]:
        """JSON-friendly findings, oldest first; ``planned``: ids the planner has acted on."""
        return [
            asdict(f) | {"evidence": dict(f.evidence), "planned": f.finding_id in planned}
            for f in self._by_id.values()
            if host_id is None or f.host_id == host_id
        ]
