"""The shutdown deadline ends a process within its budget, counted from the signal's arrival.

Each case runs in a child process (signal masks and timers are process-wide): one whose main
thread never gets back to its event loop, one whose forward step then holds the GIL so no Python
thread can run the exit, one still starting when the signal comes.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

BUDGET_S = 2.0

CHILD = textwrap.dedent(
    """
    import re, sys, time
    from streams.shutdown import ShutdownDeadline

    deadline = ShutdownDeadline({budget})
    deadline.arm()
    case = sys.argv[1]
    if case == "busy-loop":
        deadline.forward_to(lambda signum: None)  # handed to a loop that is never free to run it
    elif case == "gil-held":
        deadline.forward_to(lambda signum: re.match(r"(a+)+$", "a" * 40 + "b"))  # no GIL for anyone else
    print("ready", flush=True)
    end = time.monotonic() + 120
    while time.monotonic() < end:
        pass
    """
)


def stop_took(case: str) -> tuple[float, int]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(budget=BUDGET_S), case],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        sent = time.monotonic()
        child.send_signal(signal.SIGTERM)
        code = child.wait(30)
        return time.monotonic() - sent, code
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_a_busy_main_thread_does_not_delay_the_deadline() -> None:
    took, code = stop_took("busy-loop")
    assert code == 3 and took < BUDGET_S, (took, code)


def test_the_kernel_ends_a_process_whose_gil_is_held_past_the_deadline() -> None:
    took, code = stop_took("gil-held")
    assert code == -signal.SIGALRM and took < BUDGET_S, (took, code)


def test_a_signal_before_the_worker_exists_ends_the_process_at_once() -> None:
    took, code = stop_took("starting")
    assert code == 128 + signal.SIGTERM and took < BUDGET_S / 2, (took, code)
