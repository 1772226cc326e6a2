"""Start, stop and inspect the local single-node Kafka broker as a detached JVM process.

The process outlives the command that started it (its own session, a pid file in
``data_dir``), so ``fleetpulse broker start`` returns and ``stop`` works from another shell.
Data persists across stop/start: storage is formatted only once.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from fleetpulse.broker import jars
from fleetpulse.broker.errors import BrokerStartError, PortInUseError
from fleetpulse.broker.jvm import broker_argv, format_argv
from fleetpulse.broker.layout import BrokerFiles
from fleetpulse.broker.logs import since_spawn, size_of
from fleetpulse.broker.properties import log4j2_properties, render, server_properties
from fleetpulse.broker.system import is_kafka_on, pid_alive, port_is_free
from ground.kafka.admin import broker_answers
from ground.kafka.config import KafkaSettings
from ground.private_files import private_dir, write_private
from ground.settings.broker import BrokerSettings

LOG_TAIL_LINES = 40
Reporter = Callable[[str], None]


class BrokerStatus(NamedTuple):
    running: bool  # the JVM from our pid file is alive
    ready: bool  # ... and answers a metadata request
    pid: int | None
    bootstrap: str
    data_dir: Path
    log_file: Path
    kafka_version: str


class LocalBroker:
    """One local KRaft broker (broker + controller in one JVM) defined by ``BrokerSettings``."""

    def __init__(
        self,
        settings: BrokerSettings,
        *,
        kafka: KafkaSettings | None = None,
        reporter: Reporter = lambda message: None,
        clock: Callable[[], float] = time.monotonic,
        die_with_caller: bool = False,
    ) -> None:
        self.settings = settings
        # a test's or a fault run's broker: the kernel ends it if this process is killed before stop()
        self._die_with_caller = die_with_caller
        self.files = BrokerFiles.of(settings.data_dir)
        self._kafka = kafka or KafkaSettings()  # the local broker speaks PLAINTEXT
        self._report = reporter
        self._clock = clock
        self._proc: subprocess.Popen[bytes] | None = None  # set when this object started the JVM
        self._log_marks: dict[Path, int] = {}  # log sizes when the JVM was spawned: error tails start there

    @property
    def bootstrap_servers(self) -> str:
        return self.settings.bootstrap

    @property
    def log_path(self) -> Path:
        return self.files.log_file

    def __repr__(self) -> str:
        return f"LocalBroker({self.bootstrap_servers}, data_dir={self.files.data_dir})"

    # -- inspection -------------------------------------------------------------------------

    def pid(self) -> int | None:
        """The pid of our live broker JVM, or None (a stale pid file is ignored)."""
        try:
            pid = int(self.files.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        return pid if self._alive(pid) and is_kafka_on(pid, self.files.server_properties) else None

    def answers(self, timeout_s: float = 2.0) -> bool:
        return broker_answers(self.bootstrap_servers, self._kafka, timeout_s=timeout_s)

    def status(self) -> BrokerStatus:
        pid = self.pid()
        return BrokerStatus(
            running=pid is not None,
            ready=pid is not None and self.answers(),
            pid=pid,
            bootstrap=self.bootstrap_servers,
            data_dir=self.files.data_dir,
            log_file=self.log_path,
            kafka_version=self.settings.kafka_version,
        )

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """For error messages: errors logged since the last spawn, the end of the log, the JVM's output."""
        return since_spawn(self.files.log_file, self.files.console_file, self._log_marks, lines)

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> BrokerStatus:
        """Start the broker unless it already runs; returns once it answers metadata requests."""
        with self._exclusive():
            return self._start()

    def _start(self) -> BrokerStatus:
        started_at = self._clock()
        pid = self.pid()
        if pid is not None:
            self._wait_ready(pid, started_at, started_here=False)
            return self.status()
        self.files.pid_file.unlink(missing_ok=True)  # stale: the process is gone
        self._check_ports_free()
        java = jars.find_java(self.settings)
        jars.ensure_jars(self.settings, on_fetch=self._report)
        self._write_config()
        if not self.files.meta_properties.is_file():
            self._format_storage(java)
        self._report(f"starting Kafka {self.settings.kafka_version} on {self.bootstrap_servers}")
        pid = self._spawn(java)
        self._wait_ready(pid, started_at, started_here=True)
        return self.status()

    def ensure_running(self) -> str:
        """Start if needed; the bootstrap address."""
        self.start()
        return self.bootstrap_servers

    def stop(self) -> bool:
        """SIGTERM (a clean shutdown), SIGKILL after ``stop_timeout_s``; False if it was not running."""
        if not self.files.data_dir.is_dir():
            return False  # never started here: don't create the data dir just to stop nothing
        with self._exclusive():
            return self._stop()

    def _stop(self) -> bool:
        pid = self.pid()
        if pid is None:
            self.files.pid_file.unlink(missing_ok=True)
            return False
        self._report(f"stopping Kafka (pid {pid})")
        self._signal(pid, signal.SIGTERM)
        if not self._wait_exit(pid, self.settings.stop_timeout_s):
            self._report(f"Kafka did not stop within {self.settings.stop_timeout_s:g} s; killing it")
            self._signal(pid, signal.SIGKILL)
            self._wait_exit(pid, 10.0)
        self.files.pid_file.unlink(missing_ok=True)
        return True

    def kill(self) -> bool:
        """SIGKILL without a clean shutdown (a crash, for fault tests); the pid file stays behind."""
        pid = self.pid()
        if pid is None:
            return False
        self._signal(pid, signal.SIGKILL)
        self._wait_exit(pid, 10.0)
        return True

    def restart(self) -> BrokerStatus:
        with self._exclusive():
            self._stop()
            return self._start()

    # -- steps ------------------------------------------------------------------------------

    def _check_ports_free(self) -> None:
        host = self.settings.host
        for port, variable in (
            (self.settings.port, "FLEETPULSE_BROKER__PORT"),
            (self.settings.effective_controller_port, "FLEETPULSE_BROKER__CONTROLLER_PORT"),
        ):
            if not port_is_free(host, port):
                raise PortInUseError(
                    host,
                    port,
                    f"port {port} on {host} is in use by another process (not the fleetpulse broker of "
                    f"{self.files.data_dir}); stop that process or pick another port, e.g. "
                    f"{variable}={port + 100} (broker.{variable.rsplit('__', 1)[1].lower()} in fleetpulse.toml)",
                )

    def _write_config(self) -> None:
        private_dir(self.files.data_dir)
        header = "Written by fleetpulse on every start from BrokerSettings: edit the settings, not this file."
        props = server_properties(self.settings, self.files.log_dirs)
        write_private(self.files.server_properties, render(props, header))  # may hold JAAS passwords
        write_private(self.files.log4j_properties, render(log4j2_properties(self.files.log_file), header))

    def _format_storage(self, java: str) -> None:
        self._report(f"formatting storage in {self.files.log_dirs}")
        argv = format_argv(self.settings, self.files, java)
        try:
            result = jars.run_captured(argv, self.settings.start_timeout_s)
        except (OSError, subprocess.SubprocessError) as exc:
            raise BrokerStartError(
                f"formatting broker storage in {self.files.log_dirs} failed: {exc}"
            ) from exc
        if result.returncode != 0 or not self.files.meta_properties.is_file():
            output = "\n".join(
                (result.stdout or "").splitlines()[:LOG_TAIL_LINES]
            )  # the exception comes first
            raise BrokerStartError(
                f"formatting broker storage in {self.files.log_dirs} failed (exit code {result.returncode}); "
                f"check the broker settings (server.properties: {self.files.server_properties}):",
                output.strip(),
            )

    def _spawn(self, java: str) -> int:
        argv = broker_argv(self.settings, self.files, java, die_with_caller=self._die_with_caller)
        with self.files.console_file.open("ab") as console:
            console.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} starting: {' '.join(argv)}\n".encode())
            console.flush()
            self._log_marks = {path: size_of(path) for path in (self.files.log_file, self.files.console_file)}
            try:
                self._proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=console,
                    stderr=subprocess.STDOUT,
                    cwd=self.files.data_dir,
                    start_new_session=True,  # survive the CLI's exit and its Ctrl-C
                )
            except OSError as exc:
                raise BrokerStartError(f"could not run {java}: {exc}") from exc
        self.files.pid_file.write_text(f"{self._proc.pid}\n")
        return self._proc.pid

    def _wait_ready(self, pid: int, started_at: float, *, started_here: bool) -> None:
        deadline = started_at + self.settings.start_timeout_s
        self._report(f"waiting for Kafka on {self.bootstrap_servers} to answer")
        while True:
            if not self._alive(pid):
                self.files.pid_file.unlink(missing_ok=True)
                code = self._proc.returncode if self._proc is not None and self._proc.pid == pid else None
                raise BrokerStartError(
                    f"the Kafka broker (pid {pid}) exited during start-up"
                    f"{f' with exit code {code}' if code is not None else ''}:",
                    self.log_tail(),
                )
            if self.answers(timeout_s=1.0):
                return
            if self._clock() >= deadline:
                break
            time.sleep(0.2)
        if started_here:
            self._signal(pid, signal.SIGKILL)
            self._wait_exit(pid, 10.0)
            self.files.pid_file.unlink(missing_ok=True)
        raise BrokerStartError(
            f"the Kafka broker (pid {pid}) did not answer on {self.bootstrap_servers} within "
            f"{self.settings.start_timeout_s:g} s{'; it was killed' if started_here else ''} "
            "(raise FLEETPULSE_BROKER__START_TIMEOUT_S if the machine is just slow):",
            self.log_tail(),
        )

    # -- process plumbing -------------------------------------------------------------------

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """An exclusive lock on this data dir for the duration of a start/stop (released on crash too)."""
        private_dir(self.files.data_dir)
        with self.files.lock_file.open("a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _alive(self, pid: int) -> bool:
        if self._proc is not None and self._proc.pid == pid:
            return self._proc.poll() is None  # our child: poll() also reaps it
        return pid_alive(pid)

    def _signal(self, pid: int, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)

    def _wait_exit(self, pid: int, timeout_s: float) -> bool:
        deadline = self._clock() + timeout_s
        while self._alive(pid):
            if self._clock() >= deadline:
                return False
            time.sleep(0.1)
        return True
