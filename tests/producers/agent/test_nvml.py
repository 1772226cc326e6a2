from __future__ import annotations

from typing import Any

from ground.settings.agent import NvmlSettings
from producers.agent.collector import Problems
from producers.agent.nvml import NvmlCollector
from producers.agent.testing import fake_pynvml
from producers.agent.units import Units


def make(nv: Any, problems: Problems) -> NvmlCollector:
    return NvmlCollector(NvmlSettings(), Units(), problems, nv)


def test_readings_and_inventory(nvml: Any, problems: Problems) -> None:
    c = make(nvml, problems)
    obs = c.collect(0)
    assert sorted(obs.gpus) == list(range(8))
    g = obs.gpus[3]
    assert (g["temp_c"], g["power_w"], g["sm_clock_mhz"], g["util_pct"]) == (63.0, 650.0, 1980, 96.0)
    assert (g["pcie_link_gen"], g["pcie_link_width"]) == (5, 16)
    assert (g["pcie_link_gen_max"], g["pcie_link_width_max"], g["throttle_reasons"]) == (5, 16, 0)
    assert obs.inventory["driver_version"] == "550.54.15"
    assert obs.inventory["sku"] == "NVIDIA H100 80GB HBM3"
    assert len(c.units.uuid_by_bus) == 8


def test_xid_events_ecc_and_row_remap(nvml: Any, problems: Problems) -> None:
    c = make(nvml, problems)
    c.collect(0)
    nvml.xid_queue.append((2, 48))
    nvml.gpus[2].values.update(dbe=1, rows=(0, 1, 1, 0))
    nvml.gpus[4].values.update(sbe=7, replay=3, nvlink=250, gen=4, width=8, throttle=0x40 | 0x20)
    obs = c.collect(1000)
    payloads = [(f.event_type, f.payload) for f in obs.facts]
    assert (
        "XidRaised",
        {"gpu": 2, "xid": 48, "pci_bus_id": "0000:3a:00.0", "message": "DBE (Double Bit Error) ECC Error"},
    ) in payloads
    assert (
        "EccErrorObserved",
        {
            "gpu": 2,
            "memory": "dram",
            "correctable": False,
            "count": 1,
            "row_remap": "remap_event",
            "remapped_rows_total": 1,
        },
    ) in payloads
    assert (
        "EccErrorObserved",
        {
            "gpu": 4,
            "memory": "dram",
            "correctable": True,
            "count": 7,
            "row_remap": "none",
            "remapped_rows_total": 0,
        },
    ) in payloads
    g4 = obs.gpus[4]
    assert (
        g4["ecc_sbe"],
        g4["pcie_replay"],
        g4["nvlink_errors"],
        g4["pcie_link_gen"],
        g4["pcie_link_width"],
    ) == (7, 3, 250, 4, 8)
    # downtrained below its maximum, clocks held by thermal slowdown: both reach the sample
    assert (g4["pcie_link_gen_max"], g4["pcie_link_width_max"], g4["throttle_reasons"]) == (5, 16, 0x60)
    nvml.gpus[2].values.update(rows=(0, 1, 0, 1))  # remapping failed: one row_remap_failure, once
    facts = c.collect(2000).facts
    assert [f.payload["row_remap"] for f in facts] == ["remap_failure"]
    assert c.collect(3000).facts == []


def test_unsupported_fields_are_recorded_once(problems: Problems) -> None:
    nv = fake_pynvml(not_supported=frozenset({"nvmlDeviceGetRemappedRows", "nvmlDeviceGetNvLinkState"}))
    c = make(nv, problems)
    c.collect(0)
    calls = nv.calls
    c.collect(1000)
    assert problems.counts[("nvml", "unsupported")] == 16  # 8 GPUs x 2 fields, not asked again
    assert nv.calls - calls < calls  # the unsupported fields are skipped on later rounds


