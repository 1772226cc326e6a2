"""Every package imports on its own, first thing in a fresh interpreter (as a notebook or a user's script does).

Inside one test process the import order is whatever the suite happened to import first, which
hides import cycles such as analytics.quality <-> analytics.lake.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted(
    ".".join(p.parent.relative_to(ROOT).parts)
    for top in ("analytics", "streams", "producers", "schemas", "ground", "webhooks", "fleetpulse")
    for p in (ROOT / top).rglob("__init__.py")
)


def test_the_package_list_is_not_empty() -> None:
    assert {"analytics.quality", "analytics.lake", "streams", "schemas", "webhooks"} <= set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_package_imports_first_in_a_fresh_interpreter(package: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import {package}"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr.strip().splitlines()[-1:]
