"""``fleetpulse.evaluation.detection`` on hand-made truth with known TP/FP/FN, and ``fleetpulse score`` end to end on a lake."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from fleetpulse.evaluation.detection import (
    DAY_MS,
    RepeatRule,
    ScoringError,
    WindowPeriod,
    default_rules,
    score,
    threshold_reached_at,
    windows_between,
)
from fleetpulse.evaluation.sources import findings_from_lake, parse_rule
from ground.delta import DATE, DeltaTables, with_date
from schemas.arrow import table_name, to_table
from streams.core.findings import Finding

S = 1_700_000_000_000  # period start
END = S + 30 * DAY_MS
H = 3_600_000

HOST_SCHEMA = {
    "host_id": pl.Utf8,
    "cluster": pl.Utf8,
    "fabric": pl.Utf8,
    "rack": pl.Utf8,
    "maintenance_domain": pl.Utf8,
    "sku": pl.Utf8,
    "install_ts": pl.Int64,
    "lemon_kind": pl.Utf8,
    "lemon_scope": pl.Utf8,
    "lemon_gpu": pl.Int32,
    "lemon_port": pl.Int32,
    "lemon_onset_ts": pl.Int64,
    "slow_cause": pl.Utf8,
    "slow_factor": pl.Float64,
    "slow_onset_ts": pl.Int64,
    "slow_intermittent": pl.Boolean,
    "slow_duty": pl.Float64,
    "host_only": pl.Boolean,
}
FAULT_SCHEMA = {
    "fault_id": pl.Utf8,
    "host_id": pl.Utf8,
    "cluster": pl.Utf8,
    "fabric": pl.Utf8,
    "gpu": pl.Int32,
    "port": pl.Int32,
    "kind": pl.Utf8,
    "cause": pl.Utf8,
    "ts": pl.Int64,
    "host_age_days": pl.Float64,
    "phase": pl.Utf8,
}


def host(host_id: str, **truth: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(HOST_SCHEMA)
    row.update(
        host_id=host_id,
        cluster="c0",
        fabric="roce",
        rack="r0",
        maintenance_domain="md0",
        sku="h100",
        install_ts=S - 100 * DAY_MS,
        slow_intermittent=False,
    )
    row.update(truth)
    return row


def fault(
    host_id: str, kind: str, ts: int, gpu: int | None = None, port: int | None = None
) -> dict[str, Any]:
    return {
        "fault_id": f"{host_id}-{kind}-{ts}",
        "host_id": host_id,
        "cluster": "c0",
        "fabric": "roce",
        "gpu": gpu,
        "port": port,
        "kind": kind,
        "cause": "x",
        "ts": ts,
        "host_age_days": 100.0,
        "phase": "lemon",
    }


def finding(
    host_id: str, detector: str, ts: int, window_start: int | None = None, fid: str | None = None
) -> Finding:
    return Finding(
        finding_id=fid or f"{detector}-{host_id}-{ts}",
        detector=detector,
        rule=detector,
        scope="host",
        scope_key=host_id,
        host_id=host_id,
        cluster="c0",
        ts=ts,
        error_class="x",
        count=2,
        window_start=window_start if window_start is not None else ts - 7 * DAY_MS,
        window_end=ts,
        recommended_action="rma",
    )


HOSTS = [
    # repeat offenders
    host("h1", lemon_kind="dram_uce", lemon_scope="gpu", lemon_gpu=2, lemon_onset_ts=S + DAY_MS),
    host("h2", lemon_kind="fell_off_bus", lemon_scope="gpu", lemon_gpu=0, lemon_onset_ts=S + 2 * DAY_MS),
    host("h3", lemon_kind="link_flap", lemon_scope="port", lemon_port=1, lemon_onset_ts=S + 5 * DAY_MS),
    host("h4", lemon_kind="sram_uce", lemon_scope="gpu", lemon_gpu=1, lemon_onset_ts=S + 10 * DAY_MS),
    host("h5"),
    host("h6"),
    host("h7", lemon_kind="dram_uce", lemon_scope="host", lemon_onset_ts=S + 20 * DAY_MS),
    # slow hosts (material: slow ≥ 2 % for ≥ 30 min of its time after onset; s2/s5 have 10 min)
    host("s1", slow_cause="degraded_nic", slow_factor=0.12, slow_onset_ts=S + DAY_MS),
    host("s2", slow_cause="thermal_throttling", slow_factor=0.05, slow_onset_ts=END - 600_000),
    host("s3", slow_cause="pcie_downtraining", slow_factor=0.2, slow_onset_ts=S + 2 * DAY_MS),
    host("s4", slow_cause="degraded_nic", slow_factor=0.3, slow_onset_ts=S - 5 * DAY_MS),
    host("s5", slow_cause="thermal_throttling", slow_factor=0.3, slow_onset_ts=END - 600_000),
]
FAULTS = [
    fault("h1", "dram_uce", S + DAY_MS, gpu=2),
    fault("h1", "dram_uce", S + 3 * DAY_MS, gpu=2),
    fault("h1", "sram_uce", S + 4 * DAY_MS, gpu=5),
    fault("h2", "fell_off_bus", S + 2 * DAY_MS, gpu=0),
    fault("h3", "link_flap", S + 5 * DAY_MS, port=1),
    fault("h3", "link_flap", S + 5 * DAY_MS + H, port=1),
    fault("h3", "link_flap", S + 5 * DAY_MS + 2 * H, port=1),
    fault("h3", "link_flap", S + 5 * DAY_MS, port=2),
    fault("h4", "sram_uce", S + 10 * DAY_MS, gpu=1),
    fault("h4", "sram_uce", S + 11 * DAY_MS, gpu=5),
    fault("h5", "dram_uce", S + 3 * DAY_MS, gpu=0),
    fault("h5", "dram_uce", S + 5 * DAY_MS, gpu=0),
    fault("h7", "dram_uce", S + 20 * DAY_MS, gpu=1),
    fault("h7", "dram_uce", S + 22 * DAY_MS, gpu=4),
]
FINDINGS = [
    finding("h1", "repeat_offender", S + 3 * DAY_MS + 60_000),
    finding("h4", "repeat_offender", S + 11 * DAY_MS + 10_000),
    finding("h5", "repeat_offender", S + 5 * DAY_MS),
    finding("h6", "repeat_offender", S + 6 * DAY_MS),
    finding("h7", "repeat_offender", S + 22 * DAY_MS + 300_000, fid="h7-a"),
    finding("h7", "repeat_offender", S + 22 * DAY_MS + 300_000, fid="h7-a"),  # replayed duplicate
    finding("h7", "repeat_offender", S + 23 * DAY_MS, fid="h7-b"),  # a second rule on the same host
    finding("s1", "slow_host", S + DAY_MS + 1_200_000, window_start=S + DAY_MS + 300_000),
    finding("s1", "slow_host", S + 2 * DAY_MS, window_start=S + 2 * DAY_MS - 900_000),
    finding("s4", "slow_host", S + 900_000, window_start=S),
    finding("h6", "slow_host", S + 7 * DAY_MS, window_start=S + 7 * DAY_MS - 900_000),
    finding("s5", "slow_host", END - 100_000, window_start=END - 400_000),
    finding("h9", "critical_fault", S + DAY_MS),  # another detector: no effect on these two
]
MANIFEST = {"seed": 7, "start_ts": S, "end_ts": END, "sample_interval_s": 10}


def frames() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    findings = pl.from_arrow(to_table("FindingRaised", [f.to_record() for f in FINDINGS]))
    assert isinstance(findings, pl.DataFrame)
    return findings, pl.DataFrame(HOSTS, schema=HOST_SCHEMA), pl.DataFrame(FAULTS, schema=FAULT_SCHEMA)


def test_repeat_offender_counts_against_detectable_lemons() -> None:
    report = score(*frames(), MANIFEST, window_s=300, slow_k=3)
    ro = report.detectors["repeat_offender"]
    assert (ro.truth, ro.detectable, ro.predicted) == (5, 3, 5)
    # h5 is healthy but its own faults meet the DRAM rule: "rule met", neither TP nor FP; h6 is an FP
    assert (ro.tp, ro.fp, ro.rule_met, ro.fn) == (3, 1, 1, 1)
    assert ro.fp_hosts == ["h6"] and ro.rule_met_hosts == ["h5"] and ro.fn_hosts == ["h3"]
    assert ro.precision == pytest.approx(3 / 4)
    assert ro.recall == pytest.approx(2 / 3)  # h1, h7 of the detectable h1, h3, h7; h4 found but undetectable
    assert ro.tp_undetectable == 1
    # one FP finding (h6) in 30 days on 20 hosts ... per day per 1,000 hosts
    n_hosts = frames()[1].height
    assert ro.fp_findings == 1
    assert ro.fp_per_day_per_1k_hosts == pytest.approx(1 / 30 / (n_hosts / 1000))
    # TTD from onset: h4 1 d + 10 s, h1 2 d + 60 s, h7 2 d + 300 s
    assert ro.ttd_median_s == pytest.approx(2 * 86400 + 60)
    assert ro.ttd_p90_s == pytest.approx(2 * 86400 + 60 + 0.8 * 240)
    assert ro.lag_median_s == pytest.approx(180)  # h1 60 s and h7 300 s after the threshold was reached
    assert ro.breakdown["dram_uce"] == {"truth": 2, "detectable": 2, "found": 2}
    assert ro.breakdown["link_flap"] == {"truth": 1, "detectable": 1, "found": 0}
    assert ro.breakdown["fell_off_bus"] == {"truth": 1, "detectable": 0, "found": 0}


def test_slow_host_scores_and_time_to_detect_in_windows() -> None:
    sh = score(*frames(), MANIFEST, window_s=300, slow_k=3).detectors["slow_host"]
    assert (sh.truth, sh.detectable, sh.predicted, sh.tp, sh.fp, sh.fn) == (5, 3, 4, 3, 1, 1)
    assert sh.fn_hosts == ["s3"] and sh.fp_hosts == ["h6"]
    assert sh.precision == pytest.approx(0.75) and sh.recall == pytest.approx(2 / 3)
    assert sh.rule_met is None and sh.fp_findings == 1
    assert sh.tp_undetectable == 1  # s5: onset 600 s before the end, found anyway
    assert sh.ttd_median_s == pytest.approx(900)  # s1 1200 s, s4 900 s (onset clipped to start), s5 500 s
    assert sh.ttd_median_windows == pytest.approx(3.0)
    assert sh.ttd_p90_windows == pytest.approx(3.8)
    assert (sh.window_s, sh.window_source) == (300, "argument")


def test_window_defaults_to_the_findings_span_and_neither_k_nor_window_changes_what_must_be_found() -> None:
    sh = score(*frames(), MANIFEST, slow_k=1).detectors["slow_host"]
    assert sh.window_source == "findings" and sh.window_s == pytest.approx(900)
    assert sh.detectable == 3  # s2/s5: slow for 10 min, under the materiality's 30
    sh2 = score(*frames(), MANIFEST, window_s=300, slow_k=2).detectors["slow_host"]
    assert (sh2.detectable, sh2.recall, sh2.tp_undetectable) == (sh.detectable, sh.recall, sh.tp_undetectable)
    assert sh2.truth_definition is not None and "materiality" in sh2.truth_definition


def test_windows_between_counts_each_period_in_its_own_window() -> None:
    periods = [WindowPeriod(0, 6 * H, 21_600), WindowPeriod(6 * H, 10 * H, 600)]
    assert windows_between(0, 6 * H, periods) == pytest.approx(1)
    assert windows_between(3 * H, 7 * H, periods) == pytest.approx(0.5 + 6)
    assert windows_between(7 * H, 3 * H, periods) == pytest.approx(-6.5)
    # before the first and after the last period, their windows go on
    assert windows_between(-6 * H, 0, periods) == pytest.approx(1)
    assert windows_between(10 * H, 11 * H, periods) == pytest.approx(6)


def test_a_continued_run_is_scored_in_each_segments_window() -> None:
    """A short fast-forward history (6 h samples) continued live (10-minute windows): a host slow since
    the history leaves k windows only in the live ones; one window over the whole run never would."""
    end = S + 6 * H + 4 * H
    hosts = pl.DataFrame(
        [
            host("early", slow_cause="degraded_nic", slow_factor=0.1, slow_onset_ts=S + H),
            host("late", slow_cause="degraded_nic", slow_factor=0.1, slow_onset_ts=end - 20 * 60_000),
        ],
        schema=HOST_SCHEMA,
    )
    findings = pl.from_arrow(
        to_table("FindingRaised", [finding("early", "slow_host", S + 6 * H + 30 * 60_000).to_record()])
    )
    assert isinstance(findings, pl.DataFrame)
    faults = pl.DataFrame([], schema=FAULT_SCHEMA)
    manifest = {"start_ts": S, "end_ts": end}
    periods = [WindowPeriod(S, S + 6 * H, 21_600), WindowPeriod(S + 6 * H, end, 600)]
    sh = score(findings, hosts, faults, manifest, slow_k=3, window_periods=periods).detectors["slow_host"]
    assert (sh.detectable, sh.tp, sh.fn) == (1, 1, 0)  # "late" leaves 2 live windows: not detectable
    assert sh.recall == pytest.approx(1.0)
    assert sh.ttd_median_windows == pytest.approx(5 / 6 + 3)  # 5 h of the 6 h window, then 30 min of 10
    assert sh.window_source == "segments: 21600 s → 600 s"
    # one window over the whole run: the same host must be found (what must be found is not the window's)
    one = score(findings, hosts, faults, manifest, slow_k=3, window_s=21_600).detectors["slow_host"]
    assert one.detectable == 1 and one.recall == pytest.approx(1.0)


def test_a_stricter_rule_leaves_the_lemons_to_be_found_as_they_are() -> None:
    """h3's three flaps meet the materiality, not a rule of four: it must still be found, and missing it
    still costs recall (before, the stricter rule dropped it from the target: recall 1.0)."""
    rules = dict(default_rules(), link_flap=RepeatRule(("link_flap",), 4, DAY_MS))
    ro = score(*frames(), MANIFEST, rules=rules, window_s=300).detectors["repeat_offender"]
    assert ro.detectable == 3 and ro.fn_hosts == ["h3"] and ro.recall == pytest.approx(2 / 3)


def test_no_findings_gives_undefined_precision_and_zero_recall() -> None:
    findings, hosts, faults = frames()
    report = score(findings.clear(), hosts, faults, MANIFEST, window_s=300)
    ro = report.detectors["repeat_offender"]
    assert (ro.tp, ro.fp, ro.fn, ro.precision, ro.recall, ro.ttd_median_s) == (0, 0, 3, None, 0.0, None)
    assert json.loads(report.to_json())["detectors"]["slow_host"]["precision"] is None


def test_critical_fault_scores_hosts_with_a_critical_fault_in_the_period() -> None:
    faults = pl.DataFrame(
        [
            fault("c1", "row_remap_failure", S + DAY_MS, gpu=3),
            fault("c2", "row_remap_failure", S + 2 * DAY_MS, gpu=0),
            fault("c2", "row_remap_failure", S + 3 * DAY_MS, gpu=0),
            fault("c3", "row_remap_failure", S - DAY_MS, gpu=1),  # before the period: not truth
            fault("c4", "dram_uce", S + DAY_MS, gpu=1),  # not a critical kind
        ],
        schema=FAULT_SCHEMA,
    )
    found = [
        finding("c1", "critical_fault", S + DAY_MS + 5_000),
        finding("c1", "critical_fault", S + 4 * DAY_MS),  # a later one on the same host counts once
        finding("c9", "critical_fault", S + DAY_MS),  # no critical fault in the truth
        finding("c2", "repeat_offender", S + 3 * DAY_MS),  # another detector
    ]
    findings = pl.from_arrow(to_table("FindingRaised", [f.to_record() for f in found]))
    assert isinstance(findings, pl.DataFrame)
    hosts = pl.DataFrame([host(h) for h in ("c1", "c2", "c3", "c4", "c9")], schema=HOST_SCHEMA)

    cf = score(findings, hosts, faults, MANIFEST).detectors["critical_fault"]

    assert (cf.truth, cf.detectable, cf.tp, cf.fp, cf.fn) == (2, 2, 1, 1, 1)
    assert cf.fp_hosts == ["c9"] and cf.fn_hosts == ["c2"]
    assert cf.precision == 0.5 and cf.recall == 0.5
    assert cf.ttd_median_s == 5.0
    assert cf.breakdown == {"row_remap_failure": {"truth": 2, "detectable": 2, "found": 1}}
    other = score(findings, hosts, faults, MANIFEST, critical_kinds=("dram_uce",)).detectors["critical_fault"]
    assert (other.truth, other.tp, other.fp) == (1, 0, 2)  # c4 is the truth now; c1 and c9 are not


def test_manifest_without_period_is_an_error() -> None:
    with pytest.raises(ScoringError, match="start_ts"):
        score(*frames(), {"seed": 1})


@pytest.mark.parametrize(
    ("times", "count", "window", "expected"),
    [
        ([], 2, 10, None),
        ([5], 1, 10, 5),
        ([0, 10], 2, 10, 10),
        ([0, 11], 2, 10, None),
        ([30, 0, 11, 20], 3, 20, 20),
        ([30, 0, 11, 25], 3, 20, 30),
        ([0, 5, 100, 104, 108], 3, 10, 108),
    ],
)
def test_threshold_reached_at(times: list[int], count: int, window: int, expected: int | None) -> None:
    assert threshold_reached_at(times, count, window) == expected


def test_parse_rule() -> None:
    assert parse_rule("link_flap=4/24h") == ("link_flap", RepeatRule(("link_flap",), 4, DAY_MS))
    assert parse_rule("dram_uce=3/7d")[1].window_ms == 7 * DAY_MS
    for bad in ("nope=2/7d", "dram_uce=x/7d", "dram_uce=2/7w", "dram_uce"):
        with pytest.raises(ScoringError):
            parse_rule(bad)


def write_truth_and_lake(tmp_path: Path) -> tuple[Path, Path]:
    truth, lake = tmp_path / "truth", tmp_path / "lake"
    truth.mkdir()
    _, hosts, faults = frames()
    hosts.write_parquet(truth / "hosts.parquet")
    faults.write_parquet(truth / "faults.parquet")
    (truth / "manifest.json").write_text(json.dumps(MANIFEST))
    records = [f.to_record() for f in FINDINGS]
    for half in (records[: len(records) // 2], records[len(records) // 2 :]):  # two commits
        table = with_date(to_table("FindingRaised", half))
        DeltaTables(lake).append(table_name("FindingRaised"), table, partition_by=[DATE])
    return truth, lake


def test_findings_from_lake_reads_every_partition(tmp_path: Path) -> None:
    _, lake = write_truth_and_lake(tmp_path)
    got = findings_from_lake(lake)
    assert got.height == len(FINDINGS)
    assert findings_from_lake(tmp_path / "empty").height == 0


def test_score_command_on_a_lake_writes_json(tmp_path: Path) -> None:
    from fleetpulse.cli import app

    truth, lake = write_truth_and_lake(tmp_path)
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        app,
        [
            "score",
            "--truth",
            str(truth),
            "--findings-from",
            "lake",
            "--lake",
            str(lake),
            "--json",
            str(out),
            "--window-s",
            "300",
            "--slow-k",
            "3",
            "--rule",
            "link_flap=3/24h",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "repeat_offender" in result.output and "slow_host" in result.output
    data = json.loads(out.read_text())
    assert data["detectors"]["repeat_offender"]["tp"] == 3
    assert data["detectors"]["slow_host"]["fn_hosts"] == ["s3"]
    assert data["params"]["rules"]["link_flap"]["count"] == 3
    assert data["detectors"]["repeat_offender"]["ttd_median_h"] == pytest.approx((2 * 86400 + 60) / 3600)


def test_score_command_names_missing_truth_files(tmp_path: Path) -> None:
    from fleetpulse.cli import app

    result = CliRunner().invoke(app, ["score", "--truth", str(tmp_path), "--findings-from", "lake"])
    assert result.exit_code != 0
    assert isinstance(result.exception, ScoringError) and "hosts.parquet" in str(result.exception)


def test_rule_met_follows_the_rule_scope() -> None:
    from fleetpulse.evaluation.rule_met import ScopedRule, kinds_of, rule_met

    two_gpus = pl.DataFrame(
        [fault("h", "fell_off_bus", S, gpu=1), fault("h", "fell_off_bus", S + DAY_MS, gpu=2)],
        schema=FAULT_SCHEMA,
    )
    per_gpu = ScopedRule(("fell_off_bus",), "gpu", 2, 30 * DAY_MS)
    per_host = ScopedRule(("fell_off_bus",), "host", 2, 30 * DAY_MS)
    assert not rule_met(two_gpus, [per_gpu], S, END)  # two GPUs once each: the per-GPU rule is not met
    assert rule_met(two_gpus, [per_host], S, END)
    assert not rule_met(two_gpus, [per_host], S + 1, END)  # the first fault is outside the period
    # a NIC fault is the NIC's class (nic_lost), not a link down: it meets the NIC rules, not the cable's
    assert (kinds_of(["link_down"]), kinds_of(["nic_lost"])) == (("link_down",), ("nic",))


def test_a_history_continued_live_is_also_scored_on_the_live_segment_alone() -> None:
    from fleetpulse.evaluation.sources import score_with_policy
    from streams.core.policy import load_policy

    policy = load_policy(None)
    live_start, end = S + 6 * H, S + 6 * H + 4 * H
    hosts = pl.DataFrame(
        [
            host("early", slow_cause="degraded_nic", slow_factor=0.1, slow_onset_ts=S + H),
            host("late", slow_cause="degraded_nic", slow_factor=0.1, slow_onset_ts=end - 60 * 60_000),
        ],
        schema=HOST_SCHEMA,
    )
    found = [finding("early", "slow_host", live_start + 30 * 60_000), finding("late", "slow_host", S + 2 * H)]
    findings = pl.from_arrow(to_table("FindingRaised", [f.to_record() for f in found]))
    assert isinstance(findings, pl.DataFrame)
    manifest = {
        "start_ts": S,
        "end_ts": end,
        "sample_interval_s": 21_600,
        "segments": [
            {"mode": "fast-forward", "start_ts": S, "end_ts": live_start, "sample_interval_s": 21_600},
            {"mode": "live", "start_ts": live_start, "end_ts": end, "sample_interval_s": 10},
        ],
    }
    report = score_with_policy(findings, (hosts, pl.DataFrame([], schema=FAULT_SCHEMA), manifest), policy)
    assert report.live is not None and report.live.period == {"start_ts": live_start, "end_ts": end}
    live = report.live.detectors["slow_host"]
    assert live.window_s == policy.slow_host.window / 1000
    # "late" was flagged in the history only: in the live segment it is detectable and missed
    assert (live.detectable, live.tp, live.fn, live.fn_hosts) == (2, 1, 1, ["late"])
    assert live.recall == pytest.approx(0.5)
    assert live.ttd_median_windows == pytest.approx(
        30 * 60 / live.window_s
    )  # onset clipped to the live start
    assert "live" in report.to_dict() and report.to_dict()["live"]["period"]["start_ts"] == live_start


def test_time_to_detect_in_busy_windows_skips_the_hosts_idle_gap() -> None:
    """The host's job ended 30 minutes after its onset, its slot idled 1.5 h: found 10 minutes into the next job."""
    hosts = pl.DataFrame(
        [host("s", slow_cause="degraded_nic", slow_factor=0.3, slow_onset_ts=S + H)], schema=HOST_SCHEMA
    ).with_columns(pl.lit("slot-1").alias("job_id"))
    findings = pl.from_arrow(
        to_table("FindingRaised", [finding("s", "slow_host", S + 3 * H + 600_000).to_record()])
    )
    assert isinstance(findings, pl.DataFrame)
    jobs = [
        {"slot": "slot-1", "start_ts": S - H, "end_ts": S + H + 30 * 60_000},
        {"slot": "slot-1", "start_ts": S + 3 * H, "end_ts": S + 9 * H},
        {"slot": "slot-2", "start_ts": S, "end_ts": S + 9 * H},
    ]
    manifest = {"start_ts": S, "end_ts": S + 9 * H, "jobs": jobs}
    sh = score(findings, hosts, pl.DataFrame([], schema=FAULT_SCHEMA), manifest, window_s=300, slow_k=2)
    found = sh.detectors["slow_host"]
    assert found.ttd_median_windows == pytest.approx(2 * 12 + 2)  # from onset: the idle 2 h count
    assert found.ttd_busy_median_windows == pytest.approx(6 + 2)  # 30 min before the gap, 10 min after
    # an intermittent host whose first slow episode began with the next job: 2 windows of it
    episodes = [{"host_id": "s", "start_ts": S + 3 * H - 60_000, "end_ts": S + 9 * H}]
    with_episodes = manifest | {"slow_episodes": episodes}
    off = score(findings, hosts, pl.DataFrame([], schema=FAULT_SCHEMA), with_episodes, window_s=300)
    assert off.detectors["slow_host"].ttd_busy_median_windows == pytest.approx(2)
    plain = score(
        findings, hosts, pl.DataFrame([], schema=FAULT_SCHEMA), {"start_ts": S, "end_ts": S + 9 * H}
    )
    assert plain.detectors["slow_host"].ttd_busy_median_windows is None  # no jobs in the truth


