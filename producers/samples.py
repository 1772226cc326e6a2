"""HostSampled payloads for a whole tick at once: numpy columns over (hosts × GPUs/ports).

This is the simulator's hot path (6,144 hosts per tick at Meta scale), so nothing here loops
over hosts in Python. Slow hosts show their cause's symptoms while they are slow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from producers.avro_columns import PAYLOAD_ORDER, SampleEncoder
from producers.batches import cached_schema
from producers.fleet import Fleet
from producers.randomness import Purpose, stream
from schemas import Codec

GPU_FIELDS = ("gpu", "temp_c", "power_w", "sm_clock_mhz", "util_pct", "ecc_sbe", "ecc_dbe", "retired_pages",
              "pcie_replay", "pcie_link_gen", "pcie_link_width", "nvlink_errors")  # fmt: skip
NIC_FIELDS = ("port", "rx_gbps", "tx_gbps", "symbol_errors", "link_downed", "carrier_changes")
FLOAT_FIELDS = frozenset({"temp_c", "power_w", "util_pct", "rx_gbps", "tx_gbps"})
SM_CLOCK_MHZ = 1980
DEGRADED_SYMBOLS_PER_S = 40.0  # a degraded port: well above the 10/s "degraded" line
DOWNTRAINED_REPLAYS_PER_S = 0.4  # near the ~31/min Gen5 x16 warning level


@dataclass
class TickEffects:
    """Counter increments caused by this interval's fault and noise events, per (host, unit)."""

    ecc_sbe: np.ndarray
    ecc_dbe: np.ndarray
    nvlink: np.ndarray
    replay: np.ndarray
    link_downed: np.ndarray
    carrier: np.ndarray
    symbols: np.ndarray

    @classmethod
    def zeros(cls, n_hosts: int, units: int = 8) -> TickEffects:
        return cls(*(np.zeros((n_hosts, units), dtype=np.int64) for _ in range(7)))


