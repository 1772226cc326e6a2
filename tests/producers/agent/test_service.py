from __future__ import annotations

from pathlib import Path
from typing import Any

from ground.settings import Settings
from producers.agent.service import serve
from producers.agent.testing import FixtureHost
from schemas import Codec


class ListSink:
    """Acknowledges everything and keeps the values, like a broker that is always up."""

    def __init__(self, out: list[bytes]) -> None:
        self.out = out
        self.sent = self.acked = self.failed = 0

    def write(self, batch: Any) -> None:
        values = batch.encode(None)
        self.out += values
        self.sent += len(values)
        self.acked += len(values)

    def flush(self, timeout_s: float | None = None) -> None:
        return None

    def close(self) -> None:
        return None


def run(settings: Settings, out: list[bytes], rounds: int, before_round: Any = None) -> dict[str, Any]:
    seen = {"n": 0}

    def stop() -> bool:
        seen["n"] += 1
        if before_round is not None:
            before_round(seen["n"])
        return seen["n"] > rounds

    return serve(settings, stop, sink_factory=lambda: ListSink(out))


def test_serve_delivers_everything_and_a_restart_continues_the_sequence(
    host: FixtureHost, tmp_path: Path
) -> None:
    fast = {"interval_s": 0.01}
    agent = host.agent_settings(
        tmp_path / "state", tick_s=0.05, sample_interval_s=1, infiniband=fast, aer=fast
    )
    settings = Settings.load().model_copy(update={"agent": agent})
    out: list[bytes] = []
    first = run(settings, out, 3, lambda n: host.fall_off_bus(n % 8))
    assert first["spooled"] == 0 and first["delivered"] == first["emitted"]
    second = run(settings, out, 3, lambda n: host.flap(n % 8))
    assert second["spooled"] == 0
    codec = Codec()
    records = [codec.decode(v).record for v in out]
    assert [r["agent_seq"] for r in records] == list(range(1, len(records) + 1))
    assert len({r["event_id"] for r in records}) == len(records)
    types = [r["event_type"] for r in records]
    assert types.count("HostInventoried") == 1
    # the XID logged while the first run was stopping is read by the second; the last flap is after both
    assert types.count("XidRaised") == 4 and types.count("LinkEventObserved") == 3
