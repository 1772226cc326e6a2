"""A halt's evidence reads back as the numbers the planner's tests wrote, and the buffer rule is the planner's."""

from __future__ import annotations

import math

from ground.domain_buffer import PACKAGED_CAPACITY_BUFFER_PCT, budget
from ground.halt_evidence import ROLLBACK, parse_evidence
from streams.core.policy import load_policy
from streams.trains.safety import ClassVerdict
from streams.trains.step_time import StepVerdict


def test_the_pages_evidence_reads_back_as_its_numbers() -> None:
    worse = ClassVerdict("xid", 6.53, 5.94, "halt", 15, 56, 3.9, 64.5)
    slower = StepVerdict(6.2, 5.94, "halt", 12, math.log(1.1), 0.02)
    reason = f"{worse.evidence()}; {slower.evidence()}{ROLLBACK}fleetpulse train abort trn-1 --rollback"
    xid, step = parse_evidence(reason)
    est, lo, hi = worse.rate_ratio
    assert xid == {
        "test": "xid",
        "new_count": 15.0,
        "new_exposure": 3.9,
        "new_rate": round(15 / 3.9, 4),
        "old_count": 56.0,
        "old_exposure": 64.5,
        "old_rate": round(56 / 64.5, 4),
        "effect": round(est, 2),
        "effect_lo": round(lo, 2),
        "effect_hi": round(hi, 2),
        "llr": 6.53,
        "llr_threshold": 5.94,
    }
    assert step["test"] == "step time" and step["effect"] == 10.0 and step["windows"] == 12.0
    assert step["effect_lo"] < 10.0 < step["effect_hi"] and step["llr"] == 6.2


def test_a_part_in_no_known_form_is_left_out() -> None:
    assert parse_evidence("3 hosts failing > failure buffer 1 of 8") == []


def test_the_packaged_buffer_is_the_policys_and_the_rule_keeps_one_host() -> None:
    assert load_policy().planner.capacity_buffer_pct == PACKAGED_CAPACITY_BUFFER_PCT
    assert [budget(n, 10.0) for n in (1, 8, 10, 19, 20)] == [1, 1, 1, 1, 2]
