"""What every bench that starts processes needs (not a bench itself)."""

from __future__ import annotations

import signal
import sys


def exit_on_sigterm() -> None:
    """Make SIGTERM a ``SystemExit``, so a killed bench still runs its ``finally`` blocks: its broker and child
    processes stop with it (Python's default for SIGTERM ends the process without them, leaving an orphan broker)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
