"""Evidence that accumulates over a host's windows: a Bernoulli CUSUM over its slow/not-slow verdicts.

A k-of-n count over a fixed cut forgets a host slow in one window of three: its slow windows rarely fall
close enough together. The CUSUM adds, per window, the log likelihood ratio of "slow in a share ``p1`` of its
windows" (a host that costs a synchronous job) against "slow in at most ``p0``" (a healthy host's rate of
spurious slow windows), floored at zero, and flags the host once the sum reaches ``h`` nats. Page's CUSUM
on a likelihood ratio has an in-control average run length of at least ``e**h`` windows (Lorden 1971), so
``h`` fixes the false-alarm rate of a host whose spurious rate is ``p0`` or less. Pure arithmetic: the
streaming fold (``streams.core.peers.scores.update_history``) that the worker, the backtest and the twin all run
calls it, and tests check the bound by simulation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class SequentialTest:
    """The CUSUM's two hypotheses (shares of slow windows) and its threshold in nats."""

    p0: float  # a healthy host's rate of slow windows, at most
    p1: float  # a slow host's rate of slow windows, at least
    h: float  # nats of evidence that flag the host
    # what a slow window adds, ln(p1 / p0), and what a window not slow adds (negative), ln((1 - p1) / (1 - p0)):
    # computed once, since ``step`` runs once per host and window
    up: float = field(init=False, repr=False, compare=False)
    down: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 0 < self.p0 < self.p1 < 1:
            raise ValueError(f"want 0 < p0 < p1 < 1, got p0={self.p0}, p1={self.p1}")
        if self.h <= 0:
            raise ValueError(f"the threshold h must be positive, got {self.h}")
        object.__setattr__(self, "up", math.log(self.p1 / self.p0))
        object.__setattr__(self, "down", math.log((1 - self.p1) / (1 - self.p0)))

    def step(self, s: float, slow: bool) -> float:
        """The statistic after one more window (never below zero)."""
        return max(0.0, s + (self.up if slow else self.down))

    def windows_to_flag(self) -> int:
        """Slow windows in a row that flag a host from zero evidence (the persistent host's time to detect)."""
        return math.ceil(self.h / self.up - 1e-12)

    def break_even(self) -> float:
        """The share of slow windows above which evidence grows on average (a host slower than this is flagged
        sooner or later; a healthy host must stay well under it)."""
        return -self.down / (self.up - self.down)

    def min_run_length(self) -> float:
        """Lorden's bound: the mean windows between false alarms of a host slow in ``p0`` of its windows."""
        return math.exp(self.h)

    def false_alarms_per_day_per_1000_hosts(self, window_ms: int) -> float:
        """The bound above as a fleet rate: at most this many false findings a day per 1,000 hosts."""
        return 1000 * (DAY_MS / window_ms) / self.min_run_length()


def evidence_since(start: int, length: int, n: int) -> int:
    """The earliest window start a host must have been judged at for its evidence to carry into the window
    at ``start`` (windows ``length`` long): a host away ``n`` windows comes back with it forgotten. The
    detector's verdict history (``streams.core.peers.scores.update_history``) and the batch view
    (``analytics.jobs.slow_view.slow_hosts``) both reset by it."""
    return start - (n - 1) * length


def episode_over(s: float, last_slow: int | None, end: int, length: int, clear_after: int) -> bool:
    """Whether a flagged host's episode is over at the window ending at ``end`` (windows ``length`` long): it
    has had no slow window for ``clear_after``, counted from the end of its last slow window (which starts at
    ``last_slow``; None: none in its history), and its evidence ``s`` has decayed to zero.

    Time alone is not enough when windows are long: at 6-hour windows one healthy window is ``clear_after``,
    and a host slow in alternate windows (never repaired) would be a new episode, paged again, every other
    window. Zero evidence means as many healthy windows as undo the evidence that flagged it (ln((1 - p1) /
    (1 - p0)) each: 44 from the packaged threshold), the same test in reverse whatever the window's length;
    at 5-minute windows that is 3.7 h, within ``clear_after``, so short windows end episodes as before.
    """
    quiet = last_slow is None or end - (last_slow + length) >= clear_after
    return quiet and s == 0.0
