"""Run a detect worker in this process, or as a subprocess the demo and tests can start and kill.

Several workers with the same ``app_id`` share the partitions (one consumer group); each
needs its own ``data_dir`` (local RocksDB state) and web port.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import faust

from ground.kafka import admin
from ground.launch import child_env, fleetpulse_argv, launch
from ground.private_files import private_dir
from ground.quiet_logs import install as quiet_harmless_logs
from ground.repeated_log_lines import install as limit_repeated_logs
from ground.secret_strength import check_strength
from streams.app import DetectApp
from streams.core.errors import WorkerError
from streams.core.policy import Policy, load_policy
from streams.shutdown import ShutdownDeadline
from streams.topology import internal_topics

if TYPE_CHECKING:
    from collections.abc import Callable

    from ground.settings import Settings


def resolve(
    settings: Settings,
    *,
    policy_file: Path | None = None,
    web_port: int | None = None,
    data_dir: Path | None = None,
) -> tuple[Settings, Policy, Path]:
    """Apply command-line overrides; load and validate the policy (fails fast with the bad key)."""
    updates: dict[str, Any] = {}
    if policy_file is not None:
        updates["policy_file"] = policy_file
    if web_port is not None:
        updates["web_port"] = web_port
    if data_dir is not None:
        updates["data_dir"] = data_dir
    settings = settings.with_section("detect", **updates)
    detect = settings.detect
    policy = load_policy(detect.policy_file)
    folder = detect.data_dir or settings.paths.home / "detect" / detect.app_id
    return settings, policy, Path(folder).expanduser()


def build_detect_app(
    settings: Settings,
    *,
    policy_file: Path | None = None,
    web_port: int | None = None,
    data_dir: Path | None = None,
) -> DetectApp:
    """Create the topics if missing, then the Faust app (tables sized to the real partition counts)."""

    settings, policy, folder = resolve(
        settings, policy_file=policy_file, web_port=web_port, data_dir=data_dir
    )
    admin.wait_for_broker(settings.bootstrap_servers, settings.kafka, timeout=30.0)
    admin.create_topics(settings)
    partitions = admin.topic_partitions(settings)
    admin.create_topics(settings, internal_topics(settings, partitions))
    private_dir(folder)  # the fleet's state: hosts, findings, outages
    return DetectApp(settings, policy, data_dir=folder, partitions=partitions)


def check_ops_token(settings: Settings) -> None:
    """A set ``detect.ops_token`` must be as strong as a signing secret (ConfigError at start-up)."""
    token = settings.detect.ops_token
    if token is not None and token.get_secret_value():  # empty: unset, the endpoint is off
        check_strength(token.get_secret_value(), "FLEETPULSE_DETECT__OPS_TOKEN", "the operator token")


def run_worker(
    settings: Settings,
    *,
    policy_file: Path | None = None,
    web_port: int | None = None,
    data_dir: Path | None = None,
) -> None:
    """Run until SIGINT/SIGTERM (blocking); the shutdown that follows is bounded in time."""
    check_ops_token(settings)
    deadline = ShutdownDeadline(settings.detect.shutdown_timeout_s)
    deadline.arm()  # first: every thread started from here on inherits the blocked signals
    quiet_harmless_logs()
    limit_repeated_logs()
    detect = build_detect_app(settings, policy_file=policy_file, web_port=web_port, data_dir=data_dir)
    worker = bounded_shutdown_worker(
        detect.app,
        deadline,
        loglevel=settings.detect.log_level,
        quiet=True,
        redirect_stdouts=False,
        override_logging=True,
    )
    worker.execute_from_commandline()


def bounded_shutdown_worker(app: Any, deadline: ShutdownDeadline, **options: Any) -> Any:
    """A ``faust.Worker`` whose SIGTERM/SIGINT shutdown ends within ``deadline.timeout_s``.

    With the broker gone, Faust's consumer thread can die during shutdown and leave the main
    thread waiting for it forever (seen with faust-streaming 0.15.3 / aiokafka 0.14). The
    deadline's thread receives the signal and hands it to the loop; a signal that reaches the
    loop's own handler first starts the deadline too.
    """

    class BoundedShutdownWorker(faust.Worker):  # type: ignore[misc]
        def _schedule_shutdown(self, signum: signal.Signals) -> None:
            deadline.start()
            super()._schedule_shutdown(signum)

    worker = BoundedShutdownWorker(app, **options)
    deadline.forward_to(lambda signum: worker.loop.call_soon_threadsafe(worker._schedule_shutdown, signum))
    return worker


@dataclass
class WorkerProcess:
    """A detect worker running as a child process (``fleetpulse detect``)."""

    process: subprocess.Popen[bytes]
    web_port: int
    log_path: Path | None

    @property
    def pid(self) -> int:
        return self.process.pid

    def url(self, path: str = "/health") -> str:
        return f"http://127.0.0.1:{self.web_port}{path}"

    def get(self, path: str, timeout_s: float = 2.0) -> bytes:
        with urllib.request.urlopen(self.url(path), timeout=timeout_s) as resp:  # noqa: S310 (loopback only)
            return bytes(resp.read())

    def get_json(self, path: str, timeout_s: float = 2.0) -> Any:
        return json.loads(self.get(path, timeout_s))

    def wait_ready(self, timeout_s: float = 60.0) -> dict[str, Any]:
        """Block until /health says ok and partitions are assigned; WorkerError if it dies or times out."""
        deadline = time.monotonic() + timeout_s
        last: Any = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise WorkerError(
                    f"detect worker exited with {self.process.returncode}; log: {self.log_path}"
                )
            try:
                last = self.get_json("/health")
                if last.get("status") == "ok" and last.get("assigned"):
                    return last
            except OSError:
                pass
            time.sleep(0.25)
        raise WorkerError(
            f"detect worker not ready after {timeout_s:.0f} s (last health {last}); log: {self.log_path}"
        )

    def stop(self, timeout_s: float = 30.0) -> int:
        """SIGTERM and wait (graceful: commits offsets and flushes); SIGKILL if it hangs."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        return self.process.returncode

    def kill(self) -> int:
        """SIGKILL: no commit, no flush (the crash the at-least-once design has to survive)."""
        if self.process.poll() is None:
            self.process.kill()
        return self.process.wait(10)


def spawn_worker(
    settings: Settings,
    *,
    web_port: int,
    data_dir: Path,
    policy_file: Path | None = None,
    log_path: Path | None = None,
    extra_env: dict[str, str] | None = None,
    wrap: Callable[[list[str]], list[str]] | None = None,
) -> WorkerProcess:
    """Start ``fleetpulse detect`` in a child process with these settings; returns at once.

    ``wrap`` turns the command into the one to run (e.g. inside another mount namespace); it must
    exec the command in the same process, so that signals reach the worker.
    """
    args = fleetpulse_argv("detect", "--web-port", str(web_port), "--data-dir", str(data_dir))
    if policy_file is not None:
        args += ["--policy", str(policy_file)]
    proc, _log = launch(wrap(args) if wrap else args, child_env(settings, extra_env), log_path)
    return WorkerProcess(proc, web_port, log_path)
