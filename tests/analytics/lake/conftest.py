"""Fixtures of the lake tests: a temporary lake, a warm quality gate, synthetic records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from analytics.lake.publish import Publisher
from analytics.lake.synthetic import synthetic_records
from analytics.quality.gate import QualityGate
from ground.delta import DeltaTables
from ground.settings.lake import LakeSettings
from tests.analytics.lake.helpers import NOW


@pytest.fixture(scope="session")
def gate() -> Iterator[QualityGate]:
    """One great-expectations context for the session, warmed up so the first test is not charged for the import."""
    g = QualityGate()
    records = [r for r in synthetic_records(n_hosts=1) if r["event_type"] == "HostInventoried"]
    from schemas.arrow import to_table

    g.validate("host_inventoried", to_table("HostInventoried", records), NOW)
    yield g


@pytest.fixture
def lake(tmp_path: Path) -> DeltaTables:
    return DeltaTables(tmp_path / "lake")


@pytest.fixture
def records() -> list[dict[str, Any]]:
    return synthetic_records(n_hosts=4, samples_per_host=3)


@pytest.fixture
def publisher_factory(lake: DeltaTables, gate: QualityGate):  # type: ignore[no-untyped-def]
    """``make(gated=False, **LakeSettings fields) -> Publisher`` on the test lake, clock fixed at NOW.

    Quality gates are off unless ``gated``: each GX run costs ~0.2 s, and exactly-once tests do not need them.
    """

    def make(
        frontier: dict | None = None,
        known_hosts: set[str] | None = None,
        gated: bool = False,
        **overrides: Any,
    ) -> Publisher:
        overrides.setdefault("quality", {"enabled": gated})
        settings = LakeSettings(**overrides)
        return Publisher(
            lake,
            settings,
            frontier or {},
            gate=gate if settings.quality.enabled else None,
            known_hosts=set() if known_hosts is None else known_hosts,
            clock=lambda: NOW,
        )

    return make
