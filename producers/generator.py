"""The host agents, all at once: walk sim time tick by tick and emit each host's events.

Per tick every installed host reports the faults and noise of the interval (at their own
event times), then one HostSampled. ``agent_seq`` grows strictly per host; event ids are
``<run>-<host>-<seq>``. Optional late delivery holds some events back a bounded time.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from producers import signals
from producers.answer import Answer
from producers.batches import EventBatch, RecordBatch
from producers.changes import versions_payload
from producers.fleet import Fleet
from producers.jobs import job_timeline
from producers.randomness import Purpose, stream
from producers.rollout import applied, slowdowns, versions_at
from producers.sample_batch import SampleBatch, sample_encoder
from producers.samples import DEGRADED_SYMBOLS_PER_S, SampleModel, TickEffects
from producers.schedule import Schedule
from schemas.events import EVENT_CLASSES


def agent_record(
    run_id: str, host_id: str, cluster: str, seq: int, ts: int, event_type: str, payload: dict[str, Any]
) -> dict[str, Any]:
    """A simulated agent's record: the envelope (event id ``<run>-<host>-<seq>``) around its payload."""
    return {
        "event_id": f"{run_id}-{host_id}-{seq}",
        "event_type": event_type,
        "schema_version": EVENT_CLASSES[event_type].SCHEMA_VERSION,
        "host_id": host_id,
        "cluster": cluster,
        "ts": ts,
        "agent_seq": seq,
        "payload": payload,
    }


@dataclass(frozen=True)
class Tick:
    index: int
    ts: int  # end of the interval (ms); tick 0 is the start (inventory only)
    batches: list[EventBatch]


@dataclass(frozen=True)
class LateDelivery:
    """Transport noise: late events (bounded delay), lost samples, events delivered twice."""

    fraction: float = 0.0
    max_delay_s: float = 0.0
    dropout_fraction: float = 0.0  # HostSampled lost on the way (its agent_seq leaves a gap)
    duplicate_fraction: float = 0.0  # any event sent again (same event_id) in the same tick


