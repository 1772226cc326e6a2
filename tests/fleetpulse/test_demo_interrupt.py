"""Ctrl-C during `fleetpulse demo` stops every part it started; nothing is left running."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import KafkaCluster


def processes_mentioning(text: str) -> list[int]:
    """Processes whose command line or environment contains ``text`` (parts get the run id by env)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            seen = (proc / "cmdline").read_bytes() + (proc / "environ").read_bytes()
        except OSError:
            continue
        if text.encode() in seen:
            pids.append(int(proc.name))
    return pids


@pytest.mark.integration
@pytest.mark.slow
def test_sigint_stops_the_demo_and_all_its_parts(kafka: KafkaCluster, tmp_path: Path) -> None:
    env = {**os.environ, "KAFKA_BOOTSTRAP_SERVERS": kafka.bootstrap_servers}
    out = tmp_path / "runs"
    log = (tmp_path / "demo.log").open("w")
    demo = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fleetpulse",
            "demo",
            "--preset",
            "small",
            "--history-days",
            "5",
            "--live-seconds",
            "120",
            "--speed",
            "5",
            "--out",
            str(out),
        ],
        env=env,
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 180
        while not list(out.glob("demo-*/logs/simulate-live.log")):
            assert demo.poll() is None, (tmp_path / "demo.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the demo never reached its live phase"
            time.sleep(1)
        (run_dir,) = list(out.glob("demo-*"))
        time.sleep(2)
        running = processes_mentioning(run_dir.name)
        assert len(running) >= 5, running  # receiver, detector, dispatcher, archiver, live simulator

        demo.send_signal(signal.SIGINT)
        assert demo.wait(60) == 130
        log.close()
        assert "every part stopped" in (tmp_path / "demo.log").read_text()
        time.sleep(1)
        assert processes_mentioning(run_dir.name) == []
    finally:  # never leave a demo or its parts behind, even when an assertion failed
        if demo.poll() is None:
            demo.kill()
        for run_dir in out.glob("demo-*"):
            for pid in processes_mentioning(run_dir.name):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
