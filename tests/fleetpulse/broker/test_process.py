"""LocalBroker bookkeeping that needs no JVM: ports, pid files, stale state."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from fleetpulse.broker.errors import PortInUseError
from fleetpulse.broker.process import LocalBroker
from fleetpulse.broker.system import pid_alive, port_is_free
from ground.settings.broker import BrokerSettings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def broker(tmp_path: Path) -> LocalBroker:
    return LocalBroker(
        BrokerSettings(port=free_port(), data_dir=tmp_path / "broker", cache_dir=tmp_path / "c")
    )


def test_port_is_free_detects_a_listener():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert not port_is_free("127.0.0.1", port)
    assert port_is_free("127.0.0.1", port)


def test_pid_alive():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert pid_alive(child.pid) is False
    assert pid_alive(os.getpid())


def test_status_of_a_never_started_broker(broker: LocalBroker):
    status = broker.status()
    assert not status.running and not status.ready and status.pid is None
    assert status.bootstrap == broker.bootstrap_servers
    assert status.log_file == broker.log_path == broker.settings.data_dir / "broker.log"


def test_stop_when_not_running_is_safe(broker: LocalBroker):
    assert broker.stop() is False
    assert broker.kill() is False


def test_stale_pid_file_is_ignored(broker: LocalBroker):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    broker.files.data_dir.mkdir(parents=True)
    broker.files.pid_file.write_text(f"{child.pid}\n")
    assert broker.pid() is None
    assert broker.stop() is False
    assert not broker.files.pid_file.exists()


def test_pid_file_of_another_program_is_not_ours(broker: LocalBroker):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        broker.files.data_dir.mkdir(parents=True)
        broker.files.pid_file.write_text(f"{sleeper.pid}\n")
        assert broker.pid() is None  # a live process, but not a kafka.Kafka on our config
        broker.stop()
        assert sleeper.poll() is None  # and stop() must not touch it
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.parametrize("which", ["port", "controller_port"])
def test_port_in_use_names_the_port_and_the_setting(tmp_path: Path, which: str):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        other = free_port()
        ports = (
            {"port": taken, "controller_port": other}
            if which == "port"
            else {"port": other, "controller_port": taken}
        )
        broker = LocalBroker(BrokerSettings(**ports, data_dir=tmp_path / "b", cache_dir=tmp_path / "c"))
        with pytest.raises(PortInUseError) as info:
            broker.start()
    assert info.value.port == taken
    assert str(taken) in str(info.value)
    assert f"FLEETPULSE_BROKER__{which.upper()}" in str(info.value)


def test_stop_of_a_never_started_broker_creates_nothing(broker: LocalBroker):
    assert broker.stop() is False
    assert not broker.files.data_dir.exists()
