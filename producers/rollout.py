"""Changes rolled through the simulated fleet: when each host gets a version, and what a bad one does to it.

A rollout (``RolloutSpec``) applies its version to the fleet's domains in name order, ``domains_per_day``
of them a day. From ``delay_s`` after a host has it, a bad version (``ChangeSpec``) adds faults of each
class it raises at ``rate_factor - 1`` times the class's base rate (the config's interruption rate and
mix), so the host's rate is ``rate_factor`` times the old one, and slows the host's steps by
``slowdown_pct``. The added faults are ordinary schedule rows of phase ``change``: the event builder
sends them and the truth lists them, next to which version is bad (``changes_truth``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from producers.changes import KIND_CLASS, ChangeSpec, RolloutSpec
from producers.config import FleetConfig
from producers.fleet import Fleet
from producers.randomness import Purpose, stream
from producers.schedule import Schedule

DAY_MS = 86_400_000
NEVER = np.iinfo(np.int64).max
LINK_KINDS = frozenset({"link_down", "link_flap", "nic"})


@dataclass(frozen=True)
class Applied:
    """Every host's turn in the rollouts: host index, when it got the version, which one."""

    host: np.ndarray  # int64
    ts: np.ndarray  # int64 ms
    rollout: np.ndarray  # int64: index into VersionsSpec.rollouts
    until: np.ndarray  # int64 ms: when a later rollout of the component replaced it (NEVER if none)

    def __len__(self) -> int:
        return len(self.host)


def applied(fleet: Fleet) -> Applied:
    """When each host gets each rollout's version (hosts of a domain at once), in time order."""
    hosts, times, which = [], [], []
    domain = np.asarray(fleet.domain, dtype=object)
    for r, spec in enumerate(fleet.config.versions.rollouts):
        names = sorted(set(fleet.domain))[: spec.domains]
        for i, name in enumerate(names):
            at = fleet.start_ts + round((spec.start_day + i / spec.domains_per_day) * DAY_MS)
            if at > fleet.end_ts:
                break
            members = np.flatnonzero(domain == name)
            hosts += members.tolist()
            times += [max(at, int(fleet.install_ts[h]) + 1) for h in members.tolist()]
            which += [r] * len(members)
    order = np.argsort(np.asarray(times, dtype=np.int64), kind="stable")
    host = np.asarray(hosts, dtype=np.int64)[order]
    ts = np.asarray(times, dtype=np.int64)[order]
    rollout = np.asarray(which, dtype=np.int64)[order]
    until = np.full(len(host), NEVER, dtype=np.int64)
    last: dict[tuple[int, str], int] = {}
    for j in range(len(host)):
        key = (int(host[j]), fleet.config.versions.rollouts[int(rollout[j])].component)
        if key in last:
            until[last[key]] = ts[j]
        last[key] = j
    return Applied(host, ts, rollout, until)


def versions_at(fleet: Fleet, turns: Applied, host: int, t: int) -> dict[str, str]:
    """The host's versions at ``t``: the baseline, changed by every rollout it had by then."""
    out = dict(fleet.config.versions.baseline)
    for j in np.flatnonzero((turns.host == host) & (turns.ts <= t)).tolist():
        spec = fleet.config.versions.rollouts[int(turns.rollout[j])]
        out[spec.component] = spec.version
    return out


def kind_rates(config: FleetConfig) -> dict[str, float]:
    """Each fault kind's base rate per host-day (the interruption rate split by cause mix and kinds)."""
    f = config.failures
    total = sum(f.cause_mix.values())
    out: dict[str, float] = {}
    for cause, share in f.cause_mix.items():
        kinds = f.cause_kinds.get(cause, {cause: 1.0})
        weight = sum(kinds.values())
        for kind, w in kinds.items():
            rate = f.interruptions_per_gpu_day * config.gpus_per_host * share / total * w / weight
            out[kind] = out.get(kind, 0.0) + rate
    return out


def change_of(fleet: Fleet, rollout: int) -> ChangeSpec | None:
    spec: RolloutSpec = fleet.config.versions.rollouts[rollout]
    return fleet.config.versions.change(spec.component, spec.version)


def change_schedule(fleet: Fleet, turns: Applied | None = None) -> Schedule:
    """The faults bad versions add to the hosts running them, from their delay to the run's end."""
    turns = applied(fleet) if turns is None else turns
    rates = kind_rates(fleet.config)
    cols: dict[str, list[object]] = {k: [] for k in ("ts", "host", "gpu", "port", "kind", "cause", "phase")}
    for j in range(len(turns)):
        r, h = int(turns.rollout[j]), int(turns.host[j])
        change = change_of(fleet, r)
        if change is None:
            continue
        since, until = int(turns.ts[j]) + round(change.delay_s * 1000), min(int(turns.until[j]), fleet.end_ts)
        days = (until - since) / DAY_MS
        if days <= 0:
            continue
        rng = stream(fleet.seed, Purpose.CHANGES, h, r)
        for kind, rate in sorted(rates.items()):
            factor = change.rate_factor.get(KIND_CLASS.get(kind, "other"), 1.0)  # type: ignore[call-overload]
            for _ in range(int(rng.poisson(max(0.0, factor - 1.0) * rate * days))):
                cols["ts"].append(since + int(rng.uniform(0, until - since)))
                cols["host"].append(h)
                link = kind in LINK_KINDS
                cols["gpu"].append(-1 if link else int(rng.integers(fleet.config.gpus_per_host)))
                cols["port"].append(int(rng.integers(fleet.config.nic_ports)) if link else -1)
                cols["kind"].append(kind)
                cols["cause"].append(f"change:{change.component}={change.version}")
                cols["phase"].append("change")
    n = len(cols["ts"])
    return Schedule.from_columns({**cols, "aux1": [0] * n, "aux2": [0] * n}).sorted()  # type: ignore[dict-item]


def slowdowns(fleet: Fleet, turns: Applied, t: int, hosts: np.ndarray) -> np.ndarray:
    """The fraction each of ``hosts`` is slowed by at ``t`` by the versions it runs (0: not at all)."""
    out = np.zeros(len(hosts))
    if not len(turns):
        return out
    position = {int(h): i for i, h in enumerate(hosts.tolist())}
    for j in np.flatnonzero((turns.ts <= t) & (turns.until > t)).tolist():
        i = position.get(int(turns.host[j]))
        change = change_of(fleet, int(turns.rollout[j]))
        if i is not None and change is not None and t >= int(turns.ts[j]) + change.delay_s * 1000:
            out[i] = max(out[i], change.slowdown_pct / 100.0)
    return out


def rollout_truth(fleet: Fleet, turns: Applied) -> list[dict[str, object]]:
    """Per rollout: its version, whether it is bad, how many hosts got it and when (the run's manifest)."""
    out: list[dict[str, object]] = []
    for r, spec in enumerate(fleet.config.versions.rollouts):
        mine = turns.ts[turns.rollout == r]
        change = change_of(fleet, r)
        out.append(
            {
                "component": spec.component,
                "version": spec.version,
                "verdict": "bad" if change is not None and change.bad else "good",
                "hosts": int(len(mine)),
                "first_ts": int(mine.min()) if len(mine) else None,
                "last_ts": int(mine.max()) if len(mine) else None,
            }
        )
    return out
