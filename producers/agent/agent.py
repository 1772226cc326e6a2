"""The agent loop: poll due collectors, turn facts and readings into events, spool them with the state.

Events are the simulator's: same types, payload shapes and ids (``<epoch>-<host>-<agent_seq>``, the
epoch drawn once per state folder like the simulator's run id). A round's events and the state that
produced them are handed to ``commit`` together, so a restart resumes exactly where the last round ended.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

from ground.settings.agent import AgentSettings
from producers.agent.assemble import SampleWindow
from producers.agent.bounded import bounded_fact, bounded_sample
from producers.agent.collector import Collector, Fact, Observation, Problems
from producers.agent.dedup import XidDeduper
from producers.agent.steptime import StepTimeServer
from producers.agent.units import Units
from schemas import EVENT_CLASSES
from schemas.bounds import cut_text

log = logging.getLogger(__name__)
Record = dict[str, Any]
Commit = Callable[[list[Record], dict[str, Any]], None]


class Agent:
    def __init__(
        self,
        settings: AgentSettings,
        host_id: str,
        collectors: list[Collector],
        units: Units,
        problems: Problems,
        commit: Commit,
        *,
        step_time: StepTimeServer | None = None,
        saved: dict[str, Any] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings, self.host_id, self.collectors = settings, host_id, collectors
        self.units, self.problems, self.commit, self.step_time, self.clock = (
            units,
            problems,
            commit,
            step_time,
            clock,
        )
        saved = saved or {}
        self.epoch: str = saved.get("epoch") or secrets.token_hex(4)
        self.seq: int = int(saved.get("seq", 0))
        self.inventory_fp: str | None = saved.get("inventory_fp")
        self.install_ts: int = int(saved.get("install_ts") or settings.install_ts or self.now_ms())
        self.next_sample_ms: int | None = saved.get("next_sample_ms")
        self.next_poll: dict[str, float] = {}
        for c in collectors:
            try:
                c.restore(saved.get("collectors", {}).get(c.name, {}))
            except (TypeError, ValueError, KeyError, AttributeError) as exc:
                problems.add("agent", "bad_saved_state", c.name, str(exc))
        self.window = SampleWindow()
        self.dedup = XidDeduper(int(settings.xid_dedup_s * 1000))
        self.inventory: dict[str, Any] = {}
        self.versions: dict[str, str | None] = {}
        self.versions_sent: dict[str, str | None] | None = None  # None: nothing reported since this start
        self.emitted = 0

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    def state(self) -> dict[str, Any]:
        return {
            "epoch": self.epoch,
            "seq": self.seq,
            "inventory_fp": self.inventory_fp,
            "install_ts": self.install_ts,
            "next_sample_ms": self.next_sample_ms,
            "collectors": {c.name: c.state() for c in self.collectors},
        }

    def _record(self, event_type: str, ts: int, payload: dict[str, Any]) -> Record:
        self.seq += 1
        return {
            "event_id": f"{self.epoch}-{self.host_id}-{self.seq}",
            "event_type": event_type,
            "schema_version": EVENT_CLASSES[event_type].SCHEMA_VERSION,
            "host_id": self.host_id,
            "cluster": self.settings.cluster,
            "ts": ts,
            "agent_seq": self.seq,
            "payload": payload,
        }

    def round(self, *, force: bool = False) -> list[Record]:
        """One pass: poll the collectors that are due (all with ``force``), emit, commit; the events."""
        now = self.clock()
        observations: list[Observation] = []
        for c in self.collectors:
            if force or now >= self.next_poll.get(c.name, 0.0):
                self.next_poll[c.name] = now + c.interval_s
                observations.append(self._poll(c))
        now_ms = self.now_ms()
        records: list[Record] = []
        for obs in observations:
            self.inventory.update(obs.inventory)
        inventory = self._inventory_payload()
        if inventory is not None:
            records.append(self._record("HostInventoried", now_ms, inventory))
        for obs in observations:
            self.versions.update(obs.versions)
        versions = self._versions_payload()
        if versions is not None:
            records.append(self._record("HostVersionsReported", now_ms, versions))
        facts: list[Fact] = sorted((f for o in observations for f in o.facts), key=lambda f: f.ts)
        for raw in facts:
            fact = bounded_fact(raw, now_ms)
            if isinstance(fact, str):  # refused alone: the round's other facts and the sample go on
                self.problems.add(raw.source, "out_of_bounds", raw.event_type, fact)
            elif self.dedup.keep(fact):
                records.append(self._record(fact.event_type, fact.ts, fact.payload))
        for obs in observations:
            self.window.add(obs)
        if self.step_time is not None:
            self.step_time.drain()
        if self.next_sample_ms is None:
            self.next_sample_ms = now_ms + self.settings.sample_interval_s * 1000
        if force or now_ms >= self.next_sample_ms:
            records.append(self._sample(now_ms))
        self.commit(records, self.state())
        self.emitted += len(records)
        return records

    def _poll(self, c: Collector) -> Observation:
        try:
            return c.collect(self.now_ms())
        except Exception as exc:  # a collector bug must not stop the others; counted, logged once
            self.problems.add(c.name, "collector_failed", type(exc).__name__, str(exc))
            log.debug("collector %s failed", c.name, exc_info=True)
            return Observation()

    def _sample(self, now_ms: int) -> Record:
        interval = self.settings.sample_interval_s
        self.next_sample_ms = now_ms + interval * 1000
        step_ms, job = self.step_time.window() if self.step_time is not None else (None, None)
        return self._record(
            "HostSampled", now_ms, bounded_sample(self.window.payload(interval, step_ms, job))
        )

    def _inventory_payload(self) -> dict[str, Any] | None:
        """The HostInventoried payload when the inventory changed since the last one sent, else None."""
        s, inv = self.settings, self.inventory
        payload = {
            "rack": s.rack,
            "fabric": s.fabric or inv.get("fabric") or "infiniband",
            "maintenance_domain": s.maintenance_domain,
            "sku": cut_text(s.sku or inv.get("sku") or "unknown", 128),
            "install_ts": self.install_ts,
            "gpu_count": len(self.units.gpu_by_bus),
            "nic_ports": len(inv.get("nics", [])),
        }
        detail = {k: inv.get(k) for k in ("gpu_serials", "nics", "driver_version")} | {
            "uuids": self.units.uuid_by_bus
        }
        fp = hashlib.sha256(json.dumps([payload, detail], sort_keys=True, default=str).encode()).hexdigest()[
            :16
        ]
        if fp == self.inventory_fp:
            return None
        self.inventory_fp = fp
        return payload

    def _versions_payload(self) -> dict[str, Any] | None:
        """The HostVersionsReported payload at this start and whenever a version changed, else None."""
        if not self.versions or self.versions == self.versions_sent:
            return None
        reason = "start" if self.versions_sent is None else "change"
        self.versions_sent = dict(self.versions)
        return {**self.versions, "reason": reason, "actor": "agent"}

    def run(self, stop: Callable[[], bool], sleep: Callable[[float], None] = time.sleep) -> None:
        """Rounds every ``tick_s`` until ``stop()``."""
        while not stop():
            started = self.clock()
            self.round()
            sleep(max(0.0, self.settings.tick_s - (self.clock() - started)))

    def close(self) -> None:
        for c in self.collectors:
            c.close()
        if self.step_time is not None:
            self.step_time.close()
