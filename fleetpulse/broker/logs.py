"""Read the end of the broker's log, once (error messages, ``logs``) or as it grows (``logs --follow``)."""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path


def read_lines(path: Path, start: int = 0, max_bytes: int = 4 << 20) -> list[str]:
    """Lines from byte offset ``start`` on (at most the last ``max_bytes``); [] if the file is missing.

    A file now shorter than ``start`` was rotated or recreated, and is read from its beginning.
    """
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            begin = start if start <= size else 0
            fh.seek(max(begin, size - max_bytes))
            data = fh.read()
    except FileNotFoundError:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def size_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def tail(path: Path, lines: int = 40, start: int = 0) -> list[str]:
    """The last ``lines`` lines of a file (of what follows byte ``start``); [] if it is missing."""
    if lines <= 0:
        return []
    return list(deque(read_lines(path, start, max_bytes=1 << 20), maxlen=lines))


def since_spawn(log: Path, console: Path, marks: dict[Path, int], lines: int) -> str:
    """Errors the broker logged after the offsets in ``marks``, then the end of its log and of the JVM's output."""
    errors = [line for line in read_lines(log, marks.get(log, 0)) if "] ERROR " in line or "] FATAL " in line]
    parts = []
    if errors:
        parts.append(f"--- errors in the broker log {log} ---\n" + "\n".join(errors[:10]))
    for label, path in (("broker log", log), ("JVM output", console)):
        text = tail(path, lines, start=marks.get(path, 0))
        if text:
            parts.append(f"--- last {len(text)} lines of the {label} {path} ---\n" + "\n".join(text))
    return "\n".join(parts) or f"(nothing in {log} or {console})"


def follow(
    path: Path,
    *,
    poll_s: float = 0.5,
    stop: Callable[[], bool] = lambda: False,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[str]:
    """Yield lines appended to ``path`` from now on, reopening it when it is rotated or recreated."""
    position = path.stat().st_size if path.exists() else 0
    pending = ""
    while not stop():
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            size = 0
        if size < position:  # rotated or truncated: start from the top of the new file
            position, pending = 0, ""
        if size > position:
            with path.open("rb") as fh:
                fh.seek(position)
                chunk = fh.read(size - position)
            position += len(chunk)
            *complete, pending = (pending + chunk.decode("utf-8", errors="replace")).split("\n")
            yield from complete
        else:
            sleep(poll_s)
