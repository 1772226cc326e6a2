"""A small deterministic fleet stream with known lemons, slow hosts, noise and poison records.

For tests, the benchmark and demos of the detectors without the full simulator: ``Scenario``
says what is true (which hosts are lemons or slow), ``records()`` yields (topic family, key,
value bytes) in event-time order, ready to produce.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from schemas import (
    Codec,
    EccErrorObserved,
    HostInventoried,
    HostSampled,
    LinkEventObserved,
    PcieAerReported,
    XidRaised,
)

START_TS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
MIN = 60_000


@dataclass(frozen=True)
class Scenario:
    hosts: int = 48
    clusters: int = 2
    domain_size: int = 8
    interval_s: int = 60
    duration_min: int = 120
    slow_hosts: tuple[int, ...] = (5, 30)
    slow_factor: float = 1.12
    slow_onset_min: int = 20
    dram_lemons: tuple[int, ...] = (3,)
    bus_lemons: tuple[int, ...] = (17,)
    flap_lemons: tuple[int, ...] = (40,)
    single_faults: tuple[int, ...] = (8, 22)  # one DRAM UCE each: not a repeat offender
    poison: int = 5
    seed: int = 11
    start_ts: int = START_TS
    _codec: Codec = field(default_factory=Codec, repr=False, compare=False)

    def host_id(self, i: int) -> str:
        return f"h{i:04d}"

    def cluster(self, i: int) -> str:
        return f"c{i % self.clusters}"

    def domain(self, i: int) -> str:
        return f"{self.cluster(i)}-md{(i // self.clusters) // self.domain_size}"

    @property
    def lemon_hosts(self) -> set[str]:
        return {self.host_id(i) for i in (*self.dram_lemons, *self.bus_lemons, *self.flap_lemons)}

    @property
    def slow_host_ids(self) -> set[str]:
        return {self.host_id(i) for i in self.slow_hosts}

    def _envelope(self, i: int, ts: int, seq: int) -> dict[str, Any]:
        return {
            "event_id": f"{self.host_id(i)}-{seq}",
            "host_id": self.host_id(i),
            "cluster": self.cluster(i),
            "ts": ts,
        }

    def inventory(self) -> list[dict[str, Any]]:
        return [
            HostInventoried(
                **self._envelope(i, self.start_ts, 0),
                agent_seq=0,
                payload={
                    "rack": f"r{i // 4}",
                    "fabric": "roce" if i % self.clusters == 0 else "infiniband",
                    "maintenance_domain": self.domain(i),
                    "sku": "H100-SXM5-80GB",
                    "install_ts": self.start_ts - 90 * 86_400_000,
                    "gpu_count": 8,
                    "nic_ports": 8,
                },
            ).to_record()
            for i in range(self.hosts)
        ]

    def _sample(self, rng: random.Random, i: int, ts: int, seq: int) -> dict[str, Any]:
        slow = i in self.slow_hosts and ts >= self.start_ts + self.slow_onset_min * MIN
        step = 1000.0 * (self.slow_factor if slow else 1.0) * (1 + rng.gauss(0, 0.01))
        bw = 380.0 / (self.slow_factor if slow else 1.0) * (1 + rng.gauss(0, 0.01))
        gpus = [
            {
                "gpu": g,
                "temp_c": 60.0,
                "power_w": 650.0,
                "sm_clock_mhz": 1980,
                "util_pct": 97.0,
                "ecc_sbe": 0,
                "ecc_dbe": 0,
                "retired_pages": 0,
                "pcie_replay": 0,
                "pcie_link_gen": 5,
                "pcie_link_width": 16,
                "nvlink_errors": 0,
                "pcie_link_gen_max": 5,
                "pcie_link_width_max": 16,
                "throttle_reasons": 0,
            }
            for g in range(8)
        ]
        nics = [
            {
                "port": p,
                "rx_gbps": 350.0,
                "tx_gbps": 350.0,
                "symbol_errors": 0,
                "link_downed": 0,
                "carrier_changes": 0,
            }
            for p in range(2)
        ]
        return HostSampled(
            **self._envelope(i, ts, seq),
            agent_seq=seq,
            payload={
                "interval_s": self.interval_s,
                "job_id": "job-1",
                "step_time_ms": step,
                "bus_bw_gbps": bw,
                "gpus": gpus,
                "nics": nics,
            },
        ).to_record()

    def _errors(self) -> list[dict[str, Any]]:
        """Lemon repeats, single faults and noise, as (ts-ordered) error records."""
        out: list[dict[str, Any]] = []
        seq = 10_000_000

        def add(cls: Any, i: int, minute: int, payload: dict[str, Any]) -> None:
            nonlocal seq
            seq += 1
            out.append(
                cls(
                    **self._envelope(i, self.start_ts + minute * MIN + 1, seq), agent_seq=seq, payload=payload
                ).to_record()
            )

        for i in self.dram_lemons:
            for minute in (15, 55):
                add(
                    EccErrorObserved,
                    i,
                    minute,
                    {"gpu": 2, "memory": "dram", "correctable": False, "count": 1},
                )
                add(XidRaised, i, minute, {"gpu": 2, "xid": 48, "pci_bus_id": "0000:1b:00.0"})
        for i in self.bus_lemons:
            for minute in (25, 70):
                add(XidRaised, i, minute, {"gpu": 5, "xid": 79, "pci_bus_id": "0000:9a:00.0"})
                add(
                    PcieAerReported,
                    i,
                    minute,
                    {
                        "gpu": 5,
                        "device": "0000:9a:00.0",
                        "severity": "fatal",
                        "error_type": "completion_timeout",
                    },
                )
        for i in self.flap_lemons:
            for minute in (10, 30, 50, 80):
                add(LinkEventObserved, i, minute, {"port": 1, "kind": "flap", "count": 1})
        for i in self.single_faults:
            add(EccErrorObserved, i, 40, {"gpu": 0, "memory": "dram", "correctable": False, "count": 1})
            add(XidRaised, i, 40, {"gpu": 0, "xid": 48, "pci_bus_id": "0000:1b:00.0"})
        for k, i in enumerate(range(0, self.hosts, 5)):  # noise on many hosts
            add(
                XidRaised,
                i,
                5 + k % 90,
                {"gpu": 1, "xid": [13, 31, 43, 45, 63, 92][k % 6], "pci_bus_id": "x"},
            )
            add(
                EccErrorObserved, i, 7 + k % 90, {"gpu": 3, "memory": "dram", "correctable": True, "count": 4}
            )
            add(
                PcieAerReported,
                i,
                9 + k % 90,
                {"gpu": 4, "device": "x", "severity": "correctable", "error_type": "receiver_error"},
            )
            add(LinkEventObserved, i, 11 + k % 90, {"port": 0, "kind": "flap", "count": 1})
        return out

    def poison_values(self) -> list[bytes]:
        """Undecodable or invalid records, one of each kind (cycled)."""
        bad_gpu = XidRaised(
            **self._envelope(1, self.start_ts, 1), payload={"gpu": 99, "xid": 79, "pci_bus_id": "x"}
        )
        future = XidRaised(
            **self._envelope(1, self.start_ts + 10 * 365 * 86_400_000, 2),
            payload={"gpu": 0, "xid": 79, "pci_bus_id": "x"},
        )
        negative = LinkEventObserved(
            **self._envelope(1, self.start_ts, 3), payload={"port": 0, "kind": "flap", "count": -4}
        )
        kinds = [b"not avro at all", b"\x00\x00\x00\x7f\xffgarbage"]
        kinds += [self._codec.encode(e.to_record()) for e in (bad_gpu, future, negative)]
        return [kinds[k % len(kinds)] for k in range(self.poison)]

    def records(self) -> Iterator[tuple[str, bytes, bytes]]:
        """(topic family, key, value) for everything, inventory first, then in event-time order."""
        enc = self._codec.encode
        for rec in self.inventory():
            yield "inventory", rec["host_id"].encode(), enc(rec)
        rng = random.Random(self.seed)
        timeline: list[tuple[int, int, str, dict[str, Any]]] = []
        steps = self.duration_min * 60 // self.interval_s
        for s in range(steps):
            ts = self.start_ts + s * self.interval_s * 1000
            for i in range(self.hosts):
                timeline.append((ts, 0, "samples", self._sample(rng, i, ts, s + 1)))
        timeline += [(r["ts"], 1, "errors", r) for r in self._errors()]
        timeline.sort(key=lambda t: (t[0], t[1], t[3]["host_id"]))
        poison = self.poison_values()
        every = max(1, len(timeline) // (len(poison) + 1))
        for n, (_, _, family, rec) in enumerate(timeline):
            if poison and n % every == every - 1:
                yield "errors", b"poison", poison.pop()
            yield family, rec["host_id"].encode(), enc(rec)
