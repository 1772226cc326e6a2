"""SIGINT and SIGTERM as a stop request: long-running commands finish their batch, flush and leave cleanly."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def stop_on_signals(stop: threading.Event | None = None) -> Iterator[threading.Event]:
    """Inside, SIGINT and SIGTERM set ``stop`` (a new one if not given); the previous handlers come back after.

    Python installs signal handlers from the main thread only: elsewhere ``stop`` is only set by its owner.
    """
    stop = stop if stop is not None else threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
