from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ground.settings.agent import KernelLogSettings
from producers.agent.collector import Problems
from producers.agent.kernel_log import KernelLogCollector
from producers.agent.kernel_sources import KmsgSource
from producers.agent.testing import GPU_BUSES, FixtureHost
from producers.agent.units import Units

BOOT_MS = 1_700_000_000_000


def collector(host: FixtureHost, problems: Problems, **kwargs: Any) -> KernelLogCollector:
    units = Units()
    units.set_gpus(list(GPU_BUSES))
    units.port_by_pci = {"0000:1a:00.0": 0}
    settings = KernelLogSettings(kmsg_path=host.kmsg, boot_id_path=host.boot_id, journalctl=False)
    return KernelLogCollector(settings, units, problems, boot_time=lambda: BOOT_MS, **kwargs)


def test_xid_becomes_the_simulators_event(host: FixtureHost, problems: Problems) -> None:
    host.log(
        "NVRM: Xid (PCI:0000:2a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
        ts_us=5_000_000,
    )
    obs = collector(host, problems).collect(0)
    [fact] = obs.facts
    assert fact.event_type == "XidRaised"
    assert fact.ts == BOOT_MS + 5000
    assert fact.payload == {
        "gpu": 1,
        "xid": 79,
        "pci_bus_id": "0000:2a:00.0",
        "message": "GPU has fallen off the bus.",
    }


def test_follows_appended_lines_and_resumes_after_restart(host: FixtureHost, problems: Problems) -> None:
    c = collector(host, problems)
    host.fall_off_bus(0)
    assert len(c.collect(0).facts) == 1
    assert c.collect(0).facts == []  # nothing new
    host.fall_off_bus(1)
    assert [f.payload["gpu"] for f in c.collect(0).facts] == [1]
    saved = c.state()
    c.close()
    host.fall_off_bus(2)  # while the agent was down
    again = collector(host, problems)
    again.restore(saved)
    assert [f.payload["gpu"] for f in again.collect(0).facts] == [2]  # the ring buffer is not re-emitted


def test_a_new_boot_reads_the_whole_buffer(host: FixtureHost, problems: Problems) -> None:
    host.fall_off_bus(0)
    c = collector(host, problems)
    c.collect(0)
    saved = c.state()
    host.boot_id.write_text("another-boot\n")
    rebooted = collector(host, problems)
    rebooted.restore(saved)
    assert len(rebooted.collect(0).facts) == 1


def test_bad_lines_are_counted_never_raised(host: FixtureHost, problems: Problems) -> None:
    with host.kmsg.open("a") as f:
        f.write("garbage line with no header\n")
        f.write("3,1,1,-;NVRM: Xid (PCI:0000:18:\n")  # truncated
        f.write(" SUBSYSTEM=pci\n")  # continuation: ignored, not a problem
        f.write("3,2,2,-;NVRM: Xid (PCI:0000:18:00): 999, something new\n")  # unknown XID: sent, counted
        f.write(
            "3,3,3,-;NVRM: Xid (PCI:0000:77:00): 79, GPU has fallen off the bus.\n"
        )  # not this host's GPU
        f.write("3,4,4,-;nvidia-nvswitch0: SXid (PCI:0000:06:00.0): 12028, Non-fatal, Link 3\n")
        f.write(b"3,5,5,-;\xff\xfe NVRM: Xid (PCI:0000:18:00): 13, bytes\n".decode("latin-1"))
    obs = collector(host, problems).collect(0)
    assert [f.payload["xid"] for f in obs.facts] == [999, 13]
    c = problems.counts
    assert c[("kernel_log", "garbled_record")] == 1
    assert c[("kernel_log", "garbled_line")] == 1
    assert c[("kernel_log", "unknown_xid")] == 1
    assert c[("kernel_log", "unmapped_gpu")] == 1
    assert c[("kernel_log", "nvswitch_sxid")] == 1


def test_link_and_aer_lines(host: FixtureHost, problems: Problems) -> None:
    host.log("mlx5_core 0000:1a:00.0 ibp26s0: Link down")
    host.log(
        "nvidia 0000:5d:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)"
    )
    facts = collector(host, problems).collect(0).facts
    assert facts[0].payload == {"port": 0, "kind": "carrier_change", "count": 1, "peer": None}
    assert facts[1].payload == {
        "gpu": 3,
        "device": "0000:5d:00.0",
        "severity": "fatal",
        "error_type": "transaction_layer",
    }
    host.log("nvidia 0000:5d:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)")
    assert collector(host, problems, emit_aer=False).collect(0).facts[1:] == []  # sysfs AER counts instead


def test_unreadable_kmsg_without_journal_is_counted(tmp_path: Path, problems: Problems) -> None:
    settings = KernelLogSettings(kmsg_path=tmp_path, boot_id_path=tmp_path / "none", journalctl=False)
    c = KernelLogCollector(settings, Units(), problems)
    assert c.collect(0).facts == []
    assert c.collect(0).facts == []
    assert problems.counts[("kernel_log", "no_kernel_log")] == 2
    assert problems.counts[("kernel_log", "no_boot_id")] == 1


def test_journal_fallback_reads_json_and_keeps_the_cursor(tmp_path: Path, problems: Problems) -> None:
    entries = tmp_path / "journal.json"
    entries.write_text(
        '{"MESSAGE": "NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the bus.",'
        ' "__REALTIME_TIMESTAMP": "1700000000123456", "__CURSOR": "s=abc", "_BOOT_ID": "b"}\n'
        "not json\n"
    )
    seen: list[str | None] = []

    def command(cursor: str | None) -> list[str]:
        seen.append(cursor)
        return ["cat", str(entries)]

    units = Units()
    units.set_gpus(["0000:18:00.0"])
    settings = KernelLogSettings(kmsg_path=tmp_path / "missing", boot_id_path=tmp_path / "none")
    c = KernelLogCollector(settings, units, problems, journal_command=command)
    c.restore({"cursor": "s=old"})
    facts: list[Any] = []
    for _ in range(50):
        facts += c.collect(0).facts
        if c.cursor == "s=abc" and problems.counts[("kernel_log", "garbled_journal_entry")]:
            break
        import time

        time.sleep(0.02)
    c.close()
    assert seen == ["s=old"]
    assert [(f.ts, f.payload["xid"]) for f in facts] == [(1_700_000_000_123, 79)]
    assert c.state()["cursor"] == "s=abc"


@pytest.mark.skipif(not os.access("/dev/kmsg", os.R_OK), reason="/dev/kmsg is not readable here")
def test_the_real_kmsg_device_reads_one_record_per_read(problems: Problems) -> None:
    source = KmsgSource(Path("/dev/kmsg"), "boot", 0, problems)
    try:
        lines = list(source.read(None, 50))
    finally:
        source.close()
    assert lines, "the ring buffer holds records since boot"
    seqs = [line.seq for line in lines]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert problems.counts[("kernel_log", "garbled_record")] == 0


def test_permission_denied_on_kmsg_is_counted(
    host: FixtureHost, problems: Problems, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def deny(path: Any, flags: int, *args: Any) -> int:
        if Path(path) == host.kmsg:
            raise PermissionError(13, "Operation not permitted", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", deny)
    c = collector(host, problems)
    assert c.collect(0).facts == [] and c.collect(0).facts == []
    assert problems.counts[("kernel_log", "permission_denied")] == 2
    assert problems.counts[("kernel_log", "no_kernel_log")] == 2  # journalctl is off in this test
    monkeypatch.setattr(os, "open", real_open)
    host.fall_off_bus(0)
    assert len(c.collect(0).facts) == 1  # readable again: picked up on the next poll
