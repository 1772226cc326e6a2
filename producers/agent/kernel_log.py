"""Kernel-log collector: XID, PCIe AER and mlx5 link lines become the simulator's fault events.

It resumes from the (boot id, sequence number) kept in the agent's state, so a restart never
re-emits the ring buffer; after a reboot (new boot id) the new boot's records are all new.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from typing import Any

from ground.settings.agent import KernelLogSettings
from producers.agent.collector import Fact, Observation, Problems
from producers.agent.kernel_sources import SOURCE, JournalSource, KmsgSource, LogLine
from producers.agent.kmsg import KernelEvent, classify_line
from producers.agent.units import Units
from schemas.xids import XID_NAMES, xid_name

log = logging.getLogger(__name__)
MAX_LINES_PER_POLL = 1_000_000


def boot_time_ms() -> int:
    """Wall-clock time of boot: kmsg stamps are microseconds since boot (CLOCK_BOOTTIME)."""
    return int((time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)) * 1000)


class KernelLogCollector:
    name = SOURCE

    def __init__(
        self,
        settings: KernelLogSettings,
        units: Units,
        problems: Problems,
        *,
        emit_aer: bool = True,
        boot_time: Callable[[], int] = boot_time_ms,
        journal_command: Callable[[str | None], list[str]] | None = None,
    ) -> None:
        self.settings, self.units, self.problems, self.emit_aer = settings, units, problems, emit_aer
        self.interval_s = settings.interval_s
        self.boot_id = self._boot_id()
        self._boot_time = boot_time
        self._journal_command = journal_command
        self.saved_boot: str | None = None
        self.seq: int | None = None
        self.cursor: str | None = None
        self.source: KmsgSource | JournalSource | None = None
        self.lines = 0

    def _boot_id(self) -> str:
        try:
            return self.settings.boot_id_path.read_text().strip()
        except OSError:
            self.problems.add(SOURCE, "no_boot_id", str(self.settings.boot_id_path))
            return ""

    def state(self) -> dict[str, Any]:
        return {"boot_id": self.boot_id, "seq": self.seq, "cursor": self.cursor}

    def restore(self, state: dict[str, Any]) -> None:
        self.saved_boot = state.get("boot_id")
        self.cursor = state.get("cursor")
        # a saved sequence number means something only within the boot it was read in
        self.seq = state.get("seq") if self.saved_boot == self.boot_id else None

    def _open(self) -> KmsgSource | JournalSource | None:
        path = self.settings.kmsg_path
        try:
            return KmsgSource(path, self.boot_id, self._boot_time(), self.problems)
        except OSError as exc:
            kind = "permission_denied" if isinstance(exc, PermissionError) else "unreadable"
            self.problems.add(SOURCE, kind, str(path), str(exc))
        if self.settings.journalctl and (self._journal_command or shutil.which("journalctl")):
            log.info("following journalctl -k instead of %s", path)
            return JournalSource(self.cursor, self.problems, self._journal_command)
        self.problems.add(SOURCE, "no_kernel_log", str(path), "neither kmsg nor journalctl is readable")
        return None

    def collect(self, now_ms: int) -> Observation:
        obs = Observation()
        if self.source is None:
            self.source = self._open()
            if self.source is None:
                return obs
        kmsg = isinstance(self.source, KmsgSource)
        try:
            for line in self.source.read(self.seq, MAX_LINES_PER_POLL):
                self.lines += 1
                event = classify_line(line.message)
                if event is not None:
                    self._handle(event, line, obs)
                if kmsg:
                    self.seq = line.seq
        except OSError as exc:  # the device went away: counted, reopened on the next poll
            self.problems.add(SOURCE, "read_failed", str(self.settings.kmsg_path), str(exc))
            self.close()
            return obs
        if isinstance(self.source, JournalSource):
            self.cursor = self.source.cursor
        return obs

    def _handle(self, ev: KernelEvent, line: LogLine, obs: Observation) -> None:
        if ev.kind == "xid":
            gpu = self.units.gpu(ev.bus)
            if gpu is None:
                self.problems.add(SOURCE, "unmapped_gpu", ev.bus, line.message[:120])
                return
            if ev.code not in XID_NAMES:
                self.problems.add(SOURCE, "unknown_xid", str(ev.code), line.message[:120])
            payload = {
                "gpu": gpu,
                "xid": ev.code,
                "pci_bus_id": ev.bus,
                "message": xid_name(ev.code, ev.text),
            }
            obs.facts.append(Fact("XidRaised", line.ts_ms, payload, SOURCE))
        elif ev.kind == "gpu_at":
            self.units.learn_uuid(ev.bus, ev.text)  # the agent's inventory reads the units
        elif ev.kind == "aer" and self.emit_aer:
            severity, _, error_type = ev.text.partition(":")
            payload = {
                "gpu": self.units.gpu(ev.bus),
                "device": ev.bus,
                "severity": severity,
                "error_type": error_type,
            }
            obs.facts.append(Fact("PcieAerReported", line.ts_ms, payload, SOURCE))
        elif ev.kind == "link":
            port = self.units.port(ev.bus)
            if port is None:
                self.problems.add(SOURCE, "unmapped_port", ev.bus, line.message[:120])
                return
            # a kernel link line is a carrier change; the port counters (infiniband collector) count flaps
            payload = {"port": port, "kind": "carrier_change", "count": 1, "peer": None}
            obs.facts.append(Fact("LinkEventObserved", line.ts_ms, payload, SOURCE))
        elif ev.kind == "sxid":
            # the event schemas have no NVSwitch event: SXids are counted and logged once per code
            self.problems.add(SOURCE, "nvswitch_sxid", str(ev.code), line.message[:160])
        elif ev.kind == "garbled":
            self.problems.add(SOURCE, "garbled_line", ev.text[:40], ev.text)

    def close(self) -> None:
        if self.source is not None:
            self.source.close()
            self.source = None
