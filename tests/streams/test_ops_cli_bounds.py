"""``fleetpulse ops record`` checks the same bounds as ``POST /ops/events`` before it reaches Kafka."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fleetpulse.cli import app as cli


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["node-1", "--at", "9999-12-31"], "more than a day after now"),  # finding 4: was accepted
        (["node-1", "--at", "1999-12-31"], "946684800000"),  # 2000-01-01
        (["node-1", "--at", "0001-01-01T00:00:00-01:00"], "946684800000"),
        (["node-1", "--at", "tomorrow"], "ISO 8601"),
        (["../../etc"], "breaks the id"),
        (["h" * 200], "breaks the id"),
        (["node\x1b[2J"], "breaks the id"),
    ],
)
def test_out_of_bounds_steps_are_usage_errors(args: list[str], why: str) -> None:
    host, *rest = args
    result = CliRunner().invoke(cli, ["ops", "record", host, "out_of_service", "--actor", "dc-tech", *rest])
    assert result.exit_code == 2, result.output
    assert why in " ".join(result.output.split()), result.output
    assert "\x1b" not in result.output
