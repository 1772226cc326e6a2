"""Noise: events that are not faults (correctable ECC and AER, application XIDs, single link flaps).

None is of a repeat-offender class, and single flaps on one port stay a day apart, so noise
never makes a healthy GPU or cable look bad. Each host draws from its own random stream.
"""

from __future__ import annotations

import numpy as np

from producers.fault_process import observed_windows
from producers.fleet import DAY_MS, Fleet
from producers.randomness import Purpose, stream
from producers.schedule import Schedule

CE_AER_ERRORS = ("receiver_error", "bad_tlp", "bad_dllp", "replay_rollover", "replay_timeout")
APP_XIDS = (13, 31, 43, 45, 92)
APP_XID_WEIGHTS = (0.45, 0.3, 0.1, 0.1, 0.05)
NOISE_FLAP_GAP_MS = DAY_MS  # single flaps on one port stay a day apart: never a "bad cable" by chance


def noise_schedule(fleet: Fleet) -> Schedule:
    """Events that are not faults: correctable ECC and AER, application XIDs, single link flaps."""
    config = fleet.config
    spec = config.noise
    a0, a1 = observed_windows(fleet)
    g = config.gpus_per_host
    cols: dict[str, list] = {k: [] for k in ("ts", "host", "gpu", "port", "kind", "aux1")}
    for i in range(fleet.n_hosts):
        days = a1[i] - a0[i]
        if days <= 0:
            continue
        rng = stream(fleet.seed, Purpose.HOST_FAULTS, *fleet.streams(i, 1))
        lo = max(fleet.start_ts, int(fleet.install_ts[i])) + 1
        flap_rate = config.fabrics[config.clusters[int(fleet.cluster[i])].fabric].noise_flaps_per_port_day
        for kind, rate in (
            ("ecc_ce", spec.correctable_ecc_per_gpu_day * g),
            ("app_xid", spec.app_xid_per_host_day),
            ("aer_ce", spec.correctable_aer_per_gpu_day * g),
            ("flap", flap_rate * config.nic_ports),
        ):
            n = int(rng.poisson(rate * days))
            ts = rng.integers(lo, fleet.end_ts + 1, size=n)
            gpu = rng.integers(0, g, size=n)
            port = rng.integers(0, config.nic_ports, size=n)
            if kind == "ecc_ce":
                aux = 1 + rng.geometric(0.2, size=n)
            elif kind == "app_xid":
                aux = rng.choice(APP_XIDS, size=n, p=APP_XID_WEIGHTS)
            elif kind == "aer_ce":
                aux = rng.integers(0, len(CE_AER_ERRORS), size=n)
            else:
                aux = np.ones(n, dtype=np.int64)
            cols["ts"] += ts.tolist()
            cols["host"] += [i] * n
            cols["gpu"] += (gpu if kind != "flap" else np.full(n, -1)).tolist()
            cols["port"] += (port if kind == "flap" else np.full(n, -1)).tolist()
            cols["kind"] += [kind] * n
            cols["aux1"] += aux.tolist()
    n = len(cols["ts"])
    noise = Schedule.from_columns(
        cols | {"cause": [""] * n, "phase": ["noise"] * n, "aux2": [0] * n}
    ).sorted()
    return _space_flaps(noise)


def _space_flaps(noise: Schedule) -> Schedule:
    last: dict[tuple[int, int], int] = {}
    keep = np.ones(len(noise), dtype=bool)
    for j in np.flatnonzero(noise.kind == "flap"):
        key = (int(noise.host[j]), int(noise.port[j]))
        ts = int(noise.ts[j])
        if key in last and ts - last[key] < NOISE_FLAP_GAP_MS:
            keep[j] = False
        else:
            last[key] = ts
    return noise.take(np.flatnonzero(keep))
