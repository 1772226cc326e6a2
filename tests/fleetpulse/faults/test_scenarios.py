"""The fault scenarios against a real broker of the suite's own; each asserts the reliability goals.

The planner decides findings in event-time order (``detect.plan_order``), so a faulty run must
write exactly the reference's actions: none lost, none extra. What a fault could drop is also
checked on its own: every finding kept, a complete action log (no step without its cause or
successor, no finding left without action), no RMA for a finding the reference never raised.
"""

from __future__ import annotations

import pytest

from fleetpulse.faults.context import FaultContext
from fleetpulse.faults.report import print_table
from fleetpulse.faults.results import ScenarioResult
from fleetpulse.faults.runner import run_scenario
from fleetpulse.faults.scenarios import broker_outage, broker_restart, disk_full
from fleetpulse.faults.small_disk import SmallDiskError
from tests.fleetpulse.faults.judging import assert_alerts_delivered_once, assert_detection_kept

# One scenario at a time (serial): each loads the machine and times its faults against a producer.
pytestmark = [pytest.mark.faults, pytest.mark.serial]


def run(ctx: FaultContext, name: str) -> ScenarioResult:
    result = run_scenario(ctx, name)
    print_table([result])
    return result


def test_worker_kill(fault_context: FaultContext) -> None:
    r = run(fault_context, "worker-kill")
    kills = r.details["kills"]
    assert len(kills) == 5 and all(k["while_producing"] for k in kills)  # every kill mid-run
    assert all(a["input_committed"] < b["input_committed"] for a, b in zip(kills, kills[1:], strict=False))
    assert r.details["simulator_error"] is None
    assert_detection_kept(r)


def test_broker_restart(fault_context: FaultContext) -> None:
    """The short variant of broker-restart (90 s of production in ``fleetpulse faults run``): 60 s."""
    r = broker_restart.run(fault_context, produce_s=60.0)
    print_table([r])
    assert [x["while_producing"] for x in r.details["restarts"]] == [True, True, True]
    assert r.details["simulator_error"] is None
    assert r.events_lost == 0 and r.events_duplicated == 0, r.details["events"]
    assert r.details["worker_crashes"] == 0
    assert_detection_kept(r)


def test_broker_outage(fault_context: FaultContext) -> None:
    """The short variant of broker-outage (5 minutes in ``fleetpulse faults run``): 45 s down."""
    down_s = 45.0  # longer than aiokafka's 40 s request timeout: sends and commits fail, not only wait
    r = broker_outage.run(fault_context, down_s=down_s)
    print_table([r])
    (outage,) = r.details["restarts"]
    assert outage["while_producing"] and outage["to_s"] - outage["from_s"] >= down_s
    assert r.details["simulator_error"] is None
    assert r.events_lost == 0 and r.events_duplicated == 0, r.details["events"]
    assert r.details["worker_crashes"] == 0
    assert_detection_kept(r)


def test_disk_full(fault_context: FaultContext) -> None:
    """The short variant of disk-full (2 minutes full in ``fleetpulse faults run``): 15 s full."""
    full_s = 15.0
    try:
        r = disk_full.run(fault_context, full_s=full_s, produce_s=25.0, first_after_s=5.0)
    except SmallDiskError as exc:
        pytest.skip(str(exc))
    print_table([r])
    fault = r.details["fault"]
    assert fault["producing_when_full"] and fault["freed_at_s"] - fault["full_from_s"] >= full_s
    assert fault["free_after_fill_bytes"] < 64 * 1024, fault
    assert all(r.details["disk_full_log_lines"].values()), r.details[
        "disk_full_log_lines"
    ]  # each part hit it
    assert r.details["simulator_error"] is None
    assert r.events_lost == 0 and r.events_duplicated == 0, r.details["lake_events"]
    assert r.parts_restarted == 0, (
        r.details["part_crashes"],
        r.details["detect_exits"],
    )  # nothing after the disk freed
    assert_detection_kept(r)
    assert_alerts_delivered_once(r)
