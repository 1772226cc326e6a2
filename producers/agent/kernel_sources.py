"""Where kernel-log lines come from: ``/dev/kmsg`` (or a file in its format), else ``journalctl -k -f``.

Both yield ``(boot_id, seq, ts_ms, message)`` and resume after a restart from the position kept in the
agent's state: kmsg by (boot id, sequence number), the journal by its cursor.
"""

from __future__ import annotations

import errno
import json
import os
import queue
import stat
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from producers.agent.collector import Problems
from producers.agent.kmsg import KMSG_HEADER

SOURCE = "kernel_log"
READ_SIZE = 64 * 1024  # /dev/kmsg returns one record per read; a plain file returns many lines


class LogLine(NamedTuple):
    boot_id: str
    seq: int
    ts_ms: int
    message: str


class KmsgSource:
    """Follows a kmsg-format device or file; records at or before the saved (boot id, seq) are skipped."""

    def __init__(self, path: Path, boot_id: str, boot_time_ms: int, problems: Problems) -> None:
        self.path, self.boot_id, self.boot_time_ms, self.problems = path, boot_id, boot_time_ms, problems
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        if stat.S_ISDIR(os.fstat(self.fd).st_mode):
            os.close(self.fd)
            raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
        self._partial = b""
        self.last_seq: int | None = None

    def read(self, after_seq: int | None, limit: int) -> Iterator[LogLine]:
        """New records, oldest first, at most ``limit`` of them per call."""
        n = 0
        while n < limit:
            try:
                chunk = os.read(self.fd, READ_SIZE)
            except BlockingIOError:
                break
            except BrokenPipeError:  # the ring buffer overwrote records we had not read yet
                self.problems.add(SOURCE, "records_overwritten", str(self.path))
                continue
            except OSError as exc:
                if exc.errno == errno.EINVAL:  # record larger than the buffer (cannot happen at 64 KiB)
                    continue
                raise
            if not chunk:
                break
            data = self._partial + chunk
            end = data.rfind(b"\n") + 1
            self._partial = data[end:]
            # one decode per read: a storm of XIDs arrives as many lines per read from a file
            for raw in data[:end].decode("utf-8", "replace").split("\n"):
                line = self._line(raw, after_seq)
                if line is not None:
                    n += 1
                    yield line

    def _line(self, raw: str, after_seq: int | None) -> LogLine | None:
        if not raw or raw[0] == " ":  # empty, or a continuation (KEY=value) line
            return None
        m = KMSG_HEADER.match(raw)
        if m is None:
            self.problems.add(SOURCE, "garbled_record", str(self.path), raw[:80])
            return None
        seq = int(m.group(1))
        if self.last_seq is not None and seq > self.last_seq + 1:
            self.problems.add(SOURCE, "sequence_gap", str(self.path))
        self.last_seq = seq
        if after_seq is not None and seq <= after_seq:
            return None
        return LogLine(self.boot_id, seq, self.boot_time_ms + int(m.group(2)) // 1000, raw[m.end() :])

    def close(self) -> None:
        os.close(self.fd)


class JournalSource:
    """Follows ``journalctl -k -f -o json`` on a reader thread; resumes after the saved cursor."""

    def __init__(
        self,
        cursor: str | None,
        problems: Problems,
        command: Callable[[str | None], list[str]] | None = None,
    ) -> None:
        self.problems = problems
        argv = (command or journal_command)(cursor)
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lines: queue.Queue[bytes] = queue.Queue(maxsize=100_000)
        self.cursor = cursor
        self._thread = threading.Thread(target=self._pump, name="journalctl-reader", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(raw)

    def read(self, after_seq: int | None, limit: int) -> Iterator[LogLine]:
        for _ in range(limit):
            try:
                raw = self.lines.get_nowait()
            except queue.Empty:
                return
            try:
                entry = json.loads(raw)
                message = entry["MESSAGE"]
                if isinstance(message, list):  # journald sends non-UTF-8 messages as byte arrays
                    message = bytes(message).decode("utf-8", "replace")
                line = LogLine(
                    entry.get("_BOOT_ID", ""), 0, int(entry["__REALTIME_TIMESTAMP"]) // 1000, message
                )
            except (ValueError, KeyError, TypeError):
                self.problems.add(
                    SOURCE, "garbled_journal_entry", "journalctl", raw[:80].decode("utf-8", "replace")
                )
                continue
            self.cursor = entry.get("__CURSOR", self.cursor)
            yield line

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def journal_command(cursor: str | None) -> list[str]:
    argv = ["journalctl", "-k", "-f", "-o", "json", "--no-pager"]
    return [*argv, f"--after-cursor={cursor}"] if cursor else [*argv, "--boot", "--lines=all"]
