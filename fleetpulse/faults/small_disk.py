"""A small disk of the fault run's own: a tmpfs of fixed size, mounted in an unprivileged user namespace.

A real ``ENOSPC`` needs a real full filesystem, and mounting one needs no root inside a user
namespace (``unshare --user --map-root-user --mount``). The mount exists only in that namespace, so
a holder process keeps it alive, each part runs in it through ``nsenter`` (its data survives the
part's crash and restart, as on a disk), and the scenario reads it from outside through
``/proc/<holder>/root`` or a copy. ``fill`` writes a filler file until the disk refuses; ``free`` deletes it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from fleetpulse.faults.errors import FaultsError

FILLER = ".filler"


class SmallDiskError(FaultsError):
    """No small disk here: user namespaces are off, or ``unshare``/``nsenter`` are missing."""


def _run(argv: Sequence[str], timeout_s: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s, check=False)


class SmallDisk:
    """A ``size_mb`` tmpfs at ``mount_point`` (an existing empty folder), seen by the parts run through ``wrap``."""

    def __init__(self, mount_point: Path, size_mb: int) -> None:
        self.mount_point = mount_point.resolve()
        self.size_mb = size_mb
        self.holder: subprocess.Popen[str] | None = None

    def start(self, ready_timeout_s: float = 20.0) -> None:
        if not all(shutil.which(tool) for tool in ("setpriv", "unshare", "nsenter")):
            raise SmallDiskError(
                "the disk-full scenario needs util-linux's setpriv, unshare and nsenter on PATH"
            )
        self.mount_point.mkdir(parents=True, exist_ok=True)
        script = (
            'mount -t tmpfs -o "size=$1m,mode=0777" fleetpulse-disk "$2" && echo ready && exec sleep infinity'
        )
        self.holder = subprocess.Popen(
            [
                "setpriv",
                "--pdeathsig",
                "KILL",  # gone with the scenario's process, however it ends
                "unshare",
                "--user",
                "--map-root-user",
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                script,
                "small-disk",
                str(self.size_mb),
                str(self.mount_point),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=os.getcwd(),
            start_new_session=True,
        )
        assert self.holder.stdout is not None
        line = self.holder.stdout.readline().strip()
        if line != "ready":
            self.stop()
            err = self.holder.stderr.read() if self.holder.stderr else ""
            raise SmallDiskError(
                f"cannot mount a tmpfs in a user namespace (unprivileged user namespaces off?): {err.strip()}"
            )
        deadline = time.monotonic() + ready_timeout_s
        while not self.outside(self.mount_point).is_dir():
            if time.monotonic() > deadline:
                raise SmallDiskError("the small disk's holder process did not come up")
            time.sleep(0.1)

    @property
    def pid(self) -> int:
        if self.holder is None or self.holder.poll() is not None:
            raise SmallDiskError("the small disk is not mounted")
        return self.holder.pid

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside the disk's namespace, in the holder's working directory."""
        return [
            "nsenter",
            f"--target={self.pid}",
            "--user",
            "--mount",
            "--preserve-credentials",
            "--wd",
            *argv,
        ]

    def outside(self, path: Path) -> Path:
        """Where the scenario (outside the namespace) reads ``path`` of the disk."""
        return Path(f"/proc/{self.pid}/root") / path.resolve().relative_to("/")

    def copy_out(self, path: Path, to: Path) -> Path:
        """A copy of ``path`` of the disk at ``to`` outside it (SQLite and delta-rs resolve ``/proc/<pid>/root``
        as a symlink to ``/`` and would miss the disk)."""
        shutil.rmtree(to, ignore_errors=True)
        proc = _run(self.wrap(["cp", "-a", str(path), str(to)]))
        if proc.returncode != 0:
            raise SmallDiskError(f"cannot copy {path} off the small disk: {proc.stderr.strip()}")
        return to

    def usage(self) -> tuple[int, int]:
        """(bytes used, bytes free) of the disk."""
        st = os.statvfs(self.outside(self.mount_point))
        return (st.f_blocks - st.f_bfree) * st.f_frsize, st.f_bavail * st.f_frsize

    def fill(self) -> int:
        """Append to the filler file until the disk refuses (ENOSPC); returns the bytes still free."""
        filler = self.mount_point / FILLER
        _run(self.wrap(["sh", "-c", 'cat /dev/zero >> "$1" 2>/dev/null; exit 0', "fill", str(filler)]))
        return self.usage()[1]

    def free(self) -> None:
        proc = _run(self.wrap(["rm", "-f", str(self.mount_point / FILLER)]))
        if proc.returncode != 0:
            raise SmallDiskError(f"cannot delete the filler: {proc.stderr.strip()}")

    def stop(self) -> None:
        if self.holder is not None and self.holder.poll() is None:
            self.holder.kill()
            self.holder.wait(10)
        if self.holder is not None:
            for stream in (self.holder.stdout, self.holder.stderr):
                if stream is not None:
                    stream.close()

    def __enter__(self) -> SmallDisk:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