def test_a_host_naming_only_itself_meets_the_host_level_rules_only() -> None:
    """Two falls off the bus on different GPUs: on a host that names its GPUs, no per-GPU rule is met
    (a false positive if flagged); on one whose records name only the host, the host-level rule for
    unknown components is (rule met); the host-only rule never counts a named host's faults."""
    from fleetpulse.evaluation.detection import score_repeat_offender
    from fleetpulse.evaluation.rule_met import ScopedRule

    rules = [
        ScopedRule(("fell_off_bus",), "gpu", 2, 30 * DAY_MS),
        ScopedRule(("fell_off_bus",), "host", 2, 30 * DAY_MS, "unknown"),
    ]
    faults = pl.DataFrame(
        [fault(h, "fell_off_bus", S + d * DAY_MS, gpu=d) for h in ("named", "only") for d in (1, 2)],
        schema=FAULT_SCHEMA,
    )
    hosts = pl.DataFrame([host("named", host_only=False), host("only", host_only=True)], schema=HOST_SCHEMA)
    flagged = [finding(h, "repeat_offender", S + 3 * DAY_MS) for h in ("named", "only")]
    findings = pl.from_arrow(to_table("FindingRaised", [f.to_record() for f in flagged]))
    got = score_repeat_offender(findings, hosts, faults, S, END, default_rules(), rules)  # type: ignore[arg-type]
    assert (got.fp_hosts, got.rule_met_hosts) == (["named"], ["only"])


