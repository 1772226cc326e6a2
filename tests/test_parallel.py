"""`make test` runs the suite on pytest-xdist workers: tests marked serial must share one worker.

Each case runs a tiny suite in a child pytest with the project's plugin for it (tests/parallel.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SUITE = """
import os
import time
from pathlib import Path

import pytest

OUT = Path(os.environ["WORKERS_OUT"])


def record(name):
    time.sleep(0.2)
    with OUT.open("a") as f:
        f.write(f"{name} {os.environ.get('PYTEST_XDIST_WORKER', 'main')}\\n")


@pytest.mark.serial
@pytest.mark.parametrize("i", range(6))
def test_serial(i):
    record(f"serial{i}")


@pytest.mark.parametrize("i", range(6))
def test_free(i):
    record(f"free{i}")
"""


def run_suite(
    tmp_path: Path, *args: str, conftest: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    serial: one worker\n    same_worker: one worker per module\n"
    )
    (tmp_path / "conftest.py").write_text(conftest)
    (tmp_path / "test_suite.py").write_text(SUITE)
    out = tmp_path / "workers.txt"
    env = {**os.environ, "WORKERS_OUT": str(out), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    seen = dict(line.split() for line in out.read_text().splitlines()) if out.exists() else {}
    return proc, seen


HOOKS = 'pytest_plugins = ["tests.parallel"]\n'


def test_serial_tests_share_one_worker_and_the_others_spread(tmp_path: Path) -> None:
    proc, seen = run_suite(tmp_path, "-n", "2", "--dist", "loadgroup", conftest=HOOKS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(seen) == 12
    assert len({w for name, w in seen.items() if name.startswith("serial")}) == 1, seen
    assert len(set(seen.values())) == 2, seen  # the run was parallel at all


def test_a_distribution_that_ignores_groups_is_refused(tmp_path: Path) -> None:
    proc, seen = run_suite(tmp_path, "-n", "2", conftest=HOOKS)  # a bare -n is --dist load
    assert proc.returncode != 0 and not seen
    assert "serial need --dist loadgroup" in proc.stdout + proc.stderr


def test_a_hand_made_group_is_refused(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(
        "import pytest\n\n\n@pytest.mark.xdist_group('mine')\ndef test_grouped():\n    pass\n"
    )
    proc, seen = run_suite(tmp_path, "-n", "2", "--dist", "loadgroup", conftest=HOOKS)
    assert proc.returncode != 0 and not seen, proc.stdout + proc.stderr
    proc, seen = run_suite(tmp_path, conftest=HOOKS)  # in one process the refusal reads clearly
    assert proc.returncode != 0 and not seen
    assert "mark it serial instead of xdist_group" in proc.stdout + proc.stderr


def test_the_tests_of_a_same_worker_module_share_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_together.py").write_text(
        "import pytest\n\nfrom test_suite import record\n\npytestmark = pytest.mark.same_worker\n\n\n"
        "@pytest.mark.parametrize('i', range(6))\ndef test_together(i):\n    record(f'together{i}')\n"
    )
    proc, seen = run_suite(tmp_path, "-n", "2", "--dist", "loadgroup", conftest=HOOKS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(seen) == 18
    assert len({w for name, w in seen.items() if name.startswith("together")}) == 1, seen
    assert len(set(seen.values())) == 2, seen  # the run was parallel at all


def test_every_serial_test_is_where_the_serial_phase_looks() -> None:
    """`make test`'s serial phase collects only SERIAL_TESTS: a test marked serial elsewhere would never run."""
    (line,) = [x for x in (ROOT / "Makefile").read_text().splitlines() if x.startswith("SERIAL_TESTS :=")]
    serial_paths = [ROOT / p for p in line.split(":=", 1)[1].split()]
    assert serial_paths and all(p.exists() for p in serial_paths), line
    marked = {
        path
        for path in (ROOT / "tests").rglob("*.py")
        if path != Path(__file__).resolve() and "mark.serial" in path.read_text()
    }
    assert marked, "no test marked serial found: the scan is wrong"
    outside = [p for p in marked if not any(p == s or p.is_relative_to(s) for s in serial_paths)]
    assert not outside, f"marked serial outside SERIAL_TESTS ({line}): {outside}"
