"""Slow-host episodes: a host found again after its episode ended is a new finding, with its own id."""

from __future__ import annotations

from streams.core.findings import Finding
from streams.core.peers.scores import Verdict, update_history
from streams.core.policy import SlowHostPolicy
from streams.testing import START_TS

SIX_HOURS = 6 * 3_600_000  # a fast-forward lake's sample interval: windows as long as clear_after


def _verdict(window: int, slow: bool, length: int) -> Verdict:
    start = START_TS + window * length
    return Verdict("h1", start, start + length, 9.0 if slow else 0.0, 0.0, slow, 1100.0, 1000.0)


def _found(pattern: str, length: int, policy: SlowHostPolicy) -> list[Finding]:
    """The findings of one host whose windows are slow where ``pattern`` has an ``s``."""
    history, found = None, []
    for window, mark in enumerate(pattern):
        history, finding = update_history(history, _verdict(window, mark == "s", length), "c0", policy)
        found += [finding] if finding else []
    return found


def test_a_host_slow_again_after_its_episode_ended_is_a_new_finding_with_a_new_id() -> None:
    """With windows as long as ``clear_after`` one healthy window ends the episode while the evidence is still
    near the threshold: the next slow window finds the host again, and that finding names its own run."""
    policy = SlowHostPolicy()
    assert policy.clear_after == SIX_HOURS  # the policy these windows are drawn for
    found = _found("ss.s.ss", SIX_HOURS, policy)
    assert len(found) == 3
    assert len({f.finding_id for f in found}) == 3  # one episode, one id: no episode repeats another's
    assert [f.window_start for f in found] == [START_TS + w * SIX_HOURS for w in (0, 3, 5)]
    assert [f.count for f in found] == [2, 1, 1]  # the slow windows of its own run when it fired


def test_an_episode_still_running_is_found_once() -> None:
    """Slow windows closer than ``clear_after`` are one episode: one finding, however long it lasts."""
    policy = SlowHostPolicy()
    five_minutes = policy.window
    found = _found("ss" + ".s" * 30 + "sss", five_minutes, policy)
    assert len(found) == 1 and found[0].window_start == START_TS
