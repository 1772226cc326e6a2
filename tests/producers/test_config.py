from pathlib import Path

import pytest

from producers.config import LLAMA3_CAUSE_MIX, available_presets, load_fleet_config
from producers.errors import FleetConfigError
from tests.producers.conftest import config_with


def test_presets_have_the_documented_shapes() -> None:
    assert {"meta-48k", "demo", "small"} <= set(available_presets())
    meta = load_fleet_config("meta-48k")
    assert [(c.fabric, c.hosts) for c in meta.clusters] == [("roce", 3072), ("infiniband", 3072)]
    assert meta.n_hosts * meta.gpus_per_host == 49_152
    demo = load_fleet_config("demo")
    assert [c.hosts for c in demo.clusters] == [256, 256]
    small = load_fleet_config("small")
    assert 100 <= small.n_hosts * 8 <= 1000


def test_default_cause_mix_is_llama3_table5() -> None:
    mix = load_fleet_config("small").failures.cause_mix
    assert mix == LLAMA3_CAUSE_MIX
    assert mix["faulty_gpu"] == 30.1 and mix["hbm3"] == 17.2
    # the 13 categories of DESIGN.md cover 92.4 % of Table 5; shares are normalised over them
    assert sum(mix.values()) == pytest.approx(92.4)


def test_unknown_preset_lists_the_known_ones() -> None:
    with pytest.raises(FleetConfigError, match="meta-48k"):
        load_fleet_config("nope")


def test_invalid_file_says_which_field(tmp_path: Path) -> None:
    bad = tmp_path / "fleet.toml"
    bad.write_text('name = "x"\n[[clusters]]\nname = "a"\nfabric = "ethernet"\nhosts = 4\n')
    with pytest.raises(FleetConfigError) as err:
        load_fleet_config(path=bad)
    assert "clusters.0.fabric" in str(err.value) and str(bad) in str(err.value)


def test_missing_file_and_bad_toml(tmp_path: Path) -> None:
    with pytest.raises(FleetConfigError, match="does not exist"):
        load_fleet_config(path=tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("name = ")
    with pytest.raises(FleetConfigError, match="cannot read TOML"):
        load_fleet_config(path=broken)


def test_cause_kinds_must_name_known_causes() -> None:
    with pytest.raises(ValueError, match="cause_kinds names cause"):
        config_with(failures={"cause_kinds": {"gremlins": {"pmu_halt": 1.0}}})


def test_duplicate_cluster_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="unique"):
        config_with(
            clusters=[
                {"name": "a", "fabric": "roce", "hosts": 2},
                {"name": "a", "fabric": "roce", "hosts": 2},
            ]
        )
