"""Broker settings: folders are absolute from the start, whatever folder a command runs in."""

from __future__ import annotations

from pathlib import Path

import pytest

from ground.settings.broker import BrokerSettings


def test_relative_folders_are_made_absolute_where_they_are_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The JVM runs with ``cwd=data_dir``: a relative config path handed to it would not exist there."""
    monkeypatch.chdir(tmp_path)
    s = BrokerSettings(data_dir=Path("kdata"), cache_dir=Path("cache"))
    assert s.data_dir == tmp_path / "kdata" and s.cache_dir == tmp_path / "cache"
    monkeypatch.chdir(tmp_path.parent)  # a later `broker stop` from elsewhere finds the same broker
    assert s.model_copy().data_dir == tmp_path / "kdata"


def test_home_is_expanded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert BrokerSettings(data_dir=Path("~/b")).data_dir == tmp_path / "b"
