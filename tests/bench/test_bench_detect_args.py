"""``bench/bench_detect.py`` against a broker that does not answer: one line and exit code 2, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fleetpulse.supervisor import free_ports

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_detect.py"


def test_a_silent_bootstrap_is_one_line_and_exit_code_2() -> None:
    address = f"127.0.0.1:{free_ports(1)[0]}"  # nobody listens there
    done = subprocess.run(
        [sys.executable, str(BENCH), "--bootstrap", address, "--hosts", "2", "--minutes", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert f"no Kafka broker answers at {address}" in done.stderr
