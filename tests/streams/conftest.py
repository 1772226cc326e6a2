"""Fixtures of the streams tests (record factories live in ``factories.py``)."""

from __future__ import annotations

import pytest

from streams.core.policy import Policy, load_policy


@pytest.fixture(scope="session")
def policy() -> Policy:
    return load_policy()
