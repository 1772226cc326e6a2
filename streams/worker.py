"""Run a detect worker in this process, or as a subprocess the demo and tests can start and kill.

Several workers with the same ``app_id`` share the partitions (one consumer group); each
needs its own ``data_dir`` (local RocksDB state) and web port.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ground.kafka.topics import TopicSpec
from streams.errors import WorkerError
from streams.policy import Policy, load_policy

if TYPE_CHECKING:
    from ground.settings import Settings
    from streams.app import DetectApp


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
    detect = settings.detect.model_copy(update=updates)
    settings = settings.model_copy(update={"detect": detect})
    policy = load_policy(detect.policy_file)
    folder = detect.data_dir or settings.paths.home / "detect" / detect.app_id
    return settings, policy, Path(folder).expanduser()


def internal_topics(settings: Settings, partitions: dict[str, int] | None = None) -> list[TopicSpec]:
    """Faust's repartition and changelog topics and the host-window checkpoints, created before Faust starts.

    Faust skips a missing source topic when it subscribes, and a changelog it has just
    created can show 0 partitions in its metadata for a moment (PartitionsMismatch).
    """
    d = settings.detect
    t = settings.topics
    parts = partitions or {}
    spec = {"replication_factor": d.internal_replication}
    out = [
        TopicSpec(name=f"{d.app_id}-{suffix}", partitions=d.internal_partitions, **spec)
        for suffix in ("cluster-summaries", "planner")
    ]
    changelogs = {
        "repeat-hosts": parts.get(t.errors.name, t.errors.partitions),
        "cluster-windows": d.internal_partitions,
    }
    out += [
        TopicSpec(name=f"{d.app_id}-{table}-changelog", partitions=n, cleanup_policy="compact", **spec)
        for table, n in changelogs.items()
    ]
    out.append(
        TopicSpec(
            name=checkpoint_topic(settings),
            partitions=parts.get(t.samples.name, t.samples.partitions),
            cleanup_policy="compact",
            segment_ms=CHECKPOINT_SEGMENT_MS,
            **spec,
        )
    )
    return out


CHECKPOINT_SEGMENT_MS = 10 * 60 * 1000  # one checkpoint record per partition every few seconds


def samples_group(settings: Settings) -> str:
    """The consumer group of the host-window stage (``fleet.samples``), beside Faust's own."""
    return f"{settings.detect.app_id}-samples"


def consumer_groups(settings: Settings) -> dict[str, list[str]]:
    """Which of a detect worker's consumer groups commits offsets on which topics (for lag checks).

    The samples group commits after each checkpoint (``detect.samples_checkpoint_s``), so its
    committed lag reaches 0 up to that long after the last sample was processed.
    """
    d, t = settings.detect, settings.topics
    faust_topics = [t.errors.name, t.findings.name, f"{d.app_id}-cluster-summaries", f"{d.app_id}-planner"]
    return {d.app_id: faust_topics, samples_group(settings): [t.samples.name]}


def checkpoint_topic(settings: Settings) -> str:
    """The host-window stage's checkpoints: one partition per samples partition, compacted."""
    return f"{settings.detect.app_id}-host-windows-checkpoints"


def build_detect_app(
    settings: Settings,
    *,
    policy_file: Path | None = None,
    web_port: int | None = None,
    data_dir: Path | None = None,
) -> DetectApp:
    """Create the topics if missing, then the Faust app (tables sized to the real partition counts)."""
    from ground.kafka import admin
    from streams.app import DetectApp

    settings, policy, folder = resolve(
        settings, policy_file=policy_file, web_port=web_port, data_dir=data_dir
    )
    admin.wait_for_broker(settings.bootstrap_servers, settings.kafka, timeout=30.0)
    admin.create_topics(settings)
    partitions = admin.topic_partitions(settings)
    admin.create_topics(settings, internal_topics(settings, partitions))
    folder.mkdir(parents=True, exist_ok=True)
    return DetectApp(settings, policy, data_dir=folder, partitions=partitions)


def run_worker(
    settings: Settings,
    *,
    policy_file: Path | None = None,
    web_port: int | None = None,
    data_dir: Path | None = None,
) -> None:
    """Run until SIGINT/SIGTERM (blocking)."""
    detect = build_detect_app(settings, policy_file=policy_file, web_port=web_port, data_dir=data_dir)
    worker = bounded_shutdown_worker(
        detect.app,
        settings.detect.shutdown_timeout_s,
        loglevel=settings.detect.log_level,
        quiet=True,
        redirect_stdouts=False,
        override_logging=True,
    )
    worker.execute_from_commandline()


def _exit_if_still_running(timeout_s: float) -> None:
    """Runs in a daemon thread: a shutdown that hangs ends the process (as a crash would)."""
    time.sleep(timeout_s)
    sys.stderr.write(
        f"fleetpulse detect: shutdown did not finish within {timeout_s:g} s (broker unreachable?); "
        "exiting without it — at-least-once processing resumes from the last commit and checkpoint\n"
    )
    sys.stderr.flush()
    os._exit(3)


def bounded_shutdown_worker(app: Any, timeout_s: float, **options: Any) -> Any:
    """A ``faust.Worker`` whose SIGTERM/SIGINT shutdown is bounded in time.

    With the broker gone, Faust's consumer thread can die during shutdown and leave the main
    thread waiting for it forever (seen with faust-streaming 0.15.3 / aiokafka 0.14), so a
    SIGTERM never ended the worker. A watchdog thread, started with the first signal, exits
    the process after ``timeout_s`` if the graceful path has not.
    """
    import faust

    class BoundedShutdownWorker(faust.Worker):  # type: ignore[misc]
        def _schedule_shutdown(self, signum: signal.Signals) -> None:
            if not self._signal_stop_time:
                threading.Thread(target=_exit_if_still_running, args=(timeout_s,), daemon=True).start()
            super()._schedule_shutdown(signum)

    return BoundedShutdownWorker(app, **options)


def settings_env(settings: Settings) -> dict[str, str]:
    """Environment that rebuilds the same kafka/topics/detect sections in a child process."""
    kafka = settings.kafka.model_dump(mode="json")
    if settings.kafka.sasl_password is not None:
        kafka["sasl_password"] = settings.kafka.sasl_password.get_secret_value()
    kafka["bootstrap_servers"] = settings.bootstrap_servers
    return {
        "FLEETPULSE_KAFKA": json.dumps(kafka),
        "FLEETPULSE_TOPICS": json.dumps(settings.topics.model_dump(mode="json")),
        "FLEETPULSE_DETECT": json.dumps(settings.detect.model_dump(mode="json")),
        "FLEETPULSE_PATHS": json.dumps(settings.paths.model_dump(mode="json")),
    }


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
) -> WorkerProcess:
    """Start ``fleetpulse detect`` in a child process with these settings; returns at once."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETPULSE_")}
    env.update(settings_env(settings))
    env.update(extra_env or {})
    args = [sys.executable, "-c", "from fleetpulse.cli import main; main()", "detect"]
    args += ["--web-port", str(web_port), "--data-dir", str(data_dir)]
    if policy_file is not None:
        args += ["--policy", str(policy_file)]
    out: IO[bytes] | int = subprocess.DEVNULL
    if log_path is not None:
        out = open(log_path, "ab")  # noqa: SIM115 (owned by the child for its lifetime)
    proc = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return WorkerProcess(proc, web_port, log_path)
