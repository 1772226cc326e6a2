"""What every bench that starts processes needs (not a bench itself)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path


def exit_on_sigterm() -> None:
    """Make SIGTERM a ``SystemExit``, so a killed bench still runs its ``finally`` blocks: its broker and child
    processes stop with it (Python's default for SIGTERM ends the process without them, leaving an orphan broker)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process has used so far (its threads included; 0 without Linux ``/proc``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
