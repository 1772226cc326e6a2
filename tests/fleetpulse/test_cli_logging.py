"""Every fleetpulse command demotes the known-harmless library records, not only the detect worker."""

from __future__ import annotations

import logging
from pathlib import Path

from typer.testing import CliRunner

from fleetpulse.cli import app
from ground.quiet_logs import SOURCES, DemoteHarmless


def test_the_root_command_installs_the_demotions(tmp_path: Path) -> None:
    for name in SOURCES:
        logger = logging.getLogger(name)
        for f in list(logger.filters):
            logger.removeFilter(f)
    CliRunner().invoke(app, ["score", "--truth", str(tmp_path / "missing"), "--findings-from", "lake"])
    assert all(any(isinstance(f, DemoteHarmless) for f in logging.getLogger(n).filters) for n in SOURCES)
