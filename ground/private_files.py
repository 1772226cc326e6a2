"""Folders and files only their owner can read: detector state, the lake, the broker's data, received alerts.

They hold host names, failure history and (the broker's ``server.properties``) listener settings that
may carry passwords, so they are created 0700 / 0600 as the webhook outbox is; an older, wider folder
is tightened when it is opened again.
"""

from __future__ import annotations

import os
from pathlib import Path


def private_dir(path: Path) -> Path:
    """``path`` as a folder only its owner can enter (created with its parents, tightened if it existed)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)
    return path


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, readable by its owner only (also when the file existed, wider)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with open(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
