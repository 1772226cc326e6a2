"""A part of the pipeline under a fault, started again whenever it exits, as any supervisor would.

The restarts are counted: a part that exits on a fault needed something outside it to come back.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ground.launch import launch


@dataclass
class Watched:
    name: str
    argv: Sequence[str]
    env: Mapping[str, str]
    log_path: Path
    crashes: int = 0
    exit_codes: list[int] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _log: IO[bytes] | None = field(default=None, repr=False)

    def start(self) -> None:
        self._close_log()
        self.process, self._log = launch(self.argv, self.env, self.log_path)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def restart_if_dead(self) -> bool:
        """Start the part again if it exited; returns whether it had."""
        if self.process is None or self.alive():
            return False
        self.crashes += 1
        self.exit_codes.append(self.process.returncode)
        self.start()
        return True

    def stop(self, grace_s: float = 20.0) -> None:
        if self.alive():
            assert self.process is not None
            self.process.terminate()
            try:
                self.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
