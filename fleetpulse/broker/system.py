"""What the operating system says about ports and processes: a free port, a live pid, our JVM."""

from __future__ import annotations

import errno
import os
import shutil
import socket
import sys
from pathlib import Path


def port_is_free(host: str, port: int) -> bool:
    """Whether we could listen on host:port (SO_REUSEADDR like the JVM, so TIME_WAIT doesn't count)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def pid_alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def is_kafka_on(pid: int, server_properties: Path) -> bool:
    """Guard against pid reuse: the process must be a kafka.Kafka JVM on this server.properties."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except FileNotFoundError:
        return False
    except OSError:
        return True  # no procfs (macOS): trust the pid file
    return b"kafka.Kafka" in cmdline and str(server_properties).encode() in cmdline


def parent_death_prefix() -> list[str]:
    """``setpriv --pdeathsig TERM`` (util-linux), which execs the JVM with the kernel's parent-death signal set.

    A Java child cannot call prctl itself, and a ``preexec_fn`` is unsafe in a process with threads.
    Elsewhere (no setpriv, not Linux) the broker outlives a killed caller.
    """
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM"] if setpriv and sys.platform.startswith("linux") else []
