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
    """At windows as long as ``clear_after`` the episode ends once the evidence has decayed to zero (44
    healthy windows from the threshold, 11 days at 6 hours): the next slowdown is a new finding naming its own
    run; one healthy window fewer and it is still the first episode."""
    policy = SlowHostPolicy()
    assert policy.clear_after == SIX_HOURS  # the policy these windows are drawn for
    found = _found("ss" + "." * 44 + "ss", SIX_HOURS, policy)
    assert len(found) == 2 and found[0].finding_id != found[1].finding_id
    assert [f.window_start for f in found] == [START_TS, START_TS + 46 * SIX_HOURS]
    assert [f.count for f in found] == [2, 2]  # the slow windows of its own run when it fired
    assert len(_found("ss" + "." * 43 + "ss", SIX_HOURS, policy)) == 1


def test_a_host_slow_in_alternate_long_windows_is_one_episode() -> None:
    """One healthy 6-hour window is ``clear_after`` of time but no evidence of health: a host slow in every
    other window, never repaired, is one episode, found once (it used to be found again every other window)."""
    policy = SlowHostPolicy()
    assert len(_found("ss" + ".s" * 40, SIX_HOURS, policy)) == 1
    assert len(_found("ss" + "..s" * 30, SIX_HOURS, policy)) == 1


def test_at_five_minute_windows_an_episode_ends_after_clear_after_without_a_slow_window() -> None:
    """Short windows end episodes as before: ``clear_after`` (6 h) after the last slow window ended, the
    evidence long since at zero (3.7 h)."""
    policy = SlowHostPolicy()
    five_minutes = policy.window
    healthy = policy.clear_after // five_minutes  # 72 windows
    assert len(_found("ss" + "." * healthy + "ss", five_minutes, policy)) == 2
    assert len(_found("ss" + "." * (healthy - 1) + "ss", five_minutes, policy)) == 1


def test_an_episode_still_running_is_found_once() -> None:
    """Slow windows closer than ``clear_after`` are one episode: one finding, however long it lasts."""
    policy = SlowHostPolicy()
    five_minutes = policy.window
    found = _found("ss" + ".s" * 30 + "sss", five_minutes, policy)
    assert len(found) == 1 and found[0].window_start == START_TS
