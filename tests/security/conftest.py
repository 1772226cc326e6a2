"""Fixtures for the security tests: a clean FLEETPULSE_* environment and recognisable secrets."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No FLEETPULSE_* / KAFKA_* variables and no fleetpulse.toml from the developer's shell leak in."""
    for name in list(os.environ):
        if name.startswith(("FLEETPULSE_", "KAFKA_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    yield


@pytest.fixture
def password() -> str:
    return f"sasl-{secrets.token_hex(10)}"


@pytest.fixture
def hmac_secret() -> str:
    return f"hmac-{secrets.token_hex(16)}"
