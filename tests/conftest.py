"""Shared fixtures: a real Kafka cluster for integration tests, local brokers, unique topics.

The session's cluster is, in order of preference: the one named by KAFKA_BOOTSTRAP_SERVERS,
a testcontainers Kafka when a Docker engine answers, else fleetpulse's own LocalBroker on
free ports with its data in a temporary directory.
"""

from __future__ import annotations

import contextlib
import re
import signal
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Literal

import pytest

from fleetpulse.broker import BrokerSettings, LocalBroker, ToolMissingError
from fleetpulse.supervisor import free_ports
from ground.errors import TopicError
from ground.kafka import admin
from ground.kafka.topics import TopicSpec
from ground.settings import Settings

pytest_plugins = ["tests.parallel"]  # how the tests share pytest-xdist workers (`make test`)

# ---------------------------------------------------------------------------------------------
# Kafka
# ---------------------------------------------------------------------------------------------

ClusterKind = Literal["env", "testcontainers", "local"]


@dataclass(frozen=True)
class KafkaCluster:
    """The cluster tests talk to. ``broker`` is set only when it is our own LocalBroker."""

    bootstrap_servers: str
    settings: Settings  # Settings.load() pointed at this cluster: pass it to code under test
    kind: ClusterKind
    broker: LocalBroker | None = None


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM (a CI time limit, ``timeout``) unwinds the run like Ctrl-C does.

    Without it the process dies on the spot: no fixture teardown, so the brokers and the parts
    the tests started keep running after the run.
    """

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def local_broker_settings(base: BrokerSettings, data_dir: Path, **overrides: Any) -> BrokerSettings:
    """A broker on fresh free ports with its own data dir, sharing the jar cache of ``base``."""
    port, controller_port = free_ports(2)
    fields: dict[str, Any] = {"port": port, "controller_port": controller_port, "data_dir": data_dir}
    fields.update(overrides)
    return base.model_copy(update=fields)


def pointed_at(settings: Settings, bootstrap: str) -> Settings:
    return settings.model_copy(
        update={"kafka": settings.kafka.model_copy(update={"bootstrap_servers": bootstrap})}
    )


def _docker_answers() -> bool:
    try:
        import docker

        docker.from_env(timeout=3).ping()
    except Exception:  # no SDK, no socket, no daemon: all mean "no Docker"
        return False
    return True


@pytest.fixture(scope="session")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    """The session's Kafka cluster (see the module docstring for where it comes from)."""
    settings = Settings.load()
    if settings.kafka.bootstrap_servers:
        bootstrap = settings.kafka.bootstrap_servers
        admin.wait_for_broker(bootstrap, settings.kafka, timeout=30.0)
        yield KafkaCluster(bootstrap, settings, "env")
        return
    if _docker_answers():
        try:
            from testcontainers.community.kafka import KafkaContainer
        except ImportError:  # testcontainers < 4.9
            from testcontainers.kafka import KafkaContainer

        with KafkaContainer() as container:
            bootstrap = container.get_bootstrap_server()
            yield KafkaCluster(bootstrap, pointed_at(settings, bootstrap), "testcontainers")
        return
    data_dir = tmp_path_factory.mktemp("kafka-session")
    broker = LocalBroker(local_broker_settings(settings.broker, data_dir), die_with_caller=True)
    try:
        broker.start()
    except ToolMissingError as exc:
        pytest.skip(f"no Kafka for integration tests: no KAFKA_BOOTSTRAP_SERVERS, no Docker, and {exc}")
    try:
        yield KafkaCluster(
            broker.bootstrap_servers, pointed_at(settings, broker.bootstrap_servers), "local", broker
        )
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def local_broker_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., LocalBroker]]:
    """Make extra LocalBrokers (own free ports and data dir, not started); any still running stop at session end.

    For tests that stop, kill or break a broker, so the session's ``kafka`` is never disturbed.
    Keyword arguments override BrokerSettings fields (e.g. ``heap="bogus"``).
    """
    base = Settings.load().broker
    made: list[LocalBroker] = []

    def make(**overrides: Any) -> LocalBroker:
        data_dir = overrides.pop("data_dir", None) or tmp_path_factory.mktemp("kafka-own")
        broker = LocalBroker(local_broker_settings(base, data_dir, **overrides), die_with_caller=True)
        made.append(broker)
        return broker

    yield make
    for broker in made:
        broker.stop()


# ---------------------------------------------------------------------------------------------
# Topics
# ---------------------------------------------------------------------------------------------


def unique_topic_name(hint: str) -> str:
    """A topic name no other test (or earlier run) uses: the hint made Kafka-safe plus a random suffix."""
    safe = re.sub(r"[^a-zA-Z0-9._-]+", "-", hint).strip("-.")[:80] or "topic"
    return f"test.{safe}.{uuid.uuid4().hex[:8]}"


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> str:
    """A fresh topic name (not created) derived from the test's name."""
    return unique_topic_name(request.node.name)


@pytest.fixture
def topic_factory(kafka: KafkaCluster, request: pytest.FixtureRequest) -> Iterator[Callable[..., str]]:
    """``make(hint=None, *, partitions=1, **TopicSpec fields) -> name``: creates a unique topic, deleted afterwards."""
    created: list[str] = []

    def make(hint: str | None = None, *, partitions: int = 1, **spec: Any) -> str:
        name = unique_topic_name(hint or request.node.name)
        admin.create_topics(kafka.settings, [TopicSpec(name=name, partitions=partitions, **spec)])
        created.append(name)
        return name

    yield make
    with contextlib.suppress(TopicError):
        admin.delete_topics(kafka.settings, created)
