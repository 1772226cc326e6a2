"""A deadline for a worker's shutdown, counted from the moment SIGTERM/SIGINT reaches the process.

Faust handles the signal on its event loop, so a handler-started timer begins late when the loop
is busy, and a Python watchdog needs the GIL to exit: a worker whose broker had gone away took
longer than its ``shutdown_timeout_s`` to end. Here the signal is taken by a thread of its own
(``sigwait``; every other thread inherits the blocked mask), which starts the clock at once and
hands the signal on to the loop; at ``GRACEFUL_SHARE`` of the budget that thread logs and exits,
and a kernel timer (``ITIMER_REAL``, SIGALRM's default action, no GIL needed) ends the process at
``BACKSTOP_SHARE`` if even that could not run. The rest of the budget is the exit itself.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable

SIGNALS = {signal.SIGTERM, signal.SIGINT}
GRACEFUL_SHARE = 0.8  # of shutdown_timeout_s, for the graceful path (commits, flushes)
BACKSTOP_SHARE = 0.9  # the kernel's SIGALRM; the last tenth is left for the process to go

Forward = Callable[[signal.Signals], object]


def block_signals() -> None:
    """Block SIGTERM/SIGINT in this thread now, so that every thread it starts inherits the mask.

    Call it before importing the worker: NumPy (the samples stage's decoding) starts its OpenBLAS
    threads at import, and a signal the kernel gave one of those would bypass the deadline's thread.
    A signal that comes before ``arm`` waits, and ends the still-starting process there.
    """
    signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)


class ShutdownDeadline:
    """Arm before any other thread starts; ``forward_to`` once the worker's loop exists."""

    def __init__(self, timeout_s: float, exit_code: int = 3) -> None:
        self.timeout_s = timeout_s
        self.exit_code = exit_code
        self._forward: Forward | None = None
        self._started = threading.Event()
        self._lock = threading.Lock()

    def arm(self) -> None:
        """Block the signals in this thread (so in every thread it starts) and wait for them in one."""
        block_signals()
        threading.Thread(target=self._wait, name="shutdown-deadline", daemon=True).start()

    def forward_to(self, forward: Forward) -> None:
        """Where a received signal goes (thread-safe: e.g. ``loop.call_soon_threadsafe``)."""
        self._forward = forward

    def start(self) -> None:
        """Start the clock (once); also called by the worker's own handler, whichever sees it first."""
        with self._lock:
            if self._started.is_set():
                return
            self._started.set()
        signal.setitimer(signal.ITIMER_REAL, self.timeout_s * BACKSTOP_SHARE)
        threading.Thread(target=self._exit_when_due, name="shutdown-exit", daemon=True).start()

    def _wait(self) -> None:
        while True:
            signum = signal.Signals(signal.sigwait(SIGNALS))
            self.start()
            if self._forward is None:  # not a worker yet (still starting): nothing to shut down
                os._exit(128 + signum)
            self._forward(signum)

    def _exit_when_due(self) -> None:
        time.sleep(self.timeout_s * GRACEFUL_SHARE)
        sys.stderr.write(
            f"fleetpulse detect: shutdown did not finish within {self.timeout_s:g} s (broker unreachable?); "
            "exiting without it — at-least-once processing resumes from the last commit and checkpoint\n"
        )
        sys.stderr.flush()
        os._exit(self.exit_code)
