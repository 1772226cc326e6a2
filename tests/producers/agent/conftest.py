"""Factories for host-agent tests: a fixture host under tmp_path and a fake pynvml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from producers.agent.collector import Problems
from producers.agent.testing import FixtureHost, fake_pynvml

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def host(tmp_path: Path) -> FixtureHost:
    return FixtureHost(tmp_path / "host")


@pytest.fixture
def problems() -> Problems:
    return Problems()


@pytest.fixture
def nvml() -> Any:
    return fake_pynvml()


def corpus() -> list[tuple[str, str]]:
    """(expected, kmsg line) pairs of the checked-in corpus."""
    out: list[tuple[str, str]] = []
    expected = ""
    for line in (FIXTURES / "kmsg_corpus.txt").read_text().splitlines():
        if line.startswith("# => "):
            expected = line[5:]
        elif line and not line.startswith("#"):
            out.append((expected, line))
    return out
