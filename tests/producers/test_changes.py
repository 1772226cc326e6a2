"""Versions in the simulated fleet: each host reports the baseline when it joins; the truth says which change is bad."""

from __future__ import annotations

from producers.changes import ChangeSpec, VersionsSpec, changes_truth, rate_factor, slowdown
from schemas import Codec, kafka_key
from tests.producers.conftest import config_with

BAD = ChangeSpec(component="driver", version="560.35", rate_factor={"xid": 3.0}, delay_s=3600)
SLOW = ChangeSpec(component="kernel", version="6.8.0", slowdown_pct=5.0)
GOOD = ChangeSpec(component="driver", version="560.40")
SPEC = VersionsSpec(report=True, changes=[BAD, SLOW, GOOD])


def test_every_host_reports_the_baseline_when_it_joins(simulate) -> None:
    fleet = config_with("small", versions=SPEC.model_dump())
    result, sink = simulate(days=2, interval_s=3600, fleet=fleet)
    reports = [r for r in sink.records if r["event_type"] == "HostVersionsReported"]
    joined = {r["host_id"] for r in sink.records if r["event_type"] == "HostInventoried"}
    assert {r["host_id"] for r in reports} == joined and len(reports) == len(joined)
    assert {r["payload"]["driver"] for r in reports} == {"550.54.15"}
    assert Codec().decode(Codec().encode(reports[0])).record == reports[0]
    assert kafka_key("HostVersionsReported", "h1") != kafka_key(
        "HostInventoried", "h1"
    )  # compaction keeps both
    assert [c["verdict"] for c in result.manifest["changes"]] == ["bad", "bad", "good"]


def test_without_reporting_the_stream_is_unchanged(simulate) -> None:
    _, sink = simulate(days=1, interval_s=3600)
    assert not any(r["event_type"] == "HostVersionsReported" for r in sink.records)


def test_a_bad_change_acts_after_its_delay_and_only_on_its_classes() -> None:
    assert rate_factor(SPEC, "driver", "560.35", "xid", 3_599_000) == 1.0
    assert rate_factor(SPEC, "driver", "560.35", "xid", 3_600_000) == 3.0
    assert rate_factor(SPEC, "driver", "560.35", "ecc", 7_200_000) == 1.0
    assert rate_factor(SPEC, "driver", "560.40", "xid", 7_200_000) == 1.0  # good
    assert rate_factor(SPEC, "driver", "999", "xid", 7_200_000) == 1.0  # unknown: changes nothing
    assert slowdown(SPEC, "kernel", "6.8.0", 0) == 0.05
    assert changes_truth(SPEC)[0] == {
        "component": "driver",
        "version": "560.35",
        "verdict": "bad",
        "rate_factor": {"xid": 3.0},
        "slowdown_pct": 0.0,
        "delay_s": 3600.0,
    }
