"""The agent never emits an impossible value: resets not negatives, clamped counters, ASCII XIDs, clean text."""

from __future__ import annotations

from pathlib import Path

import pytest

from producers.agent.bounded import bounded_fact, bounded_sample
from producers.agent.build import build_agent
from producers.agent.collector import Fact, Problems
from producers.agent.counters import counter_delta
from producers.agent.errors import AgentError
from producers.agent.kmsg import classify_line
from producers.agent.sysfs import SysfsReader
from producers.agent.testing import GPU_BUSES, FixtureHost
from schemas import Codec
from schemas.bounds import INT_MAX
from tests.producers.agent.test_agent import run_rounds
from tests.producers.agent.test_infiniband import make

NOW = 1_800_000_000_000


def test_a_counter_falling_below_its_documented_width_is_a_reset_never_negative() -> None:
    """Finding 12: sysfs link_downed 1000 → 5 became -739 (an 8-bit "wrap" from a value 8 bits cannot hold)."""
    assert counter_delta(1000, 5, bits=8) == (5, "reset")
    assert counter_delta(250, 3, bits=8) == (9, "wrapped")  # a real wrap still counts as one


def test_link_downed_never_goes_negative(host: FixtureHost, problems: Problems) -> None:
    host.set_counter(0, "link_downed", 1000)
    c = make(host, problems)
    c.collect(NOW)
    host.set_counter(0, "link_downed", 5)
    reading = c.collect(NOW + 1000).nics[0]
    assert reading["link_downed"] == 5 and reading["carrier_changes"] == 10


def test_a_counter_beyond_a_long_keeps_the_sample(host: FixtureHost, tmp_path: Path) -> None:
    """Finding 12: a counter above 2^63 dropped the whole HostSampled."""
    host.set_counter(0, "symbol_error", 1)
    _, saved = run_rounds(host, tmp_path / "s", 1)
    host.set_counter(0, "symbol_error", 2**64 + 7)
    host.set_counter(1, "link_downed", 2**40)
    records, _ = run_rounds(host, tmp_path / "s", 11, saved=saved)
    samples = [r for r in records if r["event_type"] == "HostSampled"]
    assert samples, [r["event_type"] for r in records]
    codec = Codec()
    for r in samples:
        assert codec.decode(codec.encode(r)).record == r
        assert all(
            0 <= n["symbol_errors"] < 2**63 and 0 <= n["link_downed"] <= INT_MAX for n in r["payload"]["nics"]
        )


def test_sample_values_are_clamped_per_field() -> None:
    payload = {
        "interval_s": 10,
        "job_id": "j\x1b[2J",
        "step_time_ms": float("nan"),
        "bus_bw_gbps": 1e300,
        "gpus": [{"gpu": 0, "ecc_sbe": 2**70, "temp_c": -1e300, "throttle_reasons": 2**64}],
        "nics": [{"port": 0, "symbol_errors": -5, "link_downed": 2**40, "rx_gbps": 1.0}],
    }
    out = bounded_sample(payload)
    assert out["job_id"] == "j[2J" and out["step_time_ms"] == 0.0 and out["bus_bw_gbps"] < 3.5e38
    assert out["gpus"][0]["ecc_sbe"] == INT_MAX and out["gpus"][0]["throttle_reasons"] == 2**63 - 1
    assert out["gpus"][0]["temp_c"] > -3.5e38
    assert out["nics"][0]["symbol_errors"] == 0 and out["nics"][0]["link_downed"] == INT_MAX


def test_only_ascii_digits_are_an_xid() -> None:
    """Finding 12: the Arabic-Indic digit ٣ was parsed as XID 3 (Unicode \\d)."""
    bus = GPU_BUSES[0][:-2]
    assert classify_line(f"NVRM: Xid (PCI:{bus}): 3, pid=1, name=x, text").code == 3  # type: ignore[union-attr]
    event = classify_line(f"NVRM: Xid (PCI:{bus}): \u0663, pid=1, name=x, text")
    assert event is None or event.kind == "garbled"
    event = classify_line(f"NVRM: Xid (PCI:{bus}): \uff17\uff19, pid=1, name=x, text")  # fullwidth 79
    assert event is None or event.kind == "garbled"


def test_sysfs_reads_ascii_digits_only(tmp_path: Path) -> None:
    problems = Problems()
    (tmp_path / "c").write_text("\u0663\n")
    assert SysfsReader(tmp_path, problems, "t").integer(tmp_path / "c") is None
    assert problems.total() == 1


def test_xids_beyond_an_int_and_absurd_times_are_refused_alone(host: FixtureHost, tmp_path: Path) -> None:
    """Finding 12: XIDs ≥ 2^31 and absurd timestamps reached --print."""
    bus = GPU_BUSES[1][:-2]
    host.log(f"NVRM: Xid (PCI:{bus}): 2147483648, pid=1, name=x, too big")
    host.fall_off_bus(2)
    records, _ = run_rounds(host, tmp_path / "s", 11)
    xids = [r["payload"]["xid"] for r in records if r["event_type"] == "XidRaised"]
    assert xids == [79]
    assert any(r["event_type"] == "HostSampled" for r in records)


def test_fact_times_outside_the_bounds_are_refused() -> None:
    fact = Fact("XidRaised", NOW, {"gpu": 0, "xid": 79, "pci_bus_id": "0000:1b:00.0", "message": "m"}, "t")
    assert isinstance(bounded_fact(fact, NOW), Fact)
    for ts in (0, 946_684_799_999, NOW + 2 * 86_400_000, 2**63):
        assert isinstance(bounded_fact(fact._replace(ts=ts), NOW), str)
    assert isinstance(bounded_fact(fact._replace(payload={**fact.payload, "gpu": -1}), NOW), str)


def test_control_and_bidi_characters_are_stripped_from_messages(host: FixtureHost, tmp_path: Path) -> None:
    """Finding 12: NUL, ESC and bidi controls passed into messages."""
    bus = GPU_BUSES[3][:-2]
    host.log(f"NVRM: Xid (PCI:{bus}): 79, pid=1, name=x, GPU \x1b[31mhas\u202e fallen\x00 off\u2066 the bus")
    records, _ = run_rounds(host, tmp_path / "s", 11)
    (xid,) = [r for r in records if r["event_type"] == "XidRaised"]
    message = xid["payload"]["message"]
    assert message == "GPU [31mhas fallen off the bus", message


def test_a_host_id_outside_the_id_rule_stops_the_agent_with_one_line(
    host: FixtureHost, tmp_path: Path
) -> None:
    with pytest.raises(AgentError, match="breaks the id rule"):
        build_agent(host.agent_settings(tmp_path / "s", host_id="bad host\x1b"), lambda records, state: None)
