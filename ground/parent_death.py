"""A child process that ends with its parent (Linux's PR_SET_PDEATHSIG), with nothing heavy to import.

The ``fleetpulse`` command calls ``die_with_parent`` before it parses anything; ``ground.launch``
starts the children and sets ``PARENT_ENV`` for them.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PARENT_ENV = "FLEETPULSE_PARENT_PID"  # set by ``launch``: the child ends when this process does


def die_with_parent() -> None:
    """In a child started by ``launch``: have the kernel send SIGTERM when the parent dies (Linux).

    Called first thing by the ``fleetpulse`` command; a parent already gone by then ends the child
    at once. Elsewhere (another OS, no parent recorded) it does nothing.
    """
    parent = os.environ.get(PARENT_ENV)
    if not parent or not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != int(parent):
        signal.raise_signal(signal.SIGTERM)