class SampleModel:
    """Per-host constants (fabric baselines, persistent offsets) and the per-tick sample draw."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        cfg = fleet.config
        specs = [cfg.fabrics[c.fabric] for c in cfg.clusters]
        self.base_step = np.array([specs[c].step_time_ms for c in fleet.cluster])
        self.base_bw = np.array([specs[c].bus_bw_gbps for c in fleet.cluster])
        self.symbol_rate = np.array([specs[c].symbol_errors_per_port_s for c in fleet.cluster])
        rng = stream(fleet.seed, Purpose.HOST_TRAITS)
        self.offset = rng.normal(0.0, cfg.noise.host_offset_sd, size=fleet.n_hosts)
        self.gpu_temp = rng.normal(60.0, 3.0, size=(fleet.n_hosts, cfg.gpus_per_host))
        self.is_slow = fleet.slow_factor > 0
        cause = np.array([c or "" for c in fleet.slow_cause], dtype=object)
        self.nic_slow = cause == "degraded_nic"
        self.pcie_slow = cause == "pcie_downtraining"
        self.thermal_slow = cause == "thermal_throttling"

    def slow_active(self, t: int, hosts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Which of ``hosts`` are slow in the window ending at ``t`` (intermittent ones by duty)."""
        f = self.fleet
        u = rng.uniform(size=len(hosts))
        return self.is_slow[hosts] & (f.slow_onset_ts[hosts] <= t) & (u < f.slow_duty[hosts])

    def columns(
        self, t: int, interval_s: int, hosts: np.ndarray, effects: TickEffects, remapped: np.ndarray, tick: int
    ) -> dict[str, np.ndarray]:
        rng = stream(self.fleet.seed, Purpose.TICK, tick)
        n, g = len(hosts), self.fleet.config.gpus_per_host
        active = self.slow_active(t, hosts, rng)
        factor = np.where(active, self.fleet.slow_factor[hosts], 0.0)
        # a longer window averages sample noise away; the persistent host offset stays
        sd = self.fleet.config.noise.step_noise_sd * np.sqrt(10.0 / interval_s)
        step = self.base_step[hosts] * (1 + self.offset[hosts]) * (1 + sd * rng.standard_normal(n)) * (1 + factor)
        thermal = active & self.thermal_slow[hosts]
        bw_hit = np.where(thermal, 0.3, 1.0) * factor
        bw = self.base_bw[hosts] * (1 - 0.5 * self.offset[hosts]) * (1 + sd * rng.standard_normal(n)) / (1 + bw_hit)

        therm = thermal[:, None]
        temp = self.gpu_temp[hosts] + rng.normal(0, 1.0, size=(n, g)) + therm * (12.0 + 40.0 * factor[:, None])
        power = rng.normal(650.0, 15.0, size=(n, g)) * np.where(therm, 1 - factor[:, None], 1.0)
        clock = np.where(therm, SM_CLOCK_MHZ * (1 - factor[:, None]), SM_CLOCK_MHZ).astype(np.int64)
        util = np.clip(rng.normal(96.0, 1.5, size=(n, g)), 0, 100)
        unit = self.fleet.slow_unit[hosts]
        pcie = active & self.pcie_slow[hosts]
        downtrained = np.zeros((n, g), dtype=bool)
        downtrained[np.flatnonzero(pcie), unit[pcie]] = True
        replay_rate = np.where(downtrained, DOWNTRAINED_REPLAYS_PER_S, 0.0005) * interval_s
        nic = active & self.nic_slow[hosts]
        degraded = np.zeros((n, g), dtype=bool)
        degraded[np.flatnonzero(nic), unit[nic]] = True
        symbol_rate = np.where(degraded, DEGRADED_SYMBOLS_PER_S, self.symbol_rate[hosts][:, None]) * interval_s
        port_bw = bw[:, None] * np.where(degraded, 1 - np.minimum(0.9, 3 * factor[:, None]), 1.0)
        cols: dict[str, np.ndarray] = {
            "step_time_ms": step,
            "bus_bw_gbps": bw,
            "gpu": np.broadcast_to(np.arange(g), (n, g)),
            "temp_c": temp,
            "power_w": power,
            "sm_clock_mhz": clock,
            "util_pct": util,
            "ecc_sbe": effects.ecc_sbe[hosts],
            "ecc_dbe": effects.ecc_dbe[hosts],
            "retired_pages": remapped[hosts],
            "pcie_replay": rng.poisson(replay_rate) + effects.replay[hosts],
            "pcie_link_gen": np.where(downtrained, 4, 5),
            "pcie_link_width": np.where(downtrained, 8, 16),
            "nvlink_errors": rng.poisson(1e-5 * interval_s, size=(n, g)) + effects.nvlink[hosts],
            "port": np.broadcast_to(np.arange(g), (n, g)),
            "rx_gbps": port_bw * rng.normal(1.0, 0.005, size=(n, g)),
            "tx_gbps": port_bw * rng.normal(1.0, 0.005, size=(n, g)),
            "symbol_errors": rng.poisson(symbol_rate) + effects.symbols[hosts],
            "link_downed": effects.link_downed[hosts],
            "carrier_changes": effects.carrier[hosts],
        }
        for name in FLOAT_FIELDS | {"step_time_ms", "bus_bw_gbps"}:
            cols[name] = np.round(cols[name], 2).astype(np.float32)
        for name in GPU_FIELDS + NIC_FIELDS:
            cols[name] = np.ascontiguousarray(np.broadcast_to(cols[name], (n, g)))
        return cols


