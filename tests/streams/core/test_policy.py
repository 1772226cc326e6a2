"""The policy file: defaults load, and every mistake names its key."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from streams.core.errors import PolicyError
from streams.core.policy import DEFAULT_POLICY_FILE, load_policy, parse_policy
from streams.core.policy_fields import parse_duration_ms


def default_data() -> dict:
    return tomllib.loads(DEFAULT_POLICY_FILE.read_text())


def test_default_policy_has_design_rules() -> None:
    policy = load_policy()
    rules = {r.name: r for r in policy.rules}
    assert rules["dram_uce_repeat_gpu"].count == 2 and rules["dram_uce_repeat_gpu"].window == 7 * 86_400_000
    assert rules["fell_off_bus_repeat_gpu"].window == 30 * 86_400_000
    assert rules["fatal_xid_burst"].count == 5 and rules["fatal_xid_burst"].window == 86_400_000
    assert rules["row_remap_failure"].detector == "critical_fault"  # count 1: not a repeat offender
    assert set(policy.noise_xids) == {13, 31, 43, 45, 63, 68, 92}


@pytest.mark.parametrize(
    ("text", "ms"),
    [("90s", 90_000), ("5m", 300_000), ("24h", 86_400_000), ("7d", 604_800_000), (2, 2000), ("250ms", 250)],
)
def test_durations(text: object, ms: int) -> None:
    assert parse_duration_ms(text) == ms


def test_bad_duration_names_the_key() -> None:
    data = default_data()
    data["rules"][2]["window"] = "seven days"
    with pytest.raises(PolicyError) as err:
        parse_policy(data, "my.toml")
    assert err.value.key == "rules.2.window"
    assert "my.toml" in str(err.value) and "seven days" in str(err.value)


def test_unknown_class_in_rule_names_the_key() -> None:
    data = default_data()
    data["rules"][0]["classes"] = ["dram_uec"]
    with pytest.raises(PolicyError, match=r"rules\.0\.classes: unknown error class 'dram_uec'"):
        parse_policy(data)


def test_counting_a_noise_xid_is_refused() -> None:
    data = default_data()
    data["classes"].append({"name": "pagefault", "event_type": "XidRaised", "xids": [31]})
    with pytest.raises(PolicyError) as err:
        parse_policy(data)
    assert err.value.key.startswith("classes.") and "noise" in str(err.value)


def test_unknown_key_and_bad_k_of_n(tmp_path: Path) -> None:
    data = default_data()
    data["slow_host"]["zz"] = 1
    with pytest.raises(PolicyError, match=r"slow_host\.zz"):
        parse_policy(data)
    bad = tmp_path / "p.toml"
    bad.write_text("[slow_host]\nk = 6\nn = 5\n")
    with pytest.raises(PolicyError, match="slow_host"):
        load_policy(bad)


def test_missing_file_and_syntax_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="file not found"):
        load_policy(tmp_path / "nope.toml")
    broken = tmp_path / "b.toml"
    broken.write_text("[planner\n")
    with pytest.raises(PolicyError, match="syntax"):
        load_policy(broken)


def test_a_file_naming_one_repair_time_keeps_the_others() -> None:
    """``repair_time = {rma = "3d"}`` must not turn a 1 h reboot into the 1 d fallback."""
    data = default_data()
    data["planner"]["repair_time"] = {"rma": "3d"}
    policy = parse_policy(data)
    assert policy.repair_time_ms("rma") == parse_duration_ms("3d")
    assert policy.repair_time_ms("reboot") == parse_duration_ms("1h")
    assert policy.repair_time_ms("diagnostics") == parse_duration_ms("4h")