def test_what_must_be_found_is_the_materiality_not_the_policys_windows() -> None:
    """6 h windows, the rule 2 of 4 windows at least 2 % slow. An intermittent host 3 % slow for half of each
    window shows 1.5 % in those windows, yet it is slow by ≥ 2 % in half its time: material, as are the
    5 % one and the one with two whole slow windows; a persistent host 1.5 % slow is not, and a 5 % host
    slow in a fifth of its time is not. The policy's rule changes none of it."""
    w = 6 * H
    halves = [(S + i * w, S + i * w + w // 2) for i in range(40)]
    whole = [*halves[:10], (S + 10 * w, S + 12 * w), *halves[12:]]
    fifths = [(S + i * w, S + i * w + w // 5) for i in range(40)]
    hosts = pl.DataFrame(
        [
            host(name, slow_cause="degraded_nic", slow_factor=factor, slow_onset_ts=S, slow_intermittent=True)
            for name, factor in (("weak", 0.03), ("strong", 0.05), ("run", 0.03), ("rare", 0.05))
        ]
        + [host("faint", slow_cause="thermal_throttling", slow_factor=0.015, slow_onset_ts=S)],
        schema=HOST_SCHEMA,
    )
    episodes = [
        {"host_id": h, "start_ts": a, "end_ts": b}
        for h, spans in (
            ("weak", halves),
            ("strong", halves),
            ("run", whole),
            ("rare", fifths),
            ("faint", [(S, S + 40 * w)]),
        )
        for a, b in spans
    ]
    manifest = {"start_ts": S, "end_ts": S + 40 * w, "slow_episodes": episodes}
    no_findings = pl.from_arrow(to_table("FindingRaised", []))
    assert isinstance(no_findings, pl.DataFrame)
    faults = pl.DataFrame([], schema=FAULT_SCHEMA)
    sh = score(no_findings, hosts, faults, manifest, window_s=21_600, slow_k=2, slow_n=4, slow_min=0.02)
    assert sorted(sh.detectors["slow_host"].fn_hosts) == ["run", "strong", "weak"]
    other = score(no_findings, hosts, faults, manifest, window_s=300, slow_k=5, slow_n=5, slow_min=0.05)
    assert other.detectors["slow_host"].fn_hosts == sh.detectors["slow_host"].fn_hosts
    assert sh.params["slow_truth"]["min_share"] == pytest.approx(0.3)


def test_two_policies_with_the_same_findings_get_the_same_recall() -> None:
    """The backtest sweep ``slow_host.min_slowdown=0.02,0.05``: same findings, so the same recall (was 0.75
    against 1.00 when the hosts to be found followed the policy's threshold)."""
    from fleetpulse.evaluation.sources import score_with_policy
    from streams.core.policy import load_policy

    policy = load_policy(None)
    hosts = pl.DataFrame(
        [
            host(f"s{f}", slow_cause="degraded_nic", slow_factor=f / 100, slow_onset_ts=S)
            for f in (3, 4, 6, 10)
        ],
        schema=HOST_SCHEMA,
    )
    found = [finding(f"s{f}", "slow_host", S + H) for f in (6, 10)]
    findings = pl.from_arrow(to_table("FindingRaised", [f.to_record() for f in found]))
    assert isinstance(findings, pl.DataFrame)
    truth = (hosts, pl.DataFrame([], schema=FAULT_SCHEMA), {"start_ts": S, "end_ts": S + DAY_MS})
    recalls = set()
    for min_slowdown in (0.02, 0.05):
        variant = policy.model_copy(
            update={"slow_host": policy.slow_host.model_copy(update={"min_slowdown": min_slowdown})}
        )
        sh = score_with_policy(findings, truth, variant).detectors["slow_host"]
        recalls.add((sh.detectable, sh.recall))
    assert recalls == {(4, 0.5)}


def test_thresholds_left_out_are_the_shipped_policys() -> None:
    """The scorer keeps no rule defaults of its own: what a caller leaves out comes from policy.toml."""
    from fleetpulse.evaluation.policy_rules import critical_kinds_from_policy, rules_from_policy
    from streams.core.policy import load_policy

    shipped = load_policy()
    params = score(*frames(), MANIFEST, window_s=300).params
    assert params["slow_k"] == shipped.slow_host.k
    assert params["critical_kinds"] == critical_kinds_from_policy(shipped)
    assert params["rules"] == {
        k: {"kinds": list(r.kinds), "count": r.count, "window_s": r.window_ms / 1000}
        for k, r in rules_from_policy(shipped).items()
    }


def test_a_finding_delivered_again_later_counts_at_its_first_time() -> None:
    """The same finding id read twice, the later copy first, is scored at the earlier time."""
    first = finding("h1", "repeat_offender", S + 3 * DAY_MS + 60_000, fid="h1-a")
    again = finding("h1", "repeat_offender", S + 9 * DAY_MS, fid="h1-a")
    rest = [f for f in FINDINGS if f.host_id != "h1"]
    found, hosts, faults = frames()
    redelivered = pl.from_arrow(to_table("FindingRaised", [f.to_record() for f in [again, *rest, first]]))
    assert isinstance(redelivered, pl.DataFrame)
    expected = score(found, hosts, faults, MANIFEST).detectors["repeat_offender"]
    got = score(redelivered, hosts, faults, MANIFEST).detectors["repeat_offender"]
    assert got.ttd_median_s == expected.ttd_median_s and got.tp == expected.tp
