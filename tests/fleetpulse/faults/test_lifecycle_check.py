"""Completeness of an action log without a reference: causes, successors, findings acted on."""

from __future__ import annotations

import pytest

from fleetpulse.faults.lifecycle_check import check_log
from tests.fleetpulse.faults.factories import action, chain, finding


def test_complete_lifecycle_is_not_broken() -> None:
    assert check_log(chain("a"), [finding("f1")]).broken == 0


def test_open_rma_waiting_for_repair_is_a_stable_end() -> None:
    assert check_log(chain("a")[:4], [finding("f1")]).broken == 0


@pytest.mark.parametrize("cut", ["drain_requested", "drained", "repaired", "verified"])
def test_a_step_cut_off_after_it_is_missing_its_successor(cut: str) -> None:
    log = chain("a")
    end = [a["payload"]["kind"] for a in log].index(cut) + 1
    assert check_log(log[:end], [finding("f1")]).missing_successors == [f"a-{cut}"]


def test_a_dropped_step_leaves_a_dangling_cause() -> None:
    log = [a for a in chain("a") if a["payload"]["kind"] != "suspected"]
    assert check_log(log, [finding("f1")]).dangling_causes == ["a-drain_requested"]


def test_finding_without_action_is_unhandled_unless_an_open_operation_absorbs_it() -> None:
    log = chain("a", finding_id="f1", ts=100)
    assert check_log(log, [finding("f1", ts=100), finding("f2", ts=50)]).unhandled_findings == ["f2"]
    assert check_log(log, [finding("f1", ts=100), finding("f2", ts=200)]).unhandled_findings == []
    other_op = [finding("f1", ts=100), finding("f3", ts=200, operation="diagnostics")]
    assert check_log(log, other_op).unhandled_findings == ["f3"]


def test_domain_actions_without_cause_are_fine() -> None:
    halt = action("halt", "train_halted", "-", finding=None, operation="drain")
    resume = action("resume", "train_resumed", "-", caused_by="halt", finding=None, operation="drain")
    assert check_log([halt, resume], []).broken == 0
