"""Runs fleetpulse parts as child processes for the demo and the fault suite.

Each part is a ``fleetpulse <command>`` process started by ``ground.launch`` with its own log
file and the environment the caller gives (``ground.launch.child_env``: settings as
``FLEETPULSE_*`` variables, as in docker-compose). A long-running part that ends with
``EXIT_TEMPFAIL`` (a full disk, a publish the broker refused) is started again, as compose's
``restart: on-failure`` does, a few times at most. Ctrl-C reaches the supervisor first, which
then stops every part in order: SIGTERM, a grace period, SIGKILL.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ground.errors import FleetpulseError
from ground.launch import launch
from streams.fatal import EXIT_TEMPFAIL

log = logging.getLogger(__name__)

MAX_RESTARTS = 5  # a cause that outlasts this many starts needs a person, not another start


class PartFailedError(FleetpulseError):
    """A part exited with an error; the message carries the tail of its log."""


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """Distinct ports nobody listens on right now (all held open together, so they differ)."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in socks:
            sock.bind((host, 0))
        return [int(sock.getsockname()[1]) for sock in socks]


def tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@dataclass
class Part:
    name: str
    argv: list[str]
    log_path: Path
    process: subprocess.Popen[bytes]
    _log: IO[bytes] = field(repr=False)
    env: dict[str, str] = field(repr=False, default_factory=dict)
    cwd: Path | None = None
    keep_running: bool = True  # a service (restarted on EXIT_TEMPFAIL), not a job the caller waits for
    restarts: int = 0

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, grace_s: float = 15.0) -> int | None:
        self.keep_running = False  # stopped on purpose: not to be started again, whatever its exit
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self._log.close()
        return self.process.returncode

    def restartable(self) -> bool:
        return (
            self.keep_running
            and not self.alive()
            and self.process.returncode == EXIT_TEMPFAIL
            and self.restarts < MAX_RESTARTS
        )

    def restart(self) -> None:
        """Start the same command again, its output appended to the same log."""
        self._log.close()
        self.process, log_file = launch(self.argv, self.env, self.log_path, self.cwd)
        assert log_file is not None
        self._log = log_file
        self.restarts += 1

    def kill(self) -> None:
        """SIGKILL, as a crash would (fault injection)."""
        if self.alive():
            self.process.kill()
            self.process.wait(10)


class Supervisor:
    """Starts parts, waits for them, and stops them all on exit (also on Ctrl-C)."""

    def __init__(self, log_dir: Path, env: Mapping[str, str], cwd: Path | None = None) -> None:
        """``env`` is each part's whole environment (see ``ground.launch.child_env``)."""
        self.log_dir = log_dir
        self.env = dict(env)
        self.cwd = cwd
        self.parts: list[Part] = []
        log_dir.mkdir(parents=True, exist_ok=True)

    def start(self, name: str, argv: Sequence[str], extra_env: Mapping[str, str] | None = None) -> Part:
        return self._start(name, argv, extra_env, keep_running=True)

    def _start(
        self, name: str, argv: Sequence[str], extra_env: Mapping[str, str] | None, keep_running: bool
    ) -> Part:
        log_path = self.log_dir / f"{name}.log"
        env = {**self.env, **(extra_env or {})}
        proc, log_file = launch(argv, env, log_path, self.cwd)
        assert log_file is not None
        part = Part(name, list(argv), log_path, proc, log_file, env, self.cwd, keep_running)
        self.parts.append(part)
        return part

    def run(
        self, name: str, argv: Sequence[str], timeout_s: float, extra_env: Mapping[str, str] | None = None
    ) -> Part:
        """Start a part and wait for it to finish, tending the services meanwhile; raise PartFailedError on
        non-zero exit or timeout."""
        part = self._start(name, argv, extra_env, keep_running=False)
        deadline = time.monotonic() + timeout_s
        while (code := part.process.poll()) is None:
            if time.monotonic() >= deadline:
                part.stop()
                raise PartFailedError(
                    f"{name} did not finish within {timeout_s:.0f} s; log {part.log_path}:\n"
                    f"{tail(part.log_path)}"
                )
            self.tend()
            with contextlib.suppress(subprocess.TimeoutExpired):
                part.process.wait(min(1.0, max(0.0, deadline - time.monotonic())))
        part._log.close()
        if code != 0:
            raise PartFailedError(f"{name} exited with {code}; log {part.log_path}:\n{tail(part.log_path)}")
        return part

    def tend(self) -> None:
        """Start again every service that ended with EXIT_TEMPFAIL, up to MAX_RESTARTS times each."""
        for part in self.parts:
            if part.restartable():
                log.warning(
                    "%s exited %d; starting it again (%d of %d)",
                    part.name,
                    part.process.returncode,
                    part.restarts + 1,
                    MAX_RESTARTS,
                )
                part.restart()

    def check_alive(self, *parts: Part) -> None:
        """Raise PartFailedError for a part that has ended for good (after ``tend``'s restarts)."""
        self.tend()
        for part in parts:
            if not part.alive():
                raise PartFailedError(
                    f"{part.name} stopped unexpectedly (exit {part.process.returncode}); "
                    f"log {part.log_path}:\n{tail(part.log_path)}"
                )

    def stop_all(self, grace_s: float = 15.0) -> None:
        """SIGTERM every live part at once, wait out the grace, SIGKILL the rest.

        A second Ctrl-C while waiting skips the grace: every part is killed, none is left behind.
        """
        live = [p for p in reversed(self.parts) if p.alive()]
        for part in self.parts:
            part.keep_running = False
        try:
            for part in live:
                part.process.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + grace_s
            for part in live:
                try:
                    part.process.wait(max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    part.kill()
        except KeyboardInterrupt:
            for part in live:
                part.kill()
            raise
        finally:
            for part in self.parts:
                part._log.close()

    def __enter__(self) -> Supervisor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_all()


def wait_until(predicate: object, timeout_s: float, interval_s: float = 0.5) -> bool:
    """Poll ``predicate()`` until true or timeout; returns its last truthiness."""
    deadline = time.monotonic() + timeout_s
    while True:
        if predicate():  # type: ignore[operator]
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval_s)
