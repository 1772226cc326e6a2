"""The lemons to be found are fixed by the truth's materiality, never by the policy variant under test.

Before, the backtest judged each variant against the lemons its own rules could see: a variant with a
stricter count made its own target smaller, so the same findings gave it a higher recall, and finding
fewer lemons cost it nothing.
"""

from __future__ import annotations

import polars as pl
import pytest

from fleetpulse.backtest.compare import score_against
from fleetpulse.backtest.sweep import parse_setting, read_policy_data, variants
from fleetpulse.evaluation.detection import DAY_MS, score
from fleetpulse.evaluation.lemon_truth import LemonMateriality, material_lemons
from fleetpulse.evaluation.sources import Truth
from schemas.arrow import to_table
from streams.core.findings import Finding
from streams.core.policy import Policy
from tests.fleetpulse.evaluation.test_detection import END, FAULT_SCHEMA, HOST_SCHEMA, S, fault, finding, host

# Three fell-off-the-bus lemons: "often" fails four times, "twice" twice (material: it repeated), "once"
# once (no repeat: no detector of repeats could tell it from a healthy GPU's random fault).
HOSTS = [
    host("often", lemon_kind="fell_off_bus", lemon_scope="gpu", lemon_gpu=0, lemon_onset_ts=S + DAY_MS),
    host("twice", lemon_kind="fell_off_bus", lemon_scope="gpu", lemon_gpu=1, lemon_onset_ts=S + 20 * DAY_MS),
    host("once", lemon_kind="fell_off_bus", lemon_scope="gpu", lemon_gpu=2, lemon_onset_ts=S + 28 * DAY_MS),
    host("healthy"),
]
FAULTS = [
    *(fault("often", "fell_off_bus", S + d * DAY_MS, gpu=0) for d in (1, 2, 4, 6)),
    fault("twice", "fell_off_bus", S + 20 * DAY_MS, gpu=1),
    fault("twice", "fell_off_bus", S + 22 * DAY_MS, gpu=1),
    fault("twice", "fell_off_bus", S + 23 * DAY_MS, gpu=3),  # another GPU: not the lemon's part
    fault("once", "fell_off_bus", S + 28 * DAY_MS, gpu=2),
]


def truth() -> Truth:
    hosts = pl.DataFrame(HOSTS, schema=HOST_SCHEMA)
    return hosts, pl.DataFrame(FAULTS, schema=FAULT_SCHEMA), {"start_ts": S, "end_ts": END}


def found(*hosts: str) -> list[Finding]:
    return [finding(h, "repeat_offender", S + 25 * DAY_MS, window_start=S) for h in hosts]


def shipped_and_stricter() -> tuple[Policy, Policy]:
    """The backtest's grid over the fell-off-the-bus counts: the shipped 2 and a stricter 4 on every
    single-class rule of that kind (the per-GPU one and the host-wide one for unnamed GPUs)."""
    grid = variants(
        read_policy_data(None),
        [
            parse_setting("rules.fell_off_bus_repeat_gpu.count=2,4"),
            parse_setting("rules.fell_off_bus_repeat_host_unknown.count=2,4"),
        ],
    )
    return grid[0].policy, grid[3].policy


def test_the_lemons_to_be_found_are_those_whose_fault_repeated_on_their_part() -> None:
    hosts, faults, _ = truth()
    assert material_lemons(hosts, faults, S, END) == {"often": S + 2 * DAY_MS, "twice": S + 22 * DAY_MS}
    # the materiality's own window: two faults 2 days apart are no repeat within a day
    assert set(material_lemons(hosts, faults, S, END, LemonMateriality(within_ms=DAY_MS))) == {"often"}
    assert material_lemons(hosts, faults, S + 3 * DAY_MS, S + 21 * DAY_MS) == {"often": S + 6 * DAY_MS}


def test_two_variants_with_the_same_findings_get_the_same_recall() -> None:
    """Both variants find "often" only: both missed "twice", so both have recall 1/2 (the stricter one
    had 1.0 when its count of 4 made "twice" a lemon it need not find)."""
    shipped, stricter = shipped_and_stricter()
    scores = [
        score_against(found("often"), truth(), p).detectors["repeat_offender"] for p in (shipped, stricter)
    ]
    assert [(d.detectable, d.recall, d.fn_hosts) for d in scores] == [(2, 0.5, ["twice"])] * 2
    assert scores[0].truth_definition == scores[1].truth_definition == LemonMateriality().describe()


def test_a_stricter_variant_that_finds_fewer_lemons_gets_a_lower_recall() -> None:
    shipped, stricter = shipped_and_stricter()
    loose = score_against(found("often", "twice"), truth(), shipped).detectors["repeat_offender"]
    strict = score_against(found("often"), truth(), stricter).detectors["repeat_offender"]
    assert (loose.recall, strict.recall) == (1.0, 0.5)
    # each variant's own rule still times its lag: the stricter one's loosest rule for the kind is the
    # host-wide 3 in 14 d, reached at the 3rd fault of "often"
    assert strict.lag_median_s == pytest.approx((25 - 4) * 86_400)
    assert loose.lag_median_s == pytest.approx(((25 - 2) + (25 - 22)) / 2 * 86_400)


def test_a_lemon_found_without_repeating_is_a_tp_not_required() -> None:
    report = score(*_frames(found("often", "twice", "once")), {"start_ts": S, "end_ts": END}, window_s=300)
    ro = report.detectors["repeat_offender"]
    assert (ro.tp, ro.detectable, ro.tp_undetectable, ro.recall) == (3, 2, 1, 1.0)
    assert ro.breakdown == {"fell_off_bus": {"truth": 3, "detectable": 2, "found": 3}}
    assert report.params["lemon_truth"]["min_faults"] == 2


def _frames(findings: list[Finding]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    frame = pl.from_arrow(to_table("FindingRaised", [f.to_record() for f in findings]))
    assert isinstance(frame, pl.DataFrame)
    hosts, faults, _ = truth()
    return frame, hosts, faults
