"""The real ``promtool`` (Debian's ``prometheus`` package; .ci/run installs it), or a one-line skip."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.skip("promtool is not installed (Debian: apt-get install prometheus; .ci/run does it)")
    return found


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``promtool args…``; fails the test with its output when it exits non-zero."""
    done = subprocess.run([promtool(), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120)
    assert done.returncode == 0, f"promtool {' '.join(map(str, args))}:\n{done.stdout}\n{done.stderr}"
    return done
