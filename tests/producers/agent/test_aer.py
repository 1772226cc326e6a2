from __future__ import annotations

from ground.settings.agent import AerSettings
from producers.agent.aer import AerCollector, parse_aer_file
from producers.agent.collector import Problems
from producers.agent.sysfs import SysfsReader
from producers.agent.testing import GPU_BUSES, FixtureHost
from producers.agent.units import Units


def make(host: FixtureHost, problems: Problems) -> AerCollector:
    units = Units()
    units.set_gpus(list(GPU_BUSES))
    return AerCollector(AerSettings(), SysfsReader(host.sys, problems, "aer"), units, problems)


def test_parse_drops_totals_and_reports_garbage() -> None:
    counts, bad = parse_aer_file("RxErr 3\nBadTLP 0\nTOTAL_ERR_COR 3\nbroken line here\n")
    assert counts == {"RxErr": 3, "BadTLP": 0}
    assert bad == ["broken line here"]


def test_increases_become_events(host: FixtureHost, problems: Problems) -> None:
    c = make(host, problems)
    host.set_aer(GPU_BUSES[2], "aer_dev_correctable", {"RxErr": 4})  # before the first read: baseline
    assert c.collect(0).facts == []
    host.set_aer(GPU_BUSES[2], "aer_dev_correctable", {"RxErr": 6})
    host.set_aer(GPU_BUSES[5], "aer_dev_fatal", {"CmpltTO": 1})
    facts = c.collect(1000).facts
    assert [f.payload for f in facts] == [
        {"gpu": 2, "device": GPU_BUSES[2], "severity": "correctable", "error_type": "rxerr"},
        {"gpu": 5, "device": GPU_BUSES[5], "severity": "fatal", "error_type": "cmpltto"},
    ]
    assert c.collect(2000).facts == []


def test_missing_file_and_garbage_are_counted(host: FixtureHost, problems: Problems) -> None:
    c = make(host, problems)
    (host.pci(GPU_BUSES[0]) / "aer_dev_fatal").unlink()
    (host.pci(GPU_BUSES[1]) / "aer_dev_nonfatal").write_text("???\n")
    c.collect(0)
    c.collect(1000)
    assert problems.counts[("aer", "missing_file")] == 2
    assert problems.counts[("aer", "garbled_line")] == 2
