"""Ending a detect worker at once, for failures after which its memory no longer matches its logs.

A refused state write, or actions applied to the fleet state that the broker never took: carrying on
would acknowledge the record being handled, commit past it and build on what no log holds. Ended before
any further commit, the worker started again (compose's ``restart: on-failure``, a service manager)
resumes from its last commit and folds the logs again, as after any crash.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable

log = logging.getLogger(__name__)

EXIT_TEMPFAIL = 75  # EX_TEMPFAIL: start the worker again once the cause (a full disk, the broker) is gone


def exit_process(code: int) -> None:
    os._exit(code)


def end_worker(why: str, exit_now: Callable[[int], None] = exit_process, code: int = EXIT_TEMPFAIL) -> None:
    """Log ``why`` and end the process with ``code``, flushing the logs first (``os._exit`` does not)."""
    log.critical("%s; ending the worker (exit %d) before it acknowledges the record", why, code)
    for handler in logging.getLogger().handlers:
        handler.flush()
    sys.stderr.flush()
    exit_now(code)
