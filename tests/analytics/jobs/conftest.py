"""Fixtures: one synthetic lake per test session, with its truth."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.analytics.jobs.factories import SyntheticFleet, build_lake


@pytest.fixture(scope="session")
def synthetic_lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], SyntheticFleet]:
    fleet = SyntheticFleet()
    lake = tmp_path_factory.mktemp("lake")
    truth = build_lake(lake, fleet)
    return lake, truth, fleet
