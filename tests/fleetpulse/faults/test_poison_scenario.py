"""The poison scenario against the session's broker, in the suite's parallel phase.

Nothing in it is timed: the simulator writes the whole stream first, then the reference and the worker
under test read topics that no longer change, and the broker is never touched (the session's one refuses
a restart). So it needs neither the serial phase's quiet machine nor a broker of its own.
"""

from __future__ import annotations

import pytest

from fleetpulse.faults.context import FaultContext
from fleetpulse.faults.report import print_table
from fleetpulse.faults.runner import run_scenario
from tests.fleetpulse.faults.judging import assert_detection_kept

pytestmark = pytest.mark.faults


def test_poison(shared_fault_context: FaultContext) -> None:
    r = run_scenario(shared_fault_context, "poison")
    print_table([r])
    assert r.details["poison"] == 10_000 and r.details["duplicates"] == 500
    assert r.dlq_share == 1.0, (r.details["by_kind"], r.details["missing"])
    assert r.details["without_reason"] == 0 and r.details["dlq_not_poison"] == 0
    assert r.findings_extra == 0, r.details["findings"]
    assert_detection_kept(r)