class SampleBatch:
    """HostSampled events of one tick, held as columns."""

    EVENT_TYPE = "HostSampled"

    def __init__(
        self,
        *,
        fleet: Fleet,
        run_id: str,
        hosts: np.ndarray,
        seq: np.ndarray,
        ts: np.ndarray,
        interval_s: int,
        columns: dict[str, np.ndarray],
        encoder: SampleEncoder | None = None,
    ) -> None:
        self.fleet, self.run_id, self.hosts, self.seq, self.ts = fleet, run_id, hosts, seq, ts
        self.interval_s = interval_s
        self.columns = columns
        self.encoder = encoder

    def __len__(self) -> int:
        return len(self.hosts)

    @property
    def event_times(self) -> np.ndarray:
        return self.ts

    def event_types(self) -> list[str]:
        return [self.EVENT_TYPE] * len(self)

    def host_ids(self) -> list[str]:
        ids = self.fleet.host_id
        return [ids[i] for i in self.hosts.tolist()]

    def keys(self) -> list[bytes]:
        return [h.encode() for h in self.host_ids()]

    def envelope(self) -> dict[str, list[Any]]:
        hosts = self.host_ids()
        names = self.fleet.cluster_names
        return {
            "event_id": [f"{self.run_id}-{h}-{s}" for h, s in zip(hosts, self.seq.tolist(), strict=True)],
            "host_id": hosts,
            "cluster": [names[c] for c in self.fleet.cluster[self.hosts].tolist()],
            "ts": self.ts.tolist(),
            "agent_seq": self.seq.tolist(),
        }

    def job_ids(self) -> list[str]:
        jobs = self.fleet.job_ids
        return [jobs[j] for j in self.fleet.job[self.hosts].tolist()]

    def records(self) -> list[dict[str, Any]]:
        env = self.envelope()
        c = {k: v.tolist() for k, v in self.columns.items()}
        jobs = self.job_ids()
        out = []
        for i in range(len(self)):
            gpus = [dict(zip(GPU_FIELDS, vals, strict=True)) for vals in zip(*(c[f][i] for f in GPU_FIELDS), strict=True)]
            nics = [dict(zip(NIC_FIELDS, vals, strict=True)) for vals in zip(*(c[f][i] for f in NIC_FIELDS), strict=True)]
            out.append(
                {
                    "event_id": env["event_id"][i],
                    "event_type": self.EVENT_TYPE,
                    "schema_version": 1,
                    "host_id": env["host_id"][i],
                    "cluster": env["cluster"][i],
                    "ts": env["ts"][i],
                    "agent_seq": env["agent_seq"][i],
                    "payload": {
                        "interval_s": self.interval_s,
                        "job_id": jobs[i],
                        "step_time_ms": c["step_time_ms"][i],
                        "bus_bw_gbps": c["bus_bw_gbps"][i],
                        "gpus": gpus,
                        "nics": nics,
                    },
                }
            )
        return out

    def encode(self, codec: Codec) -> list[bytes]:
        if self.encoder is None or self.encoder.header[1:] != codec.schema_id(self.EVENT_TYPE).to_bytes(4, "big"):
            return [codec.encode(r) for r in self.records()]
        return self.encoder.encode(self.hosts, self.seq, self.ts, self.interval_s, self.columns)

    def tables(self) -> dict[str, pa.Table]:
        return {self.EVENT_TYPE: sample_table(self)}

    def take(self, index: np.ndarray) -> SampleBatch:
        return SampleBatch(
            fleet=self.fleet, run_id=self.run_id, hosts=self.hosts[index], seq=self.seq[index], ts=self.ts[index],
            interval_s=self.interval_s, columns={k: v[index] for k, v in self.columns.items()}, encoder=self.encoder,
        )  # fmt: skip


def sample_encoder(fleet: Fleet, run_id: str, codec: Codec | None = None) -> SampleEncoder | None:
    """The column-wise encoder for this fleet, or None if the schema is not the shape it knows."""
    schema = cached_schema(SampleBatch.EVENT_TYPE)
    payload = tuple(schema.names[7:])
    if payload != PAYLOAD_ORDER:
        return None
    items = {}
    for name in ("gpus", "nics"):
        struct_type = schema.field(name).type.value_type
        items[name] = {f.name: pa.types.is_floating(f.type) for f in struct_type}
    if tuple(items["gpus"]) != GPU_FIELDS or tuple(items["nics"]) != NIC_FIELDS:
        return None
    names = fleet.cluster_names
    return SampleEncoder(
        host_ids=fleet.host_id,
        clusters=[names[c] for c in fleet.cluster.tolist()],
        job_ids=[fleet.job_ids[j] for j in fleet.job.tolist()],
        run_id=run_id,
        schema_id=(codec or Codec()).schema_id(SampleBatch.EVENT_TYPE),
        gpu_fields=items["gpus"],
        nic_fields=items["nics"],
    )


def _list_of_structs(batch: SampleBatch, names: tuple[str, ...], field: pa.Field) -> pa.Array:
    struct_type = field.type.value_type
    n, g = batch.columns[names[0]].shape
    children = [
        pa.array(np.ascontiguousarray(batch.columns[name]).reshape(-1), type=struct_type.field(name).type)
        for name in names
    ]
    values = pa.StructArray.from_arrays(children, fields=list(struct_type))
    offsets = pa.array(np.arange(0, (n + 1) * g, g, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, values, type=field.type)


def sample_table(batch: SampleBatch) -> pa.Table:
    """The flat lake table of a sample batch, built from the columns (same as ``schemas.arrow.to_table``)."""
    schema = cached_schema(batch.EVENT_TYPE)
    env = batch.envelope()
    n = len(batch)
    data = {
        **env,
        "event_type": [batch.EVENT_TYPE] * n,
        "schema_version": np.ones(n, dtype=np.int32),
        "interval_s": np.full(n, batch.interval_s, dtype=np.int32),
        "job_id": batch.job_ids(),
        "step_time_ms": batch.columns["step_time_ms"],
        "bus_bw_gbps": batch.columns["bus_bw_gbps"],
    }
    arrays = []
    for field in schema:
        if field.name == "gpus":
            arrays.append(_list_of_structs(batch, GPU_FIELDS, field))
        elif field.name == "nics":
            arrays.append(_list_of_structs(batch, NIC_FIELDS, field))
        else:
            arrays.append(pa.array(data[field.name], type=field.type))
    return pa.Table.from_arrays(arrays, schema=schema)
