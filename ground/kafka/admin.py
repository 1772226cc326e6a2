"""Kafka administration: wait for a cluster, create the declared topics idempotently, list topics.

A thin shell around kafka-python's admin client; its errors are translated into
``TopicError`` with the bootstrap address and topic names, so callers see one error type.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import kafka.errors as kafka_errors
from kafka.admin import KafkaAdminClient

from ground.errors import TopicError
from ground.kafka.config import KafkaSettings
from ground.kafka.topics import TopicSpec

if TYPE_CHECKING:  # ground.settings imports the broker package, which imports this module
    from ground.settings import Settings

TOPIC_ALREADY_EXISTS = kafka_errors.TopicAlreadyExistsError.errno


class KafkaUnavailableError(TopicError):
    """No broker at the bootstrap address answered a metadata request."""

    def __init__(self, bootstrap: str, message: str) -> None:
        super().__init__(message)
        self.bootstrap = bootstrap


class TopicReport(NamedTuple):
    """Outcome of ``ensure_topics``: which declared topics were created now, which already existed."""

    created: list[str]
    existing: list[str]


@contextlib.contextmanager
def admin_client(
    bootstrap: str, kafka: KafkaSettings, *, timeout_s: float = 10.0, listen_wait_s: float | None = None
) -> Iterator[KafkaAdminClient]:
    """A connected admin client, closed on exit; KafkaUnavailableError if nobody answers.

    It first waits up to ``listen_wait_s`` (default ``timeout_s``) for a TCP listener: silent
    and cheap, where kafka-python would log every refused connection.
    """
    wait_s = timeout_s if listen_wait_s is None else listen_wait_s
    deadline = time.monotonic() + wait_s
    while not tcp_reachable(bootstrap):
        if time.monotonic() >= deadline:
            waited = f" (waited {wait_s:g} s)" if wait_s else ""
            raise KafkaUnavailableError(bootstrap, f"no Kafka broker listens at {bootstrap}{waited}")
        time.sleep(0.2)
    kafka.check_login(bootstrap, timeout_s)  # a refused SASL login: KafkaAuthError now, not a timeout
    config = kafka.kafka_python(bootstrap)
    try:
        client = KafkaAdminClient(
            **config,
            client_id=f"{kafka.client_id_prefix}-admin",
            bootstrap_timeout_ms=int(timeout_s * 1000),
            request_timeout_ms=int(max(timeout_s, 1.0) * 1000),
        )
    except (kafka_errors.KafkaError, OSError) as exc:
        raise KafkaUnavailableError(
            bootstrap, f"no Kafka broker answered at {bootstrap} within {timeout_s:g} s: {exc}"
        ) from exc
    try:
        yield client
    finally:
        client.close()


def tcp_reachable(bootstrap: str, timeout_s: float = 0.5) -> bool:
    """Whether any bootstrap address accepts a TCP connection: a cheap check before a Kafka client."""
    for address in bootstrap.split(","):
        host, _, port = address.strip().rpartition(":")
        try:
            with socket.create_connection((host.strip("[]") or "localhost", int(port)), timeout=timeout_s):
                return True
        except (OSError, ValueError):
            continue
    return False


def broker_answers(bootstrap: str, kafka: KafkaSettings, timeout_s: float = 2.0) -> bool:
    """Whether a broker at ``bootstrap`` answers a metadata request within about ``timeout_s``."""
    if not tcp_reachable(bootstrap, min(timeout_s, 0.5)):
        return False
    try:
        with admin_client(bootstrap, kafka, timeout_s=timeout_s) as client:
            client.list_topics()
    except (TopicError, kafka_errors.KafkaError, OSError):
        return False
    return True


def wait_for_broker(
    bootstrap: str, kafka: KafkaSettings, timeout: float = 30.0, *, poll_s: float = 0.25
) -> None:
    """Block until the cluster answers a metadata request; KafkaUnavailableError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if broker_answers(bootstrap, kafka, timeout_s=max(0.5, min(2.0, remaining))):
            return
        if time.monotonic() >= deadline:
            raise KafkaUnavailableError(
                bootstrap, f"no Kafka broker answered a metadata request at {bootstrap} within {timeout:g} s"
            )
        time.sleep(poll_s)


