"""Fault and noise schedules: rates, guards against chance repeat offenders, lemon repeats."""

from collections import defaultdict

import numpy as np
import pytest

from producers.fleet import DAY_MS
from tests.producers.conftest import config_with

GPU_KINDS = {"fell_off_bus", "dram_uce", "row_remap_failure", "sram_uce", "gsp_error", "nvlink", "pmu_halt"}


def test_llama3_scale_interruption_rate(build) -> None:
    # 16,384 GPUs for 54 days, no lemons: Llama 3 saw 419 interruptions
    cfg = config_with(
        "small", clusters=[{"name": "llama", "fabric": "roce", "hosts": 2048}], lemons={"fraction": 0}
    )
    built = build(cfg, days=54, noise=False)
    assert built.calibration.expected_interruptions == pytest.approx(419, rel=0.01)
    n = int(built.faults.interrupts.sum())
    assert abs(n - 419) < 4 * np.sqrt(419), n


def test_faults_have_host_gpu_port_and_phase_consistent_with_their_kind(build) -> None:
    built = build("demo", days=30, noise=False)
    f = built.faults
    assert len(f) > 50
    for kind, gpu, port in zip(f.kind, f.gpu, f.port, strict=True):
        if kind in GPU_KINDS:
            assert 0 <= gpu < 8 and port == -1
        elif kind in ("link_down", "link_flap", "nic"):
            assert 0 <= port < 8 and gpu == -1
        else:
            assert gpu == -1 and port == -1
    assert set(f.phase) <= {"early_life", "random", "wearout", "lemon"}
    assert (f.ts > built.fleet.start_ts).all() and (f.ts <= built.fleet.end_ts).all()
    assert (f.ts > built.fleet.install_ts[f.host]).all()
    assert set(f.kind[f.phase == "early_life"]) <= {"fell_off_bus", "link_down"}


def test_the_opt_in_guard_keeps_healthy_gpus_and_ports_from_repeating(build) -> None:
    built = build(config_with("meta-48k", failures={"guard_days": 30}), days=60, noise=False)
    f = built.faults
    last: dict[tuple, int] = {}
    for j in np.flatnonzero(f.phase != "lemon"):
        if f.gpu[j] >= 0:
            key = (f.host[j], "gpu", f.gpu[j])
        elif f.port[j] >= 0:
            key = (f.host[j], "port", f.port[j])
        else:
            continue
        if key in last:
            assert f.ts[j] - last[key] >= 30 * DAY_MS
        last[key] = f.ts[j]
    assert 0 < built.dropped < 0.02 * len(f)


def test_by_default_healthy_gpus_repeat_by_chance_at_the_hazard_rate(build) -> None:
    # flat hazard, all hosts installed before the run: faults per GPU are Poisson with one mean, so
    # the number of GPUs with two or more follows from the total; a guard would remove them all
    cfg = config_with(
        "meta-48k",
        lemons={"fraction": 0},
        install={"arriving_fraction": 0},
        failures={
            "early_life_kinds": [],
            "wearout_scale_days": None,
            "interruptions_per_gpu_day": 20 * 419 / (16_384 * 54),
        },
    )
    built = build(cfg, days=60, noise=False)
    f = built.faults
    assert built.dropped == 0 and cfg.failures.guard_days == 0
    on_gpu = f.gpu >= 0
    per_gpu = np.bincount(f.host[on_gpu] * 8 + f.gpu[on_gpu], minlength=built.fleet.n_hosts * 8)
    lam = per_gpu.mean()
    expected = len(per_gpu) * (1 - np.exp(-lam) - lam * np.exp(-lam))
    repeated = int((per_gpu >= 2).sum())
    assert expected > 50
    assert abs(repeated - expected) < 4 * np.sqrt(expected)


def test_lemons_repeat_every_one_to_three_days(build) -> None:
    built = build("demo", days=60, noise=False)
    f = built.faults
    lemon = f.phase == "lemon"
    by_host: dict[int, list[int]] = defaultdict(list)
    for h, ts, kind in zip(f.host[lemon], f.ts[lemon], f.kind[lemon], strict=True):
        assert kind == built.fleet.lemon_kind[h]
        by_host[int(h)].append(int(ts))
    assert len(by_host) == sum(k is not None for k in built.fleet.lemon_kind)
    for h, times in by_host.items():
        if built.fleet.lemon_kind[h] == "link_flap":
            # bursts of >= 3 flaps within 90 minutes: a bad cable on one port
            assert len(times) >= 3 and times[2] - times[0] <= 90 * 60_000
            continue
        assert times[0] == built.fleet.lemon_onset_ts[h]
        gaps = np.diff(times) / DAY_MS
        assert ((gaps >= 1.0) & (gaps <= 3.0)).all()
        assert len(times) <= built.fleet.config.lemons.max_repeats


