"""Whether a finding joins its host's open operation instead of opening work (pure).

A host out for (or queued for) an operation has not been back in service since the finding that
opened it: a new finding on it is more evidence of the same incident, not a repair that did not
hold. It is absorbed (recorded, no page, no new work) when the open operation does at least what
it asks: the same operation, or a stronger one (an RMA covers a reboot, diagnostics or a part; a
NIC and a cable are different parts). Only a finding after the host returned is weighed for
escalation (``streams.core.planning.escalation``).
"""

from __future__ import annotations

from streams.core.fleet.lifecycle import FleetState, HostState, Operation
from streams.trains.campaign import CHANGE

# How much of a host each repair covers: an open operation absorbs what asks for less.
STRENGTH = {"reboot": 0, "diagnostics": 1, "nic_replacement": 2, "cable_replacement": 2, "rma": 3}


def covers(open_op: str, asked: str) -> bool:
    """``open_op`` does what ``asked`` would: the same operation, or a stronger repair."""
    if open_op == asked:
        return True
    if open_op not in STRENGTH or asked not in STRENGTH:
        return False  # a campaign's change repairs nothing
    return STRENGTH[open_op] > STRENGTH[asked]


def open_repairs(host: HostState | None) -> list[Operation]:
    """The host's open repairs, current first then queued (a campaign's change is not one)."""
    if host is None:
        return []
    ops = ([host.current] if host.current else []) + host.waiting
    return [op for op in ops if op.operation != CHANGE]


def absorbing(state: FleetState, host_id: str, asked: str) -> Operation | None:
    """The host's open operation that does what a finding asking ``asked`` would, if any."""
    return next((op for op in open_repairs(state.hosts.get(host_id)) if covers(op.operation, asked)), None)
