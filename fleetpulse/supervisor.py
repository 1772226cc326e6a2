"""Runs fleetpulse parts as child processes for the demo and the fault suite.

Each part is a ``fleetpulse <command>`` process started by ``ground.launch`` with its own log
file and the environment the caller gives (``ground.launch.child_env``: settings as
``FLEETPULSE_*`` variables, as in docker-compose). Ctrl-C reaches the supervisor first, which
then stops every part in order: SIGTERM, a grace period, SIGKILL.
"""

from __future__ import annotations

import contextlib
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

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, grace_s: float = 15.0) -> int | None:
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self._log.close()
        return self.process.returncode

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
        log_path = self.log_dir / f"{name}.log"
        proc, log = launch(argv, {**self.env, **(extra_env or {})}, log_path, self.cwd)
        assert log is not None
        part = Part(name, list(argv), log_path, proc, log)
        self.parts.append(part)
        return part

    def run(self, name: str, argv: Sequence[str], timeout_s: float, extra_env: Mapping[str, str] | None = None) -> Part:
        """Start a part and wait for it to finish; raise PartFailedError on non-zero exit or timeout."""
        part = self.start(name, argv, extra_env)
        try:
            code = part.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            part.stop()
            raise PartFailedError(f"{name} did not finish within {timeout_s:.0f} s; log {part.log_path}:\n"
                                  f"{tail(part.log_path)}") from None
        part._log.close()
        if code != 0:
            raise PartFailedError(f"{name} exited with {code}; log {part.log_path}:\n{tail(part.log_path)}")
        return part

    def check_alive(self, *parts: Part) -> None:
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
