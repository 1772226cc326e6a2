"""The thresholds the scorer judges detection by, read from a detection policy (the shipped one by default).

The policy file is the only place rule defaults live: scoring without a policy at hand scores with
``ground/policy.toml``'s rules, loaded once when first asked for.
"""

from __future__ import annotations

import functools
from typing import get_args

from fleetpulse.evaluation.rule_met import RepeatRule, ScopedRule, kinds_of
from producers.config import LemonKind
from streams.core.policy import Policy, load_policy

# The lemons the simulator plants, one fault kind each: the scorer's repeat rules are per lemon kind.
LEMON_KINDS: tuple[str, ...] = get_args(LemonKind)


def _lemon_rules(policy: Policy) -> dict[str, RepeatRule]:
    """Per lemon kind that has one: its loosest single-class repeat-offender rule."""
    rules: dict[str, RepeatRule] = {}
    for kind in LEMON_KINDS:
        own = [r for r in policy.rules if r.detector == "repeat_offender" and r.classes == [kind]]
        if own:
            best = min(own, key=lambda r: (r.count, -r.window))
            rules[kind] = RepeatRule((kind,), best.count, best.window)
    return rules


def rules_from_policy(policy: Policy) -> dict[str, RepeatRule]:
    """The lemon thresholds the detector is configured with: per kind, its loosest single-class rule.

    A kind the policy has no repeat-offender rule for keeps the shipped policy's.
    """
    return {**default_rules(), **_lemon_rules(policy)}


def met_rules_from_policy(policy: Policy) -> list[ScopedRule]:
    """Every repeat-offender rule of the policy on its own scope, in the simulator's fault kinds.

    Rules for events naming no component count only on hosts whose events name none (the truth's
    ``host_only``): see ``rule_met.rules_for``.
    """
    return [
        ScopedRule(kinds_of(r.classes), r.scope, r.count, r.window, r.component)
        for r in policy.rules
        if r.detector == "repeat_offender" and r.scope in ("gpu", "port", "host")
    ]


def critical_kinds_from_policy(policy: Policy) -> list[str]:
    """The fault classes the detector acts on at their first occurrence (its ``critical_fault`` rules)."""
    return sorted({c for r in policy.rules if r.detector == "critical_fault" for c in r.classes})


@functools.cache
def _shipped() -> Policy:
    return load_policy()


def default_rules() -> dict[str, RepeatRule]:
    """The shipped policy's lemon thresholds (a fresh dict: callers may change their copy)."""
    return _lemon_rules(_shipped())


def default_critical_kinds() -> tuple[str, ...]:
    return tuple(critical_kinds_from_policy(_shipped()))


def default_slow_k() -> int:
    return _shipped().slow_host.k
