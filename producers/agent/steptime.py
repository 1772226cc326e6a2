"""The local step-time endpoint: a UDP socket on 127.0.0.1 that a training loop reports to.

Datagrams are ``<step_ms>`` or ``<step_ms> <job_id>``; UDP so that reporting never blocks nor fails a
training step when the agent is away. See ``producers.agent.client.report_step``.
"""

from __future__ import annotations

import socket

from producers.agent.collector import Problems

SOURCE = "step_time"
MAX_STEP_MS = 3_600_000.0


class StepTimeServer:
    def __init__(self, host: str, port: int, problems: Problems, default_job: str | None = None) -> None:
        self.problems, self.default_job = problems, default_job
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, port))
        self.sock.setblocking(False)
        self.address: tuple[str, int] = self.sock.getsockname()
        self.total_ms = 0.0
        self.count = 0
        self.job: str | None = None

    def drain(self) -> None:
        """Read every pending report into the current window."""
        while True:
            try:
                data = self.sock.recv(512)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self.problems.add(SOURCE, "recv_failed", "", str(exc))
                return
            parts = data.decode("utf-8", "replace").split()
            try:
                ms = float(parts[0])
            except (ValueError, IndexError):
                self.problems.add(SOURCE, "garbled_report", "", repr(data[:40]))
                continue
            if not 0 < ms <= MAX_STEP_MS:
                self.problems.add(SOURCE, "absurd_step_time", "", repr(ms))
                continue
            self.total_ms += ms
            self.count += 1
            self.job = parts[1][:128] if len(parts) > 1 else (self.job or self.default_job)

    def window(self) -> tuple[float | None, str | None]:
        """Mean step time and job of the window so far (None: nothing reported); starts a new window."""
        self.drain()
        if not self.count:
            return None, None
        mean, job = self.total_ms / self.count, self.job
        self.total_ms, self.count = 0.0, 0
        return mean, job

    def close(self) -> None:
        self.sock.close()