def test_noise_is_never_of_a_repeat_offender_class(build) -> None:
    built = build("demo", days=30)
    n = built.noise
    assert set(n.kind) == {"ecc_ce", "app_xid", "aer_ce", "flap"}
    assert set(n.aux1[n.kind == "app_xid"]) <= {13, 31, 43, 45, 92}
    last: dict[tuple, int] = {}
    for j in np.flatnonzero(n.kind == "flap"):
        key = (n.host[j], n.port[j])
        if key in last:
            assert n.ts[j] - last[key] >= DAY_MS
        last[key] = n.ts[j]


def test_a_hosts_history_does_not_depend_on_generation_order(build) -> None:
    from producers.fault_process import _host_faults, observed_windows

    built = build("small", days=30, noise=False)
    a0, a1 = observed_windows(built.fleet)
    hosts = range(built.fleet.n_hosts)

    def history(i: int) -> dict[str, list]:
        return _host_faults(i, built.fleet, built.calibration, a0[i], a1[i])

    forward = [history(i) for i in hosts]
    with_faults = [i for i in hosts if forward[i]["age"]]
    assert len(with_faults) >= 8, with_faults  # the comparison below is between non-empty histories
    backward = [history(i) for i in reversed(hosts)][::-1]
    assert forward == backward
    alone = {i: history(i) for i in reversed(with_faults[::3])}  # a few hosts, out of order, nothing between
    assert all(alone[i] == forward[i] for i in alone)


def test_fabric_weights_keep_the_fleet_mix_but_favour_ib(build) -> None:
    built = build("meta-48k", days=90, noise=False)
    w = built.calibration.link_weight
    assert w["roce"] > w["infiniband"]
    raw = {name: spec.link_fault_weight for name, spec in built.fleet.config.fabrics.items()}
    assert w["roce"] / w["infiniband"] == pytest.approx(raw["roce"] / raw["infiniband"])
    assert w["roce_early"] / w["infiniband_early"] == pytest.approx(raw["roce"] / raw["infiniband"])
    fabrics = np.array(built.fleet.fabric, dtype=object)[built.faults.host]
    links = np.isin(built.faults.kind, ["link_down", "nic"]) & (built.faults.phase != "lemon")
    assert (links & (fabrics == "roce")).sum() > (links & (fabrics == "infiniband")).sum()


# three RoCE hosts for every InfiniBand one: the configured weights alone would average 1.15, not 1
SKEWED = [{"name": "r", "fabric": "roce", "hosts": 36}, {"name": "i", "fabric": "infiniband", "hosts": 12}]


@pytest.mark.parametrize(
    "preset, clusters", [("meta-48k", None), ("small", SKEWED)], ids=["meta-48k", "skewed"]
)
def test_link_weights_average_one_over_the_fleets_exposure(build, preset, clusters) -> None:
    """Flat-rate link faults are weighted by host-days, early-life ones by Weibull exposure."""
    from producers.fault_process import observed_windows

    cfg = config_with(preset, clusters=clusters) if clusters else preset
    built = build(cfg, days=90, noise=False)
    w = built.calibration.link_weight
    a0, a1 = observed_windows(built.fleet)
    fabric = np.array(built.fleet.fabric, dtype=object)
    host_days = a1 - a0
    exposure = a1**built.calibration.weibull_shape - a0**built.calibration.weibull_shape
    assert set(fabric) == {"roce", "infiniband"} and host_days.sum() > 0 and exposure.sum() > 0

    def mean(weights: dict[str, float], suffix: str, by: np.ndarray) -> float:
        return float(np.sum(np.array([weights[f + suffix] for f in fabric]) * by) / np.sum(by))

    assert mean(w, "", host_days) == pytest.approx(1.0, rel=1e-9)
    assert mean(w, "_early", exposure) == pytest.approx(1.0, rel=1e-9)
    if clusters:
        raw = {name: spec.link_fault_weight for name, spec in built.fleet.config.fabrics.items()}
        assert mean(raw, "", host_days) > 1.1  # so the normalisation did the work above
