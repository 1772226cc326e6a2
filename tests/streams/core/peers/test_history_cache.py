"""The cluster stage keeps its hosts' histories typed between windows only while the store still holds the very
value it wrote: a store whose ``C|hist`` was replaced (restored from a changelog, rolled back) is read again."""

from __future__ import annotations

from typing import Any

import msgspec

from streams.core.peers.messages import HostSummary
from streams.core.peers.stage import ClusterStage
from streams.core.policy import SlowHostPolicy
from streams.testing import START_TS

HOSTS = [f"h{n:02d}" for n in range(12)]


def _bundle(policy: SlowHostPolicy, window: int) -> list[HostSummary]:
    """Every host's summary of one window, h00 slow; read when the window after it began."""
    length = policy.window
    start = START_TS + window * length
    return [
        HostSummary(
            host, "c0", start, start + length, 1300.0 if host == "h00" else 1000.0 + n, 380.0, 5, start
        )
        for n, host in enumerate(HOSTS)
    ]


def _run(kept: bool) -> tuple[list[Any], dict[str, Any]]:
    """Windows 0-9 through one stage (``kept``) or a new stage per bundle; after window 6, ``C|hist`` is put back
    to what it was after window 2, as a value of its own (as a changelog restore reads it)."""
    policy = SlowHostPolicy()
    store: dict[str, Any] = {}
    stage = ClusterStage(policy)
    out: list[Any] = []
    early: bytes | None = None
    for window in range(10):
        stage = stage if kept else ClusterStage(policy)
        findings, verdicts, late = stage.add_bundle(store, "c0", _bundle(policy, window), str(window))
        out.append(([f.finding_id for f in findings], [(v.host_id, v.slow) for v in verdicts], late))
        if window == 2:
            early = msgspec.json.encode(store["c0|hist"])
        if window == 6:
            assert early is not None
            store["c0|hist"] = msgspec.json.decode(early)
    return out, store


def test_a_replaced_history_is_read_again() -> None:
    kept, kept_store = _run(kept=True)
    fresh, fresh_store = _run(kept=False)
    assert sum(len(found) for found, _, _ in fresh) >= 2  # h00 flagged, then again after the rollback
    assert kept == fresh
    assert kept_store == fresh_store
