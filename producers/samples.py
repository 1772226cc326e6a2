"""HostSampled payloads for a whole tick at once: numpy columns over (hosts × GPUs/ports).

This is the simulator's hot path (6,144 hosts per tick at Meta scale), so nothing here loops
over hosts in Python. Slow hosts show their cause's symptoms while they are slow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from producers.fleet import MINUTE_MS, Fleet
from producers.jobs import JobTimeline, job_timeline
from producers.randomness import Purpose, stream

GPU_FIELDS = (
    "gpu",
    "temp_c",
    "power_w",
    "sm_clock_mhz",
    "util_pct",
    "ecc_sbe",
    "ecc_dbe",
    "retired_pages",
    "pcie_replay",
    "pcie_link_gen",
    "pcie_link_width",
    "nvlink_errors",
    "pcie_link_gen_max",
    "pcie_link_width_max",
    "throttle_reasons",
)
NIC_FIELDS = ("port", "rx_gbps", "tx_gbps", "symbol_errors", "link_downed", "carrier_changes")
FLOAT_FIELDS = frozenset({"temp_c", "power_w", "util_pct", "rx_gbps", "tx_gbps"})
SM_CLOCK_MHZ = 1980
DEGRADED_SYMBOLS_PER_S = 40.0  # a degraded port: well above the 10/s "degraded" line
DOWNTRAINED_REPLAYS_PER_S = 0.4  # near the ~31/min Gen5 x16 warning level
IDLE_POWER_W = 90.0
THROTTLE_IDLE, THROTTLE_SW_THERMAL, THROTTLE_HW_THERMAL = 0x1, 0x20, 0x40  # NVML clock event reason bits
_MIX = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB), np.uint64(0x9E3779B97F4A7C15))


def episode_draws(seed: int, hosts: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """Uniform [0, 1) per (host, episode block), the same whichever tick or segment asks (SplitMix64).

    A hash rather than a Generator: a window asks for any block of any host in any order.
    """
    with np.errstate(over="ignore"):
        x = (
            np.uint64(seed & 0xFFFFFFFF) * _MIX[2]
            + hosts.astype(np.uint64)[:, None] * _MIX[0]
            + blocks.astype(np.uint64) * _MIX[1]
        )
        x = (x ^ (x >> np.uint64(30))) * _MIX[0]
        x = (x ^ (x >> np.uint64(27))) * _MIX[1]
        x = x ^ (x >> np.uint64(31))
    return (x >> np.uint64(11)).astype(np.float64) / float(1 << 53)


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

    def __init__(self, fleet: Fleet, jobs: JobTimeline | None = None) -> None:
        self.fleet = fleet
        self.jobs = jobs if jobs is not None else job_timeline(fleet)
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

    def slow_share(self, t: int, interval_s: int, hosts: np.ndarray) -> np.ndarray:
        """Share of the interval ending at ``t`` each of ``hosts`` is slow (0 or 1 unless intermittent).

        An intermittent host is slow in whole episodes, each with probability ``slow_duty``; an
        interval longer than an episode averages the episodes it covers.
        """
        f = self.fleet
        share = (self.is_slow[hosts] & (f.slow_onset_ts[hosts] <= t)).astype(float)
        part = np.flatnonzero((share > 0) & f.slow_intermittent[hosts])
        if len(part):
            episode = int(f.config.slow.episode_minutes * MINUTE_MS)
            first, last = (t - interval_s * 1000) // episode, (t - 1) // episode
            blocks = np.arange(first, last + 1, dtype=np.int64)
            u = episode_draws(f.seed, hosts[part], blocks)
            share[part] = (u < f.slow_duty[hosts[part]][:, None]).mean(axis=1)
        return share

    def columns(
        self,
        t: int,
        interval_s: int,
        hosts: np.ndarray,
        effects: TickEffects,
        remapped: np.ndarray,
        tick: int,
    ) -> dict[str, np.ndarray]:
        rng = stream(self.fleet.seed, Purpose.TICK, *self.fleet.streams(tick))
        n, g = len(hosts), self.fleet.config.gpus_per_host
        share = self.slow_share(t, interval_s, hosts)
        active = share > 0
        factor = self.fleet.slow_factor[hosts] * share
        job = self.jobs.running(t)[self.fleet.job[hosts]]
        busy = job >= 0
        pace = np.where(busy, self.jobs.pace[job], 0.0)
        bw_pace = np.where(busy, self.jobs.bw_pace[job], 0.0)
        # a longer window averages sample noise away; the persistent host offset stays
        sd = self.fleet.config.noise.step_noise_sd * np.sqrt(10.0 / interval_s)
        step = (
            self.base_step[hosts]
            * pace
            * (1 + self.offset[hosts])
            * (1 + sd * rng.standard_normal(n))
            * (1 + factor)
        )
        thermal = active & self.thermal_slow[hosts]
        bw_hit = np.where(thermal, 0.3, 1.0) * factor
        bw = (
            self.base_bw[hosts]
            * bw_pace
            * (1 - 0.5 * self.offset[hosts])
            * (1 + sd * rng.standard_normal(n))
            / (1 + bw_hit)
        )

        therm = thermal[:, None]
        temp = (
            self.gpu_temp[hosts] + rng.normal(0, 1.0, size=(n, g)) + therm * (12.0 + 40.0 * factor[:, None])
        )
        power = rng.normal(650.0, 15.0, size=(n, g)) * np.where(therm, 1 - factor[:, None], 1.0)
        power = np.where(busy[:, None], power, IDLE_POWER_W)
        clock = np.where(therm, SM_CLOCK_MHZ * (1 - factor[:, None]), SM_CLOCK_MHZ).astype(np.int64)
        util = np.clip(rng.normal(96.0, 1.5, size=(n, g)), 0, 100) * busy[:, None]
        unit = self.fleet.slow_unit[hosts]
        pcie = active & self.pcie_slow[hosts]
        downtrained = np.zeros((n, g), dtype=bool)
        downtrained[np.flatnonzero(pcie), unit[pcie]] = True
        replay_rate = np.where(downtrained, DOWNTRAINED_REPLAYS_PER_S, 0.0005) * interval_s
        nic = active & self.nic_slow[hosts]
        degraded = np.zeros((n, g), dtype=bool)
        degraded[np.flatnonzero(nic), unit[nic]] = True
        symbol_rate = (
            np.where(degraded, DEGRADED_SYMBOLS_PER_S, self.symbol_rate[hosts][:, None]) * interval_s
        )
        port_bw = bw[:, None] * np.where(degraded, 1 - np.minimum(0.9, 3 * factor[:, None]), 1.0)
        cols: dict[str, np.ndarray] = {
            "job": job,  # index into self.jobs, -1 while the host idles (no job_id, no step time)
            "step_time_ms": np.where(busy, step, np.nan),  # NaN: null, as a real idle host's agent sends
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
            "pcie_link_gen_max": np.full((n, g), 5),
            "pcie_link_width_max": np.full((n, g), 16),
            "throttle_reasons": np.where(
                therm, THROTTLE_SW_THERMAL | THROTTLE_HW_THERMAL, np.where(busy[:, None], 0, THROTTLE_IDLE)
            ),
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
            if cols[name].shape != (n, g) or not cols[name].flags.writeable:
                cols[name] = np.broadcast_to(cols[name], (n, g)).copy()
        return cols
