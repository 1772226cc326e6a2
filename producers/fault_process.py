"""The simulator's hardware fault process: early-life (power-law in age), flat and wear-out faults, lemons.

Rates are calibrated so that, in expectation over the fleet and run, interruptions arrive at
the configured rate with the configured cause mix (Llama 3 Table 5 by default). Each host draws
from its own random stream, so a host's history does not depend on the rest of the fleet.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from producers import hazard
from producers.config import FleetConfig
from producers.fleet import DAY_MS, MINUTE_MS, Fleet
from producers.randomness import Purpose, stream
from producers.schedule import Schedule
from schemas.taxonomy import GPU_FAULT_KINDS, KIND_CAUSE, LINK_FAULT_KINDS

AER_ERRORS = ("completion_timeout", "malformed_tlp", "surprise_down", "poisoned_tlp")


@dataclass(frozen=True)
class Mode:
    cause: str
    kind: str
    share: float  # of all interruptions
    early: bool
    link: bool


@dataclass(frozen=True)
class Calibration:
    """The resolved rates of a run (recorded in the manifest)."""

    modes: list[Mode]
    rate_per_host_day: float
    weibull_shape: float
    weibull_scale_days: float | None
    early_share: float
    link_weight: dict[str, float]  # per fabric, normalised fleet-wide
    expected_interruptions: float


def modes_of(config: FleetConfig) -> list[Mode]:
    f = config.failures
    total = sum(f.cause_mix.values())
    modes = []
    for cause in sorted(f.cause_mix):
        kinds = f.cause_kinds.get(cause, {cause: 1.0})
        ksum = sum(kinds.values())
        for kind in sorted(kinds):
            share = f.cause_mix[cause] / total * kinds[kind] / ksum
            if share > 0:
                modes.append(Mode(cause, kind, share, kind in f.early_life_kinds, kind in LINK_FAULT_KINDS))
    return modes


def observed_windows(fleet: Fleet) -> tuple[np.ndarray, np.ndarray]:
    """Observed age window of each host, days (empty when installed after the run)."""
    a0 = (np.maximum(fleet.start_ts, fleet.install_ts) - fleet.install_ts) / DAY_MS
    a1 = (fleet.end_ts - fleet.install_ts) / DAY_MS
    return a0, np.maximum(a1, a0)


def calibrate(fleet: Fleet) -> Calibration:
    config = fleet.config
    f = config.failures
    modes = modes_of(config)
    rate = f.interruptions_per_gpu_day * config.gpus_per_host
    a0, a1 = observed_windows(fleet)
    host_days = a1 - a0
    fabrics = np.array(fleet.fabric, dtype=object)
    raw = {name: spec.link_fault_weight for name, spec in config.fabrics.items()}
    w = np.array([raw[x] for x in fabrics])
    early_share = sum(m.share for m in modes if m.early)
    beta = f.weibull_shape
    exposure = a1**beta - a0**beta
    # Normalise link weights by the exposure each process sees, so the fleet-wide mix stays as configured.
    flat_norm = float(np.sum(w * host_days) / max(np.sum(host_days), 1e-12))
    early_norm = float(np.sum(w * exposure) / max(np.sum(exposure), 1e-12))
    scale = f.weibull_scale_days
    if scale is None and early_share > 0 and np.sum(host_days) > 0:
        scale = hazard.calibrate_scale(a0, a1, beta, early_share * rate * float(np.sum(host_days)))
    return Calibration(
        modes=modes,
        rate_per_host_day=rate,
        weibull_shape=beta,
        weibull_scale_days=scale,
        early_share=early_share,
        link_weight={k: v / flat_norm for k, v in raw.items()}
        | {f"{k}_early": v / early_norm for k, v in raw.items()},
        expected_interruptions=rate * float(np.sum(host_days)),
    )


def _host_faults(i: int, fleet: Fleet, cal: Calibration, a0: float, a1: float) -> dict[str, list]:
    config = fleet.config
    f = config.failures
    rng = stream(fleet.seed, Purpose.HOST_FAULTS, *fleet.streams(i))
    fabric = config.clusters[int(fleet.cluster[i])].fabric
    out: dict[str, list] = {k: [] for k in ("age", "mode", "phase")}

    def add(ages: np.ndarray, candidates: list[Mode], weights: np.ndarray, phase: str) -> None:
        if len(ages) == 0:
            return
        picks = rng.choice(len(candidates), size=len(ages), p=weights / weights.sum())
        out["age"] += ages.tolist()
        out["mode"] += [candidates[p] for p in picks]
        out["phase"] += [phase] * len(ages)

    early = [m for m in cal.modes if m.early]
    if early and cal.weibull_scale_days:
        ew = np.array([m.share * (cal.link_weight[f"{fabric}_early"] if m.link else 1.0) for m in early])
        ages = hazard.sample(
            rng, a0, a1, cal.weibull_shape, cal.weibull_scale_days, weight=ew.sum() / cal.early_share
        )
        add(ages, early, ew, "early_life")
    flat = [m for m in cal.modes if not m.early]
    if flat:
        fw = np.array([m.share * (cal.link_weight[fabric] if m.link else 1.0) for m in flat])
        n = rng.poisson(cal.rate_per_host_day * fw.sum() * (a1 - a0))
        add(np.sort(rng.uniform(a0, a1, size=n)), flat, fw, "random")
    hw = [m for m in cal.modes if m.kind in GPU_FAULT_KINDS]
    if hw and f.wearout_scale_days:
        ages = hazard.sample(rng, a0, a1, f.wearout_shape, f.wearout_scale_days)
        add(ages, hw, np.array([m.share for m in hw]), "wearout")
    n = len(out["age"])
    out["gpu"] = rng.integers(0, config.gpus_per_host, size=n).tolist()
    out["port"] = rng.integers(0, config.nic_ports, size=n).tolist()
    out["aux1"], out["aux2"] = _details(rng, [m.kind for m in out["mode"]])
    return out


def _details(rng: np.random.Generator, kinds: list[str]) -> tuple[list[int], list[int]]:
    """Per-event detail drawn once: AER severity, ECC count and remap, XID variant, flap count."""
    aux1, aux2 = [], []
    u = rng.uniform(size=(len(kinds), 3))
    for k, (x, y, z) in zip(kinds, u, strict=True):
        if k == "fell_off_bus":  # AER co-occurs often: 0 none, 1 nonfatal, 2 fatal
            aux1.append(0 if x < 0.3 else (1 if y < 0.5 else 2))
            aux2.append(int(z * len(AER_ERRORS)))
        elif k == "dram_uce":  # count, remap event
            aux1.append(1 if x < 0.8 else 2)
            aux2.append(int(y < 0.4))
        elif k == "sram_uce":
            aux1.append(95 if x < 0.7 else 94)
            aux2.append(0)
        elif k == "gsp_error":
            aux1.append(119 if x < 0.6 else 120)
            aux2.append(0)
        else:
            aux1.append(0)
            aux2.append(0)
    return aux1, aux2


def fault_schedule(fleet: Fleet, cal: Calibration) -> tuple[Schedule, int]:
    """Every non-lemon fault of the run, plus lemon repeats; returns (schedule, guard drops)."""
    a0, a1 = observed_windows(fleet)
    cols: dict[str, list] = {
        k: [] for k in ("ts", "host", "gpu", "port", "kind", "cause", "phase", "aux1", "aux2")
    }
    for i in range(fleet.n_hosts):
        if a1[i] <= a0[i]:
            continue
        h = _host_faults(i, fleet, cal, float(a0[i]), float(a1[i]))
        install = int(fleet.install_ts[i])
        for age, mode, phase, gpu, port, x1, x2 in zip(
            h["age"], h["mode"], h["phase"], h["gpu"], h["port"], h["aux1"], h["aux2"], strict=True
        ):
            ts = min(install + int(round(age * DAY_MS)), fleet.end_ts)
            cols["ts"].append(max(ts, fleet.start_ts + 1))
            cols["host"].append(i)
            cols["gpu"].append(gpu if mode.kind in GPU_FAULT_KINDS else -1)
            cols["port"].append(port if mode.link else -1)
            cols["kind"].append(mode.kind)
            cols["cause"].append(mode.cause)
            cols["phase"].append(phase)
            cols["aux1"].append(x1)
            cols["aux2"].append(x2)
    faults = Schedule.from_columns(cols).sorted()
    kept, dropped = guard(faults, int(fleet.config.failures.guard_days * DAY_MS))
    return Schedule.concat([kept, lemon_schedule(fleet)]).sorted(), dropped


def guard(faults: Schedule, gap_ms: int) -> tuple[Schedule, int]:
    """Drop a non-lemon fault when its GPU (or NIC port) had one within ``gap_ms``.

    Random faults must not make a healthy GPU or port look like a repeat offender: with Meta's
    rates this removes a handful of events from months of a 49k-GPU fleet (counted in the manifest).
    """
    last: dict[tuple[int, str, int], int] = {}
    keep = np.ones(len(faults), dtype=bool)
    for j in range(len(faults)):
        if faults.gpu[j] >= 0:
            key = (int(faults.host[j]), "gpu", int(faults.gpu[j]))
        elif faults.port[j] >= 0:
            key = (int(faults.host[j]), "port", int(faults.port[j]))
        else:
            continue
        ts = int(faults.ts[j])
        if key in last and ts - last[key] < gap_ms:
            keep[j] = False
        else:
            last[key] = ts
    return faults.take(np.flatnonzero(keep)), int((~keep).sum())


def lemon_schedule(fleet: Fleet) -> Schedule:
    """Lemon hosts repeat their fault on one GPU or port every few days from onset to the end."""
    spec = fleet.config.lemons
    cols: dict[str, list] = {
        k: [] for k in ("ts", "host", "gpu", "port", "kind", "cause", "phase", "aux1", "aux2")
    }
    for i, kind in enumerate(fleet.lemon_kind):
        if kind is None:
            continue
        rng = stream(fleet.seed, Purpose.LEMON, i)
        t = int(fleet.lemon_onset_ts[i])
        for _ in range(spec.max_repeats):
            if t > fleet.end_ts:
                break
            if kind == "link_flap":
                n = int(rng.integers(spec.flaps_per_burst[0], spec.flaps_per_burst[1] + 1))
                offsets = np.sort(rng.uniform(0, spec.burst_minutes * MINUTE_MS, size=n)).astype(np.int64)
                times = [int(t + o) for o in offsets if t + o <= fleet.end_ts]
                x1 = [1] * len(times)
                x2 = [0] * len(times)
            else:
                times = [t]
                x1, x2 = _details(rng, [kind])
            for ts, a, b in zip(times, x1, x2, strict=True):
                if fleet.segment and ts <= fleet.start_ts:
                    continue  # a continuation re-walks the lemon's repeats: keep only the new ones
                cols["ts"].append(ts)
                cols["host"].append(i)
                cols["gpu"].append(int(fleet.lemon_gpu[i]))
                cols["port"].append(int(fleet.lemon_port[i]))
                cols["kind"].append(kind)
                cols["cause"].append(KIND_CAUSE[kind])
                cols["phase"].append("lemon")
                cols["aux1"].append(a)
                cols["aux2"].append(b)
            t += int(rng.uniform(*spec.repeat_days) * DAY_MS)
    return Schedule.from_columns(cols)
