"""Topic and group naming of a scenario, and the ``faults run`` command line (no broker needed)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fleetpulse.faults.cli import app
from fleetpulse.faults.errors import UnknownScenarioError
from fleetpulse.faults.runner import SCENARIOS, check_names
from fleetpulse.faults.sandbox import consumed_topics, sandbox, variant
from ground.settings import Settings


def test_variants_share_inputs_and_own_outputs_and_groups() -> None:
    s = sandbox(Settings.load(), "127.0.0.1:1", "run1.wk.")
    ref, kill = variant(s, "ref"), variant(s, "kill")
    assert (
        s.topics.samples.name
        == ref.topics.samples.name
        == kill.topics.samples.name
        == "run1.wk.fleet.samples"
    )
    assert (ref.topics.actions.name, kill.topics.actions.name) == (
        "run1.wk.ref.fleet.actions",
        "run1.wk.kill.fleet.actions",
    )
    assert ref.detect.app_id != kill.detect.app_id and ref.bootstrap_servers == "127.0.0.1:1"
    groups = consumed_topics(kill)
    assert groups[f"{kill.detect.app_id}-samples"] == ["run1.wk.fleet.samples"]
    assert groups[kill.detect.app_id][:2] == [
        "run1.wk.fleet.errors",
        f"{kill.detect.app_id}-cluster-summaries",
    ]


def test_scenario_names() -> None:
    assert (
        check_names([])
        == list(SCENARIOS)
        == [
            "worker-kill",
            "broker-restart",
            "receiver-down",
            "poison",
            "broker-outage",
            "receiver-slow",
            "disk-full",
        ]
    )
    assert check_names(["poison", "poison"]) == ["poison"]
    with pytest.raises(UnknownScenarioError, match="choose from"):
        check_names(["nope"])


def test_cli_help_and_unknown_scenario() -> None:
    runner = CliRunner()
    assert "--scenario" in runner.invoke(app, ["run", "--help"]).output
    result = runner.invoke(app, ["run", "--scenario", "nope"])
    assert result.exit_code != 0 and isinstance(result.exception, UnknownScenarioError)