def classify_create_response(response: Mapping[str, Any]) -> TopicReport:
    """Split a CreateTopics response into created and already-existing topics; TopicError otherwise."""
    created: list[str] = []
    existing: list[str] = []
    failures: list[str] = []
    for topic in response.get("topics", []):
        name, code = topic["name"], topic.get("error_code", 0)
        if code == 0:
            created.append(name)
        elif code == TOPIC_ALREADY_EXISTS:
            existing.append(name)
        else:
            error = kafka_errors.for_code(code)
            detail = topic.get("error_message") or ""
            failures.append(f"{name}: {error.__name__}{f' ({detail})' if detail else ''}")
    if failures:
        raise TopicError("could not create topics: " + "; ".join(failures))
    return TopicReport(created, existing)


def ensure_topics(
    settings: Settings, specs: Iterable[TopicSpec] | None = None, *, timeout_s: float = 30.0
) -> TopicReport:
    """Create the declared topics (all of ``settings.topics`` by default); existing ones are left as they are."""
    specs = list(settings.topics.all() if specs is None else specs)
    if not specs:
        return TopicReport([], [])
    bootstrap = settings.bootstrap_servers
    request = {
        spec.name: {
            "num_partitions": spec.partitions,
            "replication_factor": spec.replication_factor,
            "configs": spec.configs(),
        }
        for spec in specs
    }
    with _admin(settings, timeout_s) as client:
        try:
            response = client.create_topics(request, timeout_ms=int(timeout_s * 1000), raise_errors=False)
            report = classify_create_response(response)
            if report.created:
                client.wait_for_topics(report.created, timeout_ms=int(timeout_s * 1000))
        except kafka_errors.KafkaError as exc:
            raise TopicError(f"creating topics {', '.join(request)} on {bootstrap} failed: {exc}") from exc
    return report


def create_topics(
    settings: Settings, specs: Iterable[TopicSpec] | None = None, *, timeout_s: float = 30.0
) -> list[str]:
    """Idempotently create the declared topics; returns the names created by this call."""
    return ensure_topics(settings, specs, timeout_s=timeout_s).created


def list_topics(settings: Settings, *, include_internal: bool = False, timeout_s: float = 10.0) -> list[str]:
    """Sorted topic names on the cluster; internal ones (``__consumer_offsets``…) only on request."""
    return sorted(
        name
        for name in topic_partitions(settings, timeout_s=timeout_s)
        if include_internal or not name.startswith("__")
    )


def topic_partitions(settings: Settings, *, timeout_s: float = 10.0) -> dict[str, int]:
    """Partition count of every topic on the cluster, internal ones included."""
    with _admin(settings, timeout_s) as client:
        try:
            topics = client.describe_topics()
        except kafka_errors.KafkaError as exc:
            raise TopicError(f"listing topics on {settings.bootstrap_servers} failed: {exc}") from exc
    return {topic["name"]: len(topic.get("partitions") or []) for topic in topics}


def delete_topics(settings: Settings, names: Sequence[str], *, timeout_s: float = 30.0) -> None:
    """Delete topics (used by tests to clean up); unknown topics are ignored."""
    if not names:
        return
    with _admin(settings, timeout_s) as client:
        try:
            client.delete_topics(list(names), timeout_ms=int(timeout_s * 1000), raise_errors=False)
        except kafka_errors.KafkaError as exc:
            raise TopicError(
                f"deleting topics {', '.join(names)} on {settings.bootstrap_servers} failed: {exc}"
            ) from exc


@contextlib.contextmanager
def _admin(settings: Settings, timeout_s: float) -> Iterator[KafkaAdminClient]:
    # A stopped local broker will not appear by waiting: fail at once instead of after the timeout.
    listen_wait_s = 0.0 if settings.uses_local_broker else None
    try:
        with admin_client(
            settings.bootstrap_servers,
            settings.kafka,
            timeout_s=min(timeout_s, 10.0),
            listen_wait_s=listen_wait_s,
        ) as client:
            yield client
    except KafkaUnavailableError as exc:
        hint = (
            "start the local broker with `fleetpulse broker start`"
            if settings.uses_local_broker
            else "check KAFKA_BOOTSTRAP_SERVERS / FLEETPULSE_KAFKA__* settings"
        )
        raise KafkaUnavailableError(exc.bootstrap, f"{exc}; {hint}") from exc