def test_a_lost_gpu_is_fell_off_the_bus_once(nvml: Any, problems: Problems) -> None:
    c = make(nvml, problems)
    c.collect(0)
    nvml.gpus[6].lost = True
    obs = c.collect(1000)
    assert [(f.event_type, f.payload["gpu"], f.payload["xid"]) for f in obs.facts] == [("XidRaised", 6, 79)]
    assert 6 not in obs.gpus
    assert c.collect(2000).facts == []  # still lost: not again
    nvml.gpus[6].lost = False
    assert 6 in c.collect(3000).gpus
    nvml.gpus[6].lost = True
    assert len(c.collect(4000).facts) == 1  # lost again: a new event


def test_no_driver_is_counted_not_raised(problems: Problems) -> None:
    class Broken:
        def nvmlInit(self) -> None:
            raise OSError("libnvidia-ml.so.1: cannot open shared object file")

    c = NvmlCollector(NvmlSettings(), Units(), problems, Broken())  # type: ignore[arg-type]
    assert c.collect(0).gpus == {}
    assert problems.counts[("nvml", "unavailable")] == 1


def test_aggregate_ecc_where_volatile_is_unsupported(nvml: Any, problems: Problems) -> None:
    nvml.gpus[1].values.update(volatile=False, dbe=5)
    c = make(nvml, problems)
    c.collect(0)
    nvml.gpus[1].values.update(dbe=7)
    facts = c.collect(1000).facts
    assert [(f.payload["gpu"], f.payload["count"]) for f in facts] == [(1, 2)]
    assert problems.counts[("nvml", "unsupported")] == 2  # volatile sbe and dbe of GPU 1, once each


def test_unsupported_link_maximum_and_throttle_reasons_read_as_null(problems: Problems) -> None:
    nv = fake_pynvml(
        not_supported=frozenset(
            {
                "nvmlDeviceGetMaxPcieLinkGeneration",
                "nvmlDeviceGetMaxPcieLinkWidth",
                "nvmlDeviceGetCurrentClocksEventReasons",
                "nvmlDeviceGetCurrentClocksThrottleReasons",
            }
        )
    )
    g = make(nv, problems).collect(0).gpus[0]
    assert (g["pcie_link_gen_max"], g["pcie_link_width_max"], g["throttle_reasons"]) == (None, None, None)


def test_older_bindings_read_throttle_reasons_by_their_deprecated_name(problems: Problems) -> None:
    """nvidia-ml-py before 12.535 has only ``nvmlDeviceGetCurrentClocksThrottleReasons``."""
    nv = fake_pynvml(absent=frozenset({"nvmlDeviceGetCurrentClocksEventReasons"}))
    nv.gpus[1].values["throttle"] = 0x4  # SW power cap
    c = make(nv, problems)
    assert c.collect(0).gpus[1]["throttle_reasons"] == 0x4
    assert c.collect(1000).gpus[1]["throttle_reasons"] == 0x4
    assert problems.counts[("nvml", "unsupported")] == 8  # once per GPU, not per poll


def test_the_fake_uses_the_real_bindings_names_and_values() -> None:
    """Every function and constant the fake plays exists in the installed nvidia-ml-py, constants equal."""
    import pynvml  # the real bindings: importing loads no driver (that happens at nvmlInit)

    fake = fake_pynvml()
    names = [n for n in vars(fake) if n.startswith(("nvml", "NVML"))]
    assert "nvmlDeviceGetCurrentClocksEventReasons" in names and "nvmlDeviceGetMaxPcieLinkWidth" in names
    assert [n for n in names if not hasattr(pynvml, n)] == []
    # NVML_NVLINK_MAX_LINKS is a cap that grows with the bindings (18 in 12.x, 36 in 13.x); an H100 has 18
    consts = [n for n in names if not callable(getattr(fake, n)) and n != "NVML_NVLINK_MAX_LINKS"]
    assert {n: getattr(fake, n) for n in consts} == {n: getattr(pynvml, n) for n in consts}
