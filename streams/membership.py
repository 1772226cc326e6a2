"""Static group membership (KIP-345): a stable ``group.instance.id`` per detect worker.

A restarted worker that rejoins with the same id gets its partitions back without a rebalance
and without waiting out the session timeout. The id must be unique among running workers (a
second member with the same id fences the first), and stable across restarts: the host name
and the worker's own data folder (its RocksDB state, never shared) give both. The worker's web
address is part of it too: Faust's assignor asserts that a member's advertised URL is the one
its assignment names, so a restart on another port under the same id would crash on joining.
"""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Callable
from pathlib import Path

from ground.settings.detect import DetectSettings


def instance_id(
    detect: DetectSettings, data_dir: Path, hostname: Callable[[], str] = socket.gethostname
) -> str | None:
    """This worker's ``group.instance.id``, or None when static membership is off."""
    if not detect.static_membership:
        return None
    if detect.instance_id:
        return detect.instance_id
    where = f"{hostname()}:{Path(data_dir).expanduser().resolve()}:{detect.web_host}:{detect.web_port}"
    return f"{detect.app_id}-{hashlib.sha256(where.encode()).hexdigest()[:16]}"


def stage_instance_id(instance: str | None, stage: str) -> str | None:
    """The id of one of the worker's own consumers (a group of its own, so a suffix keeps it unique)."""
    return None if instance is None else f"{instance}-{stage}"
