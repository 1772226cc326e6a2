"""A detect worker under test: started, killed with SIGKILL, restarted on its own state, drained.

Wraps ``streams.worker.spawn_worker`` (a real ``fleetpulse detect`` child process) with what
the scenarios need: readiness, a "caught up" probe over the consumer group's lag, and the
count of kills and restarts it went through.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fleetpulse.faults.errors import ScenarioError
from fleetpulse.faults.sandbox import OUTPUTS, consumed_topics
from fleetpulse.supervisor import free_ports
from ground.kafka.reading import end_offsets, group_lags
from streams.core.errors import WorkerError
from streams.worker import spawn_worker

if TYPE_CHECKING:
    from ground.settings import Settings
    from streams.worker import WorkerProcess


def free_port() -> int:
    return free_ports(1)[0]


def _tail(path: Path, chars: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


@dataclass
class Detector:
    """One variant's detect worker (one process at a time, same data dir across restarts)."""

    settings: Settings
    folder: Path
    scenario: str
    kills: int = 0
    starts: int = 0
    worker: WorkerProcess | None = field(default=None, repr=False)
    state_dir: Path | None = None  # default: <folder>/state
    wrap: Callable[[list[str]], list[str]] | None = field(default=None, repr=False)  # see spawn_worker

    @property
    def log_path(self) -> Path:
        return self.folder / "detect.log"

    def start(self, ready_timeout_s: float = 120.0) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.worker = spawn_worker(
            self.settings,
            web_port=free_port(),
            data_dir=self.state_dir or self.folder / "state",
            log_path=self.log_path,
            wrap=self.wrap,
        )
        self.starts += 1
        try:
            self.worker.wait_ready(ready_timeout_s)
        except WorkerError as exc:
            self.worker.kill()
            raise ScenarioError(self.scenario, f"{exc}\n{_tail(self.log_path)}") from exc

    def alive(self) -> bool:
        return self.worker is not None and self.worker.process.poll() is None

    def check_alive(self) -> None:
        if not self.alive():
            code = None if self.worker is None else self.worker.process.returncode
            raise ScenarioError(
                self.scenario, f"detect worker exited ({code}); log tail:\n{_tail(self.log_path)}"
            )

    def kill(self) -> None:
        """SIGKILL: no commit, no flush, no goodbye to the group (a crash)."""
        if self.worker is not None and self.alive():
            self.worker.kill()
            self.kills += 1

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.stop()

    def lags(self) -> dict[str, int | None]:
        """Per consumed topic: records its consumer group has not committed yet."""
        out: dict[str, int | None] = {}
        for group, topics in consumed_topics(self.settings).items():
            out.update(group_lags(self.settings.bootstrap_servers, self.settings.kafka, group, topics))
        return out

    def consumed(self) -> int:
        """Records of the input topics the worker has committed so far (progress between kills)."""
        lags = self.lags()
        inputs = self.input_topics()
        ends = end_offsets(self.settings.bootstrap_servers, self.settings.kafka, inputs)
        total = 0
        for t in inputs:
            lag = lags[t]
            total += ends[t] - (lag if lag is not None else ends[t])
        return total

    def input_topics(self) -> list[str]:
        return [self.settings.topics.samples.name, self.settings.topics.errors.name]

    def wait_drained(self, timeout_s: float = 300.0, quiet_s: float = 5.0) -> float:
        """Block until every consumed topic has lag 0 and no output moved for ``quiet_s``; returns seconds."""
        started = time.monotonic()
        outputs = [getattr(self.settings.topics, k).name for k in OUTPUTS]
        last: tuple[object, ...] | None = None
        stable_since = time.monotonic()
        while time.monotonic() - started < timeout_s:
            self.check_alive()
            lags = self.lags()
            snapshot = (
                tuple(sorted(lags.items())),
                tuple(
                    sorted(end_offsets(self.settings.bootstrap_servers, self.settings.kafka, outputs).items())
                ),
            )
            done = all(lag == 0 for lag in lags.values())
            if snapshot != last:
                last, stable_since = snapshot, time.monotonic()
            elif done and time.monotonic() - stable_since >= quiet_s:
                return time.monotonic() - started
            time.sleep(1.0)
        raise ScenarioError(
            self.scenario,
            f"detect worker {self.settings.detect.app_id} did not catch up within {timeout_s:.0f} s "
            f"(lags {self.lags()}); log {self.log_path}",
        )