class FleetAgents:
    """Deterministic event stream of a fleet over [start, end] given its fault and noise schedules."""

    def __init__(
        self,
        fleet: Fleet,
        faults: Schedule,
        noise: Schedule,
        *,
        run_id: str,
        interval_s: int,
        late: LateDelivery = LateDelivery(),
        initial_seq: np.ndarray | None = None,
        initial_remapped: np.ndarray | None = None,
        answer: Answer | None = None,
    ) -> None:
        """``initial_*``: the agents' state at the end of the run this one continues (None: fresh).

        ``answer``: closed loop, the fleet's answer to what was done to it (None: open loop).
        """
        if (fleet.end_ts - fleet.start_ts) % (interval_s * 1000):
            raise ValueError("the run must span a whole number of sample intervals")
        self.fleet, self.run_id, self.interval_s, self.late = fleet, run_id, interval_s, late
        self.answer = answer
        self.masked: set[tuple[int, int, str]] = set()  # (host, ts, kind) of faults not sent (closed loop)
        self.occ = Schedule.concat([faults, noise]).sorted()
        self._interrupts = self.occ.interrupts
        self.n_ticks = (fleet.end_ts - fleet.start_ts) // (interval_s * 1000)
        n, g = fleet.n_hosts, fleet.config.gpus_per_host
        self.seq = np.zeros(n, dtype=np.int64) if initial_seq is None else initial_seq.astype(np.int64).copy()
        self.remapped = (
            np.zeros((n, g), dtype=np.int64)
            if initial_remapped is None
            else initial_remapped.astype(np.int64).copy()
        )
        self.announce_existing = initial_seq is None  # a continuation's hosts already sent HostInventoried
        self.jobs = job_timeline(fleet)
        self.model = SampleModel(fleet, self.jobs)
        self.encoder = sample_encoder(fleet, run_id, self.jobs.ids)
        self.dropped = 0  # samples lost in transport
        self.duplicated = 0  # events delivered twice
        names = fleet.cluster_names
        self._cluster = [names[c] for c in fleet.cluster.tolist()]
        self._fabric = fleet.fabric
        self._slot = [i % fleet.config.hosts_per_rack for i in range(n)]
        self.turns = applied(fleet)  # each host's turn in the config's rollouts (producers.rollout)
        self.pending: dict[int, list[EventBatch]] = {}  # late events by the tick that delivers them

    def ticks(self) -> Iterator[Tick]:
        """Each tick's events; as one is yielded, ``held()`` is every later event at or before its time."""
        pending = self.pending
        for k in range(self.n_ticks + 1):
            batches = [b for b in self._tick(k) if len(b)]
            out: list[EventBatch] = []
            for i, b in enumerate(batches):
                on_time, held = self._split_late(k, self._transport(k, i, b))
                out.append(on_time)
                for release, part in held:
                    pending.setdefault(release, []).append(part)
            out += pending.pop(k, [])
            yield Tick(k, self.fleet.start_ts + k * self.interval_s * 1000, [b for b in out if len(b)])
        for k in sorted(pending):
            yield Tick(k, self.fleet.start_ts + k * self.interval_s * 1000, pending.pop(k))

    def held(self) -> list[EventBatch]:
        """The late events made but not yet yielded (every other later event is after the last tick)."""
        return [b for parts in self.pending.values() for b in parts]

    def _transport(self, k: int, part: int, batch: EventBatch) -> EventBatch:
        """Drop some samples, repeat some events (each right after itself, as a retrying agent would)."""
        d = self.late
        if d.dropout_fraction <= 0 and d.duplicate_fraction <= 0:
            return batch
        rng = stream(self.fleet.seed, Purpose.DELIVERY, *self.fleet.streams(k, part))
        n = len(batch)
        keep = np.ones(n, dtype=bool)
        if isinstance(batch, SampleBatch):
            keep = rng.uniform(size=n) >= d.dropout_fraction
        twice = keep & (rng.uniform(size=n) < d.duplicate_fraction)
        self.dropped += int(n - keep.sum())
        self.duplicated += int(twice.sum())
        index = np.flatnonzero(keep)
        return batch.take(np.repeat(index, 1 + twice[index].astype(np.int64)))

    def _split_late(self, k: int, batch: EventBatch) -> tuple[EventBatch, list[tuple[int, EventBatch]]]:
        if self.late.fraction <= 0 or self.late.max_delay_s <= 0:
            return batch, []
        rng = stream(self.fleet.seed, Purpose.LATE, *self.fleet.streams(k, len(batch)))
        late = rng.uniform(size=len(batch)) < self.late.fraction
        delay_ticks = np.ceil(
            rng.uniform(0, self.late.max_delay_s, size=len(batch)) / self.interval_s
        ).astype(int)
        delay_ticks = np.maximum(delay_ticks, 1)
        held = []
        for d in np.unique(delay_ticks[late]):
            held.append((k + int(d), batch.take(np.flatnonzero(late & (delay_ticks == d)))))
        return batch.take(np.flatnonzero(~late)), held

    # -- one tick ----------------------------------------------------------------------------

    def _tick(self, k: int) -> list[EventBatch]:
        f = self.fleet
        step = self.interval_s * 1000
        t = f.start_ts + k * step
        if k == 0:
            joined = (
                np.flatnonzero(f.install_ts <= t) if self.announce_existing else np.empty(0, dtype=np.int64)
            )
            return [self._records([e for h in joined for e in self._joined(int(h), t)])]
        lo_t = t - step
        joined = np.flatnonzero((f.install_ts > lo_t) & (f.install_ts <= t))
        events: list[tuple[int, int, str, dict[str, Any]]] = [
            e for h in joined for e in self._joined(int(h), int(f.install_ts[h]))
        ]
        if f.config.versions.report:  # a host that got a rollout's version reports it
            got = np.flatnonzero((self.turns.ts > lo_t) & (self.turns.ts <= t)).tolist()
            events += [
                (
                    int(self.turns.host[j]),
                    int(self.turns.ts[j]),
                    "HostVersionsReported",
                    self._changed(int(self.turns.host[j]), int(self.turns.ts[j])),
                )
                for j in got
            ]
        lo, hi = np.searchsorted(self.occ.ts, [lo_t, t], side="right")
        effects = TickEffects.zeros(f.n_hosts, f.config.gpus_per_host)
        for j in range(lo, hi):
            if self._masked(j):
                continue
            events += [
                (int(self.occ.host[j]), int(self.occ.ts[j]), et, p) for et, p in self._occurrence(j, effects)
            ]
        events.sort(key=lambda e: e[1])  # stable: inventory, then each occurrence's own order
        batches: list[EventBatch] = [self._records(events)]
        alive = np.flatnonzero(f.install_ts < t)
        if len(alive):
            self.seq[alive] += 1
            cols = self.model.columns(t, self.interval_s, alive, effects, self.remapped, k)
            if len(self.turns):  # a version that slows its hosts
                cols["step_time_ms"] = cols["step_time_ms"] * (1 + slowdowns(f, self.turns, t, alive))
            batches.append(
                SampleBatch(
                    fleet=f,
                    run_id=self.run_id,
                    hosts=alive,
                    seq=self.seq[alive].copy(),
                    ts=np.full(len(alive), t, dtype=np.int64),
                    interval_s=self.interval_s,
                    columns=cols,
                    job_names=self.jobs.ids,
                    encoder=self.encoder,
                )
            )
        return batches

    def _masked(self, j: int) -> bool:
        """Closed loop: a fault of a host out of service, or of a part a repair cured, is never sent."""
        o = self.occ
        if self.answer is None or o.phase[j] == "noise":
            return False
        h, ts = int(o.host[j]), int(o.ts[j])
        if not self.answer.faults_off(h, ts, o.phase[j] == "lemon"):
            return False
        self.masked.add((h, ts, str(o.kind[j])))
        return True

    def _records(self, events: list[tuple[int, int, str, dict[str, Any]]]) -> RecordBatch:
        out = []
        for host, ts, event_type, payload in events:
            self.seq[host] += 1
            seq = int(self.seq[host])
            host_id = self.fleet.host_id[host]
            out.append(agent_record(self.run_id, host_id, self._cluster[host], seq, ts, event_type, payload))
        return RecordBatch(out)

    def _joined(self, h: int, ts: int) -> list[tuple[int, int, str, dict[str, Any]]]:
        """What a host sends when it joins: its inventory, and its versions when the fleet reports them."""
        out = [(h, ts, *self._inventory(h))]
        if self.fleet.config.versions.report:
            out.append((h, ts, "HostVersionsReported", versions_payload(self.fleet.config.versions)))
        return out

    def _changed(self, h: int, ts: int) -> dict[str, Any]:
        return {
            **versions_payload(self.fleet.config.versions),
            **versions_at(self.fleet, self.turns, h, ts),
            "reason": "change",
        }

    def _inventory(self, h: int) -> tuple[str, dict[str, Any]]:
        f = self.fleet
        return "HostInventoried", {
            "rack": f.rack[h],
            "fabric": self._fabric[h],
            "maintenance_domain": f.domain[h],
            "sku": f.config.sku,
            "install_ts": int(f.install_ts[h]),
            "gpu_count": f.config.gpus_per_host,
            "nic_ports": f.config.nic_ports,
        }

    def _peer(self, h: int, port: int) -> str:
        return f"{self.fleet.rack[h]}-leaf:eth{self._slot[h] * self.fleet.config.nic_ports + port}"

    def _occurrence(self, j: int, fx: TickEffects) -> list[signals.Emitted]:
        o = self.occ
        h, gpu, port, kind = int(o.host[j]), int(o.gpu[j]), int(o.port[j]), str(o.kind[j])
        aux1, aux2 = int(o.aux1[j]), int(o.aux2[j])
        peer = self._peer(h, max(port, 0))
        if o.phase[j] == "noise":
            if kind == "ecc_ce":
                fx.ecc_sbe[h, gpu] += aux1
            elif kind == "flap":
                fx.carrier[h, port] += 1
            noise = signals.noise_events(kind, gpu, port, aux1, peer=peer)
            return signals.naming_only_the_host(noise) if self.fleet.host_only[h] else noise
        if kind == "dram_uce":
            fx.ecc_dbe[h, gpu] += aux1
            if aux2:
                self.remapped[h, gpu] += aux1
        elif kind == "sram_uce":
            fx.ecc_dbe[h, gpu] += 1
        elif kind == "nvlink":
            fx.nvlink[h, gpu] += 250
        elif kind == "fell_off_bus":
            fx.replay[h, gpu] += 120
        elif kind in ("link_down", "nic"):
            fx.link_downed[h, port] += 1
            fx.carrier[h, port] += 2
            if kind == "nic":
                fx.symbols[h, port] += int(DEGRADED_SYMBOLS_PER_S * min(self.interval_s, 3600))
        elif kind == "link_flap":
            fx.carrier[h, port] += max(aux1, 1)
        slot = int(self.fleet.job[h])
        run = int(self.jobs.latest(int(o.ts[j]))[slot])
        events = signals.fault_events(
            kind,
            str(o.cause[j]),
            gpu,
            port,
            aux1,
            aux2,
            job_id=self.jobs.ids[run] if run >= 0 else self.fleet.job_ids[slot],
            job_gpus=int(self.fleet.job_gpus[slot]),
            peer=peer,
            remapped_total=int(self.remapped[h, gpu]) if gpu >= 0 else 0,
            interrupts=bool(self._interrupts[j]),
        )
        return signals.naming_only_the_host(events) if self.fleet.host_only[h] else events


def ticks_for(duration_s: float, interval_s: int) -> int:
    """Whole sample intervals covering ``duration_s`` (at least one)."""
    return max(1, math.ceil(duration_s / interval_s))
