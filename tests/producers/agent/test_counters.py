from __future__ import annotations

from producers.agent.counters import CounterSet, counter_delta


def test_deltas_resets_and_wraps() -> None:
    assert counter_delta(None, 5) == (0, "first")
    assert counter_delta(5, 9) == (4, "ok")
    assert counter_delta(250, 3, bits=8) == (9, "wrapped")  # 250 → 255 → 0 → 3
    assert counter_delta(100, 3, bits=8) == (3, "reset")  # far from the top: a reset, never negative
    assert counter_delta(2**40, 7) == (7, "reset")  # 64-bit counters do not wrap in practice


def test_counter_set_state_round_trips() -> None:
    c = CounterSet()
    c.delta("a", 10)
    restored = CounterSet()
    restored.restore(c.state())
    assert restored.delta("a", 15).value == 5
