"""server.properties / log4j2.properties rendering: pure functions, no broker."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from fleetpulse.broker.properties import log4j2_properties, new_cluster_id, render, server_properties
from ground.settings.broker import BrokerSettings


def parse(text: str) -> dict[str, str]:
    """Enough of java.util.Properties for what render() writes: key=value, escaped backslashes."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        out[key] = value.replace("\\\\", "\\")
    return out


def test_cluster_id_is_base64url_of_16_bytes_without_padding():
    raw = bytes(range(250, 256)) + bytes(10)
    cid = new_cluster_id(raw)
    assert len(cid) == 22 and "=" not in cid
    assert base64.urlsafe_b64decode(cid + "==") == raw
    assert new_cluster_id() != new_cluster_id()


def test_cluster_id_rejects_other_lengths():
    with pytest.raises(ValueError, match="16 bytes"):
        new_cluster_id(b"short")


def test_server_properties_single_node_kraft(tmp_path: Path):
    settings = BrokerSettings(port=29092, num_partitions=4)
    props = server_properties(settings, tmp_path / "kraft")
    assert props["process.roles"] == "broker,controller"
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:29092,CONTROLLER://127.0.0.1:29093"
    assert props["advertised.listeners"] == "PLAINTEXT://127.0.0.1:29092"
    assert props["controller.quorum.voters"] == "1@127.0.0.1:29093"
    assert props["log.dirs"] == str(tmp_path / "kraft")
    assert props["num.partitions"] == "4"
    assert props["offsets.topic.replication.factor"] == "1"
    assert props["group.initial.rebalance.delay.ms"] == "0"


def test_explicit_controller_port_and_host(tmp_path: Path):
    settings = BrokerSettings(host="localhost", port=30000, controller_port=31000)
    props = server_properties(settings, tmp_path)
    assert props["listeners"] == "PLAINTEXT://localhost:30000,CONTROLLER://localhost:31000"
    assert props["controller.quorum.voters"] == "1@localhost:31000"


def test_controller_port_must_differ(tmp_path: Path):
    with pytest.raises(ValueError, match="controller port"):
        server_properties(BrokerSettings(port=30000, controller_port=30000), tmp_path)


def test_extra_properties_override_defaults(tmp_path: Path):
    settings = BrokerSettings(extra_properties={"num.partitions": "9", "log.retention.hours": "1"})
    props = server_properties(settings, tmp_path)
    assert props["num.partitions"] == "9"
    assert props["log.retention.hours"] == "1"


def test_render_round_trips_and_escapes(tmp_path: Path):
    props = {"log.dirs": r"C:\kafka\data", "plain": "a=b:c", "leading": " space"}
    text = render(props, header="line one\nline two")
    assert text.startswith("# line one\n# line two\n")
    assert r"log.dirs=C:\\kafka\\data" in text
    assert "leading=\\ space" in text
    assert parse(text)["log.dirs"] == r"C:\kafka\data"
    assert parse(text)["plain"] == "a=b:c"


def test_render_escapes_special_characters_in_keys():
    assert render({"a b=c": "v"}) == "a\\ b\\=c=v\n"


def test_log4j2_writes_one_rotated_file(tmp_path: Path):
    log_file = tmp_path / "broker.log"
    props = log4j2_properties(log_file)
    assert props["appender.file.fileName"] == str(log_file)
    assert props["appender.file.filePattern"] == f"{log_file}.%i"
    assert props["rootLogger.level"] == "INFO"
    assert props["rootLogger.appenderRef.file.ref"] == props["appender.file.name"]
    assert props["shutdownHook"] == "disable"  # or Kafka's own shutdown messages are lost
    assert log4j2_properties(log_file, level="DEBUG")["rootLogger.level"] == "DEBUG"
