"""Where the local broker keeps its files inside ``data_dir``, named in one place."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple


class BrokerFiles(NamedTuple):
    """Every file and directory of one local broker; nothing here touches the disk."""

    data_dir: Path
    log_dirs: Path  # Kafka's log.dirs: topic partitions and the KRaft metadata log
    meta_properties: Path  # written by storage format; its presence means "formatted"
    server_properties: Path
    log4j_properties: Path
    log_file: Path  # the broker's own log (log4j2)
    console_file: Path  # JVM stdout/stderr: start-up failures before logging is up
    pid_file: Path
    lock_file: Path  # held while starting or stopping, so two commands never race

    @classmethod
    def of(cls, data_dir: Path) -> BrokerFiles:
        data_dir = data_dir.expanduser()
        log_dirs = data_dir / "kraft"
        return cls(
            data_dir=data_dir,
            log_dirs=log_dirs,
            meta_properties=log_dirs / "meta.properties",
            server_properties=data_dir / "server.properties",
            log4j_properties=data_dir / "log4j2.properties",
            log_file=data_dir / "broker.log",
            console_file=data_dir / "broker.out",
            pid_file=data_dir / "broker.pid",
            lock_file=data_dir / "broker.lock",
        )
