"""Hardware errors per host-day and fault class, forwarded from the live worker to the rollout safety test.

A bad driver shows first as more errors; a finding needs several of them, so findings alone see it
late. Each classified error on a host in an open campaign's scope counts toward its host's (UTC day,
fault class), up to ``trains.errors_per_host_day`` (one fault that bursts a hundred XIDs weighs as a
few, not a hundred), as an ``errors_counted`` action on ``fleet.actions``: every worker folds it
(``Trains.on_action``) into a fault of the sequential test, upgraded or not as the host was then.
Its id is (host, class, day, n): an error read again after a restart adds nothing the log holds.
"""

from __future__ import annotations

from collections.abc import Callable

from streams.core.actions import Action
from streams.core.classify import Signal
from streams.core.fleet.lifecycle import FleetState
from streams.core.ids import action_id
from streams.core.policy import Policy
from streams.trains.campaign import CHANGE, ERRORS_COUNTED, day_key
from streams.trains.safety import DAY_MS, ERRORS_RULE


class ErrorDays:
    """Turns classified errors into ``errors_counted`` actions (pure: the caller publishes them)."""

    def __init__(self, policy: Policy, domain_of: Callable[[str], str]) -> None:
        self.cap = policy.trains.errors_per_host_day
        self.fault_class = {e: c for c, errors in policy.trains.classes.items() for e in errors}
        self.domain_of = domain_of
        self._sent: dict[str, int] = {}  # day key -> errors counted by this worker (ahead of its fold)
        self._day = 0

    def observe(self, state: FleetState, signal: Signal) -> Action | None:
        """The action counting this error for the campaigns' safety test, or None (no campaign's scope
        holds the host, the class is not compared, or the host-day has its cap)."""
        host_id, cluster, ts, error_class = signal.host_id, signal.cluster, signal.ts, signal.error_class
        fault_class = self.fault_class.get(error_class)
        if fault_class is None or not state.trains.campaigns:
            return None
        domain = self.domain_of(host_id)
        if not any(c.compares(host_id, cluster, domain) for c in state.trains.campaigns.values()):
            return None
        day = ts // DAY_MS
        if day > self._day:  # a day past is not counted again: forget those before yesterday
            self._day = day
            self._sent = {k: n for k, n in self._sent.items() if int(k.rsplit("|", 1)[1]) >= day - 1}
        key = day_key(host_id, fault_class, day)
        n = max(self._sent.get(key, 0), state.trains.error_days.get(key, 0)) + 1
        if n > self.cap:
            return None
        self._sent[key] = n
        return Action(
            action_id=action_id(host_id, ERRORS_COUNTED, fault_class, f"{day}/{n}"),
            kind=ERRORS_COUNTED,
            host_id=host_id,
            cluster=cluster,
            domain=domain,
            operation=CHANGE,
            ts=ts,
            rule=ERRORS_RULE + fault_class,
            reason=f"{error_class}: error {n} of the host-day counted",
        )
