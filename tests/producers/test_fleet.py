import numpy as np

from producers.fleet import DAY_MS, build_fleet
from tests.producers.conftest import START, config_with


def test_meta_fleet_layout() -> None:
    cfg = config_with("meta-48k")
    fleet = build_fleet(cfg, 7, START, START + 90 * DAY_MS)
    assert fleet.n_hosts == 6144 and len(set(fleet.host_id)) == 6144
    assert len(set(fleet.rack)) == 6144 // cfg.hosts_per_rack
    assert len(set(fleet.domain)) == 2 * (3072 // cfg.hosts_per_rack // cfg.racks_per_domain)
    assert set(fleet.fabric) == {"roce", "infiniband"}
    assert int(fleet.job_gpus.sum()) == 49_152
    # install cohorts: old ones spread over the history, newer ones arriving during the run
    age_at_start = (START - fleet.install_ts) / DAY_MS
    assert age_at_start.max() > 300 and np.median(age_at_start) > 30
    during = (fleet.install_ts > START) & (fleet.install_ts < fleet.end_ts)
    assert 0.1 < during.mean() < 0.3
    assert (fleet.install_ts < START + 45 * DAY_MS).all()


def test_lemons_and_slow_hosts_follow_their_fractions_and_do_not_overlap() -> None:
    cfg = config_with("meta-48k")
    fleet = build_fleet(cfg, 3, START, START + 30 * DAY_MS)
    lemons = np.array([k is not None for k in fleet.lemon_kind])
    slow = fleet.slow_factor > 0
    assert lemons.sum() == round(cfg.lemons.fraction * 6144)
    assert slow.sum() == round(cfg.slow.fraction * 6144)
    assert not (lemons & slow).any()
    steady = slow & ~fleet.slow_intermittent
    assert ((fleet.slow_factor[steady] >= 0.03) & (fleet.slow_factor[steady] <= 0.30)).all()
    on_off = fleet.slow_factor[fleet.slow_intermittent]
    assert ((on_off >= 0.02) & (on_off <= 0.06)).all()  # intermittent hosts are slow by 2-6 %
    gpu_lemon = np.array([k in ("dram_uce", "fell_off_bus", "sram_uce") for k in fleet.lemon_kind])
    assert (fleet.lemon_gpu[gpu_lemon] >= 0).all() and (fleet.lemon_port[gpu_lemon] == -1).all()
    onset = fleet.lemon_onset_ts[lemons]
    assert (onset >= START).all() and (onset <= fleet.end_ts).all()
    assert (fleet.lemon_onset_ts[lemons] > fleet.install_ts[lemons]).all()
    assert 0 < fleet.slow_intermittent[slow].mean() < 0.6
    assert (
        (fleet.slow_duty[fleet.slow_intermittent] >= 0.3) & (fleet.slow_duty[fleet.slow_intermittent] <= 0.7)
    ).all()


def test_same_seed_same_fleet_other_seed_other_fleet() -> None:
    cfg = config_with("small")
    a = build_fleet(cfg, 7, START, START + 10 * DAY_MS)
    b = build_fleet(cfg, 7, START, START + 10 * DAY_MS)
    c = build_fleet(cfg, 8, START, START + 10 * DAY_MS)
    assert np.array_equal(a.install_ts, b.install_ts) and a.lemon_kind == b.lemon_kind
    assert not np.array_equal(a.install_ts, c.install_ts)
