"""Bounded planner state: what a worker forgets once a re-delivery of it can no longer come.

At OpsPlanner's scale (about a million maintenance operations a day) the ids of every action,
finding and outage record ever applied would grow without end. They are kept so that a re-delivered
record is a no-op, and a re-delivery comes from a worker's last commit or its snapshot's offset: a
few seconds of records back, never millions. So the newest ``keep_ids`` of each kind are kept, by
the order applied, not by event time (imported history arrives with old event times and must still
be deduplicated). Operations that closed keep no index entry; outages that ended ``ended_horizon_ms``
before the fleet's clock no longer count at any decision time the planner still meets.
"""

from __future__ import annotations

from itertools import islice

from streams.core.fleet.lifecycle import FleetState


def _keep_newest(ids: dict[str, None], keep: int) -> int:
    extra = len(ids) - keep
    if extra <= 0:
        return 0
    for key in list(islice(ids, extra)):
        del ids[key]
    return extra


def forget(state: FleetState, keep_ids: int, ended_horizon_ms: int) -> int:
    """Forget, in place, what no re-delivery or decision can need any more; how many entries went."""
    gone = _keep_newest(state.applied, keep_ids) + _keep_newest(state.findings, keep_ids)
    gone += _keep_newest(state.outages.applied, keep_ids)
    open_ops = {
        op.op_id
        for host in state.hosts.values()
        for op in ([host.current] if host.current is not None else []) + host.waiting
    }
    closed = [op_id for op_id in state.op_hosts if op_id not in open_ops]
    for op_id in closed:
        del state.op_hosts[op_id]
    gone += len(closed)
    cutoff = state.clock - ended_horizon_ms
    for host_id, outages in list(state.outages.by_host.items()):
        ended = [k for k, o in outages.items() if o.end_ts is not None and o.end_ts < cutoff]
        for key in ended:
            del outages[key]
        gone += len(ended)
        if not outages:
            del state.outages.by_host[host_id]
    state.outages.forget_index()  # rebuilt from the outages kept, at the next read
    return gone
