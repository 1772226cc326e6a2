"""PCIe AER collector: ``/sys/bus/pci/devices/<BDF>/aer_dev_{correctable,nonfatal,fatal}`` deltas.

Each file lists ``Name count`` lines and a ``TOTAL_ERR_*`` line; an increase of a named counter
becomes one ``PcieAerReported`` (count folded into one event per error type and poll).
"""

from __future__ import annotations

from typing import Any

from ground.settings.agent import AerSettings
from producers.agent.collector import Fact, Observation, Problems
from producers.agent.counters import CounterSet
from producers.agent.sysfs import SysfsReader
from producers.agent.units import Units

SOURCE = "aer"
SEVERITY_FILES = {
    "correctable": "aer_dev_correctable",
    "nonfatal": "aer_dev_nonfatal",
    "fatal": "aer_dev_fatal",
}


def parse_aer_file(text: str) -> tuple[dict[str, int], list[str]]:
    """Counters of one aer_dev_* file (totals dropped) and the lines that did not parse."""
    counts: dict[str, int] = {}
    bad: list[str] = []
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 2 or not (parts[1].isascii() and parts[1].isdigit()):
            bad.append(line)
        elif not parts[0].startswith("TOTAL_"):
            counts[parts[0]] = int(parts[1])
    return counts, bad


def error_type(name: str) -> str:
    """``RxErr`` → ``rxerr``, ``CmpltTO`` → ``cmpltto``: the kernel's names, lower-cased."""
    return name.lower()


class AerCollector:
    name = SOURCE

    def __init__(self, settings: AerSettings, reader: SysfsReader, units: Units, problems: Problems) -> None:
        self.settings, self.reader, self.units, self.problems = settings, reader, units, problems
        self.interval_s = settings.interval_s
        self.counters = CounterSet()
        self.devices = [
            d
            for d in reader.listdir(reader.root / "bus" / "pci" / "devices")
            if (d / SEVERITY_FILES["correctable"]).exists()
        ]

    def state(self) -> dict[str, Any]:
        return {"counters": self.counters.state()}

    def restore(self, state: dict[str, Any]) -> None:
        self.counters.restore(state.get("counters", {}))

    def collect(self, now_ms: int) -> Observation:
        obs = Observation()
        for dev in self.devices:
            bdf = dev.name.lower()
            for severity, filename in SEVERITY_FILES.items():
                text = self.reader.text(dev / filename)
                if text is None:
                    continue
                counts, bad = parse_aer_file(text)
                for line in bad:
                    self.problems.add(SOURCE, "garbled_line", f"{bdf}/{filename}", line[:80])
                for name, value in counts.items():
                    d = self.counters.delta(f"{bdf}:{severity}:{name}", value)
                    if d.outcome == "reset":
                        self.problems.add(SOURCE, "counter_reset", f"{bdf}/{filename}/{name}")
                    if d.value > 0 and d.outcome != "first":
                        payload = {
                            "gpu": self.units.gpu(bdf),
                            "device": bdf,
                            "severity": severity,
                            "error_type": error_type(name),
                        }
                        obs.facts.append(Fact("PcieAerReported", now_ms, payload, SOURCE))
        return obs

    def close(self) -> None:
        return None
