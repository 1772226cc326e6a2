"""dcgm-exporter scraper against a recorded page.

The page follows the format dcgm-exporter's README shows for `curl localhost:9400/metrics` (NVIDIA/dcgm-exporter,
labels gpu, UUID, pci_bus_id, device, modelName, Hostname; err_code/err_msg on the XID gauge); the
placeholders (SBE0, DBE1, ...) are filled in by each test to play a GPU's counters over time.
"""

from __future__ import annotations

from collections.abc import Callable

from ground.settings.agent import DcgmSettings
from producers.agent.assemble import SampleWindow
from producers.agent.collector import Problems
from producers.agent.dcgm import DcgmCollector
from producers.agent.testing import GPU_BUSES
from producers.agent.units import Units
from tests.producers.agent.conftest import FIXTURES

PAGE = (FIXTURES / "dcgm_exporter.prom").read_text()


def page(
    sbe0: int = 0, dbe1: int = 0, rows1: int = 0, fail1: int = 0, xid1: int = 0, replay1: int = 0
) -> str:
    values = {"SBE0": sbe0, "DBE1": dbe1, "ROWS1": rows1, "FAIL1": fail1, "XID1": xid1, "REPLAY1": replay1}
    text = PAGE
    for key, value in values.items():
        text = text.replace(key, str(value))
    return text


def scraper(pages: Callable[[], str], problems: Problems) -> DcgmCollector:
    units = Units()
    units.set_gpus(list(GPU_BUSES))
    return DcgmCollector(DcgmSettings(enabled=True), units, problems, lambda url, timeout_s: pages())


def test_fields_become_readings_and_events(problems: Problems) -> None:
    current = {"text": page()}
    c = scraper(lambda: current["text"], problems)
    first = c.collect(0)
    assert first.facts == []
    assert first.gpus[1]["temp_c"] == 83 and first.gpus[1]["sm_clock_mhz"] == 1410
    assert first.gpus[0]["power_w"] == 652.318
    current["text"] = page(sbe0=4, dbe1=2, rows1=1, xid1=79, replay1=9)
    obs = c.collect(10_000)
    events = sorted(
        (f.event_type, f.payload["gpu"], f.payload.get("xid"), f.payload.get("row_remap")) for f in obs.facts
    )
    assert events == [
        ("EccErrorObserved", 0, None, "none"),
        ("EccErrorObserved", 1, None, "remap_event"),
        ("XidRaised", 1, 79, None),
    ]
    assert (
        obs.gpus[1]["pcie_replay"] == 9 and obs.gpus[1]["ecc_dbe"] == 2 and obs.gpus[1]["retired_pages"] == 1
    )
    current["text"] = page(sbe0=4, dbe1=2, rows1=1, fail1=1, xid1=79, replay1=9)
    facts = c.collect(20_000).facts
    assert [(f.payload["row_remap"], f.payload["count"]) for f in facts] == [
        ("remap_failure", 1)
    ]  # the XID gauge did not change


def test_scrape_failures_and_garbage_are_counted(problems: Problems) -> None:
    c = scraper(lambda: 'DCGM_FI_DEV_GPU_TEMP{gpu="0" 61\n', problems)
    assert c.collect(0).gpus == {}
    down = DcgmCollector(
        DcgmSettings(enabled=True, url="http://127.0.0.1:9/metrics", timeout_s=0.2), Units(), problems
    )
    assert down.collect(0).facts == []
    assert problems.counts[("dcgm", "garbled_page")] == 1
    assert problems.counts[("dcgm", "scrape_failed")] == 1


def test_the_xid_count_catches_repeats_the_last_xid_gauge_misses(problems: Problems) -> None:
    """dcgm-exporter issues 190/500/502: a repeated XID leaves DCGM_FI_DEV_XID_ERRORS unchanged."""
    count = {"n": 0}

    def text() -> str:
        return (
            page(xid1=79)
            + "# TYPE DCGM_EXP_XID_ERRORS_COUNT gauge\n"
            + f'DCGM_EXP_XID_ERRORS_COUNT{{gpu="1",pci_bus_id="00000000:2A:00.0",window_size_in_ms="300000",xid="79"}} {count["n"]}\n'
        )

    c = scraper(text, problems)
    c.collect(0)
    count["n"] = 2  # two more XID 79s; the last-XID gauge still says 79
    facts = [f for f in c.collect(10_000).facts if f.event_type == "XidRaised"]
    assert [(f.payload["gpu"], f.payload["xid"]) for f in facts] == [(1, 79), (1, 79)]
    count["n"] = 1  # one aged out of the exporter's window: nothing new
    assert [f for f in c.collect(20_000).facts if f.event_type == "XidRaised"] == []


def v2_lines(gpu: int, bus: str, fields: dict[str, int]) -> str:
    labels = f'gpu="{gpu}",UUID="GPU-5f1e9b1a-0000-4000-8000-00000000000{gpu}",pci_bus_id="{bus}",device="nvidia{gpu}"'
    return "".join(f"# TYPE {name} gauge\n{name}{{{labels}}} {value}\n" for name, value in fields.items())


def test_the_pcie_maximum_and_clocks_event_reasons_fill_the_v2_fields(problems: Problems) -> None:
    extra = v2_lines(
        0,
        "00000000:18:00.0",
        {
            "DCGM_FI_DEV_PCIE_MAX_LINK_GEN": 5,
            "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH": 16,
            "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": 0x60,
        },
    )
    extra += v2_lines(1, "00000000:2A:00.0", {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": 0x4})  # DCGM before 3.3
    window = SampleWindow()
    window.add(scraper(lambda: page() + extra, problems).collect(0))
    g0, g1 = window.payload(10, None, None)["gpus"]
    assert (g0["pcie_link_gen_max"], g0["pcie_link_width_max"], g0["throttle_reasons"]) == (5, 16, 0x60)
    assert (g1["pcie_link_gen_max"], g1["pcie_link_width_max"], g1["throttle_reasons"]) == (None, None, 0x4)


def test_an_exporter_without_the_v2_fields_leaves_them_null(problems: Problems) -> None:
    window = SampleWindow()
    window.add(scraper(page, problems).collect(0))
    for g in window.payload(10, None, None)["gpus"]:
        assert (g["pcie_link_gen_max"], g["pcie_link_width_max"], g["throttle_reasons"]) == (None, None, None)
