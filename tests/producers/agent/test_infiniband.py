from __future__ import annotations

from pathlib import Path

import pytest

from ground.settings.agent import InfinibandSettings
from producers.agent.collector import Problems
from producers.agent.infiniband import InfinibandCollector
from producers.agent.sysfs import SysfsReader
from producers.agent.testing import FixtureHost
from producers.agent.units import Units


def make(host: FixtureHost, problems: Problems, threshold: int = 10) -> InfinibandCollector:
    return InfinibandCollector(
        InfinibandSettings(symbol_error_threshold=threshold),
        SysfsReader(host.sys, problems, "infiniband"),
        problems,
    )


def kinds(c: InfinibandCollector, now_ms: int) -> list[tuple[int, str, int]]:
    return [(f.payload["port"], f.payload["kind"], f.payload["count"]) for f in c.collect(now_ms).facts]


def test_ports_inventory_and_fabric(host: FixtureHost, problems: Problems) -> None:
    c = make(host, problems)
    assert [(p.index, p.device, p.port, p.pci) for p in c.ports][:2] == [
        (0, "mlx5_0", 1, "0000:1a:00.0"),
        (1, "mlx5_1", 1, "0000:2c:00.0"),
    ]
    assert c.inventory()["fabric"] == "infiniband"
    assert len(c.inventory()["nics"]) == 8


def test_roce_ports_say_roce(tmp_path: Path, problems: Problems) -> None:
    host = FixtureHost(tmp_path / "h", nics=2, link_layer="Ethernet")
    assert make(host, problems).inventory()["fabric"] == "roce"


def test_flap_down_up_and_symbol_errors(host: FixtureHost, problems: Problems) -> None:
    c = make(host, problems)
    assert kinds(c, 0) == []
    host.flap(3, times=2)
    assert kinds(c, 1000) == [(3, "flap", 2)]
    host.set_state(5, active=False)
    host.flap(5)
    assert kinds(c, 2000) == [(5, "down", 1)]
    host.set_state(5, active=True)
    assert kinds(c, 3000) == [(5, "up", 1)]
    host.add_counter(1, "symbol_error", 9)
    assert kinds(c, 4000) == []
    host.add_counter(1, "symbol_error", 12)
    assert kinds(c, 5000) == [(1, "symbol_errors", 12)]


def test_throughput_in_four_byte_units(host: FixtureHost, problems: Problems) -> None:
    c = make(host, problems)
    c.collect(0)
    host.add_counter(0, "port_rcv_data", 50 * 10**9 // 32)  # 50 Gb in 1 s, counted in 4-byte words
    obs = c.collect(1000)
    assert obs.nics[0]["rx_bytes"] * 8 == 50 * 10**9 // 32 * 32
    assert obs.nics[0]["dt_ms"] == 1000


def test_counters_going_backwards_and_wrapping(host: FixtureHost, problems: Problems) -> None:
    c = make(host, problems)
    host.set_counter(2, "link_downed", 254)
    c.collect(0)
    host.set_counter(2, "link_downed", 1)  # 8-bit counter wrapped: 255, 0, 1
    assert kinds(c, 1000) == [(2, "flap", 3)]
    host.set_counter(2, "port_xmit_data", 10**9)
    c.collect(2000)
    host.set_counter(2, "port_xmit_data", 10)  # reset (port reset / driver reload)
    obs = c.collect(3000)
    assert obs.nics[2]["tx_bytes"] == 40
    assert problems.counts[("infiniband", "counter_wrapped")] == 1
    assert problems.counts[("infiniband", "counter_reset")] == 1


def test_missing_and_unreadable_files_are_counted(
    host: FixtureHost, problems: Problems, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = make(host, problems)
    (host.port_dir(0) / "counters" / "symbol_error").unlink()
    (host.port_dir(1) / "state").write_text("garbage\n")
    (host.port_dir(2) / "counters" / "link_downed").write_text("not a number\n")
    denied = host.port_dir(3) / "counters" / "port_rcv_data"
    real = Path.read_text

    def read_text(self: Path, *a: object, **k: object) -> str:
        if self == denied:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_text", read_text)
    for t in range(3):
        c.collect(t * 1000)
    assert problems.counts[("infiniband", "missing_file")] == 3
    assert problems.counts[("infiniband", "garbled_value")] == 3
    assert problems.counts[("infiniband", "permission_denied")] == 3


def test_a_lost_adapter_is_reported_once_and_its_return_resumes_readings(
    tmp_path: Path, problems: Problems
) -> None:
    host = FixtureHost(tmp_path / "h", nics=4)
    c = make(host, problems)
    c.collect(0)
    host.lose_nic(2)
    obs = c.collect(1000)
    assert [(f.payload["port"], f.payload["kind"]) for f in obs.facts] == [(2, "nic_lost")]
    assert sorted(obs.nics) == [0, 1, 3]  # nothing read for the lost port, the others keep their numbers
    assert kinds(c, 2000) == []  # once, not every poll
    FixtureHost(tmp_path / "h", nics=4)  # the driver is back
    obs = c.collect(3000)
    assert obs.facts == [] and sorted(obs.nics) == [0, 1, 2, 3]
    host.lose_nic(2)
    assert kinds(c, 4000) == [(2, "nic_lost", 1)]  # lost again after it came back: a second loss


def test_ports_keep_their_numbers_across_a_restart_with_an_adapter_gone(
    tmp_path: Path, problems: Problems
) -> None:
    host = FixtureHost(tmp_path / "h", nics=4)
    first = make(host, problems)
    first.collect(0)
    saved = first.state()
    host.lose_nic(1)  # while the agent was down

    units = Units()
    again = InfinibandCollector(
        InfinibandSettings(), SysfsReader(host.sys, problems, "infiniband"), problems, units
    )
    assert [p.device for p in again.ports] == ["mlx5_0", "mlx5_2", "mlx5_3"]  # as found: renumbered
    again.restore(saved)
    assert [(p.index, p.device) for p in again.ports] == [
        (0, "mlx5_0"),
        (1, "mlx5_1"),
        (2, "mlx5_2"),
        (3, "mlx5_3"),
    ]
    assert units.port_by_pci["0000:2c:00.0"] == 1 and len(again.inventory()["nics"]) == 4
    host.flap(2)
    assert sorted(kinds(again, 1000)) == [(1, "nic_lost", 1), (2, "flap", 1)]

    restarted = make(host, problems)
    restarted.restore(again.state())
    assert kinds(restarted, 2000) == []  # already reported before this restart
