"""Fixtures of the quality tests: one warm great-expectations gate, synthetic batches per table."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from analytics.lake.synthetic import host_ids, synthetic_records
from analytics.quality.gate import QualityGate
from schemas.arrow import table_name, to_table
from tests.analytics.lake.helpers import NOW

HOSTS = frozenset(host_ids(4))


@pytest.fixture(scope="session")
def gate() -> Iterator[QualityGate]:
    g = QualityGate()
    g.validate("alert_raised", batches()["alert_raised"], NOW)  # pay for the GX import here, not in a test
    yield g


def batches(**changes: Any) -> dict[str, pa.Table]:
    """One good Arrow batch per lake table."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in synthetic_records(n_hosts=4, samples_per_host=2):
        by.setdefault(r["event_type"], []).append(r)
    return {table_name(et): to_table(et, rs) for et, rs in by.items()}


@pytest.fixture
def good() -> dict[str, pa.Table]:
    return batches()
