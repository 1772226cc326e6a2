"""The supervisor starts a service again after a temporary failure (exit 75), and only then."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from fleetpulse.supervisor import MAX_RESTARTS, PartFailedError, Supervisor, wait_until
from streams.fatal import EXIT_TEMPFAIL

# Exits with the code in argv[2] on its first start (it leaves a mark), then stays up.
FAIL_ONCE = (
    "import pathlib, sys, time\n"
    "mark = pathlib.Path(sys.argv[1])\n"
    "if not mark.exists():\n"
    "    mark.touch(); print('first start', flush=True); sys.exit(int(sys.argv[2]))\n"
    "print('second start', flush=True); time.sleep(60)\n"
)


def supervisor(tmp_path: Path) -> Supervisor:
    return Supervisor(tmp_path / "logs", dict(os.environ))


def test_a_service_that_exits_tempfail_is_started_again(tmp_path: Path) -> None:
    with supervisor(tmp_path) as sup:
        part = sup.start("svc", [sys.executable, "-c", FAIL_ONCE, str(tmp_path / "mark"), str(EXIT_TEMPFAIL)])
        assert wait_until(lambda: not part.alive(), 10, 0.1)

        sup.check_alive(part)

        assert part.alive() and part.restarts == 1
        assert wait_until(lambda: "second start" in part.log_path.read_text(), 10, 0.1)
        assert "first start" in part.log_path.read_text()  # the same log, appended


def test_a_service_that_fails_otherwise_is_reported_not_restarted(tmp_path: Path) -> None:
    with supervisor(tmp_path) as sup:
        part = sup.start("svc", [sys.executable, "-c", FAIL_ONCE, str(tmp_path / "mark"), "1"])
        assert wait_until(lambda: not part.alive(), 10, 0.1)

        with pytest.raises(PartFailedError, match="exit 1"):
            sup.check_alive(part)
        assert part.restarts == 0


def test_a_service_that_keeps_failing_is_given_up_on(tmp_path: Path) -> None:
    with supervisor(tmp_path) as sup:
        part = sup.start("svc", [sys.executable, "-c", f"import sys; sys.exit({EXIT_TEMPFAIL})"])

        def given_up() -> bool:
            try:
                sup.check_alive(part)
            except PartFailedError:
                return True
            return False

        assert wait_until(given_up, 30, 0.1)
        assert part.restarts == MAX_RESTARTS


def test_services_are_tended_while_a_job_runs(tmp_path: Path) -> None:
    with supervisor(tmp_path) as sup:
        svc = sup.start("svc", [sys.executable, "-c", FAIL_ONCE, str(tmp_path / "mark"), str(EXIT_TEMPFAIL)])

        sup.run("job", [sys.executable, "-c", "import time; time.sleep(3)"], timeout_s=30)

        assert svc.alive() and svc.restarts == 1


def test_a_job_that_exits_tempfail_is_not_started_again(tmp_path: Path) -> None:
    with supervisor(tmp_path) as sup, pytest.raises(PartFailedError, match=f"exited with {EXIT_TEMPFAIL}"):
        sup.run("job", [sys.executable, "-c", f"import sys; sys.exit({EXIT_TEMPFAIL})"], timeout_s=30)


def test_a_service_stopped_on_purpose_is_not_started_again(tmp_path: Path) -> None:
    ends_tempfail_on_term = (
        "import signal, sys, time\n"
        f"signal.signal(signal.SIGTERM, lambda *_: sys.exit({EXIT_TEMPFAIL}))\n"
        "time.sleep(60)\n"
    )
    with supervisor(tmp_path) as sup:
        part = sup.start("svc", [sys.executable, "-c", ends_tempfail_on_term])
        time.sleep(0.5)  # its handler is installed
        assert part.stop() == EXIT_TEMPFAIL

        sup.tend()

        assert not part.alive() and part.restarts == 0
