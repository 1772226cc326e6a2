"""Data folders and files are created 0700 / 0600 (finding 14): broker data, detector state, the lake, received alerts."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ground.private_files import private_dir, write_private
from ground.settings import Settings


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_private_dir_creates_and_tightens(tmp_path: Path) -> None:
    assert mode(private_dir(tmp_path / "a" / "b")) == 0o700
    wide = tmp_path / "wide"
    wide.mkdir(mode=0o755)
    os.chmod(wide, 0o755)
    assert mode(private_dir(wide)) == 0o700


def test_write_private_tightens_an_older_wider_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("old")
    os.chmod(path, 0o644)
    write_private(path, "new")
    assert mode(path) == 0o600 and path.read_text() == "new"


def test_the_broker_data_folder_and_its_properties_are_private(tmp_path: Path) -> None:
    from fleetpulse.broker.process import LocalBroker
    from ground.settings.broker import BrokerSettings

    broker = LocalBroker(BrokerSettings(data_dir=tmp_path / "broker"))
    broker._write_config()
    assert mode(broker.files.data_dir) == 0o700
    assert mode(broker.files.server_properties) == 0o600
    assert mode(broker.files.log4j_properties) == 0o600


def test_the_archivers_local_lake_is_private(tmp_path: Path) -> None:
    from analytics.lake.archiver import Archiver

    settings = Settings.model_validate({"lake": {"path": str(tmp_path / "lake")}})
    archiver = Archiver(settings)
    assert not (tmp_path / "lake").exists()  # nothing before the topics are there (test_archiver.py)
    archiver.prepare_lake()  # what a run does once it found its topics
    assert mode(tmp_path / "lake") == 0o700
