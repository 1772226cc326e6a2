"""Every Kafka client of fleetpulse against a broker that demands SASL (PLAIN, and SCRAM-SHA-256).

A broker of its own (the session's ``kafka`` stays PLAINTEXT) whose only client listener is
SASL_PLAINTEXT. Each part is configured only through ``Settings.kafka``: admin, simulator sink,
archiver, webhook dispatcher, a ``fleetpulse detect`` worker. A wrong password must fail at once
with KafkaAuthError, and the password must appear in no log, even at DEBUG.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, ScramMechanism, UserScramCredentialUpsertion

from fleetpulse.broker import LocalBroker, ToolMissingError
from ground.kafka import admin, reading
from ground.kafka.config import KafkaAuthError, KafkaSettings
from ground.kafka.topics import TopicSpec
from ground.settings import Settings
from producers import SimulationRequest, SimulationResult, run_simulation
from schemas import AlertRaised, Codec
from tests.conftest import free_ports

pytestmark = [pytest.mark.integration, pytest.mark.same_worker]  # one SASL broker (35 s to start) for all ten

USER = "fleet"
SCRAM_USER = "fleet-scram"
CODEC = Codec()


@dataclass(frozen=True)
class SaslCluster:
    broker: LocalBroker
    bootstrap: str  # the SASL_PLAINTEXT listener
    tls_bootstrap: str | None  # the SASL_SSL listener (None without the cryptography package)
    ca_file: Path | None  # the CA that signed the SASL_SSL listener's certificate
    password: str  # of USER (PLAIN) and of SCRAM_USER (SCRAM-SHA-256)
    admin_password: str  # the broker's own inter-broker login
    hmac_secret: str
    root: Path

    def settings(self, *, tls: bool = False, **kafka: Any) -> Settings:
        """Settings pointing at this broker with USER's PLAIN login (``kafka`` overrides fields)."""
        fields: dict[str, Any] = {
            "bootstrap_servers": self.bootstrap,
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "PLAIN",
            "sasl_username": USER,
            "sasl_password": self.password,
        }
        if tls:
            fields.update(
                bootstrap_servers=self.tls_bootstrap,
                security_protocol="SASL_SSL",
                ssl_cafile=str(self.ca_file),
            )
        return Settings.load(
            kafka={**fields, **kafka},
            topics={"prefix": "tls." if tls else ""},
            lake={"path": str(self.root / "lake"), "topic_wait_s": 10.0, "quality": {"enabled": False}},
            paths={"home": str(self.root / "home")},
            detect={"store": "memory", "app_id": "detect-tls" if tls else "detect-sasl"},
            webhooks={
                "secret": self.hmac_secret,
                "data_dir": str(self.root / "outbox"),
                "backoff_base_s": 0.05,
            },
        )

    def secrets(self) -> list[str]:
        return [self.password, self.admin_password, self.hmac_secret]


def sasl_properties(
    ports: dict[str, int], admin_password: str, password: str, pki: Any = None
) -> dict[str, str]:
    """server.properties entries: client and inter-broker listeners speak SASL (SASL_SSL too with a ``pki``)."""
    plain = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="admin" password="{admin_password}" user_admin="{admin_password}" user_{USER}="{password}";'
    )
    scram = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
    listeners = ["SASL_PLAINTEXT"] + (["SASL_SSL"] if pki is not None else [])
    props = {
        "listeners": ",".join(f"{name}://127.0.0.1:{ports[name]}" for name in [*listeners, "CONTROLLER"]),
        "advertised.listeners": ",".join(f"{name}://127.0.0.1:{ports[name]}" for name in listeners),
        "listener.security.protocol.map": ",".join(f"{name}:{name}" for name in listeners)
        + ",CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
    }
    for name in listeners:
        props[f"listener.name.{name.lower()}.plain.sasl.jaas.config"] = plain
        props[f"listener.name.{name.lower()}.scram-sha-256.sasl.jaas.config"] = scram
    if pki is not None:  # PEM files, no Java keystores
        props.update(
            {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": str(pki.server_pem),
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(pki.ca_file),
            }
        )
    return props


@pytest.fixture(scope="module")
def sasl(
    local_broker_factory: Callable[..., LocalBroker], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SaslCluster]:
    root = tmp_path_factory.mktemp("sasl")
    password, admin_password = f"pw-{secrets.token_hex(12)}", f"adm-{secrets.token_hex(12)}"
    try:
        from tests.security.tls import make_pki

        pki = make_pki(root / "pki")
    except ImportError:  # no cryptography package: SASL_PLAINTEXT only
        pki = None
    port, controller_port, tls_port = free_ports(3)
    ports = {"SASL_PLAINTEXT": port, "CONTROLLER": controller_port, "SASL_SSL": tls_port}
    made = local_broker_factory(
        port=port,
        controller_port=controller_port,
        extra_properties=sasl_properties(ports, admin_password, password, pki),
    )
    login = KafkaSettings(
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_username="admin",
        sasl_password=admin_password,
    )
    # Same settings and data dir as the factory's broker (which stops it at session end), but one
    # that logs in when it asks whether the broker is up.
    broker = LocalBroker(made.settings, kafka=login)
    try:
        broker.start()
    except ToolMissingError as exc:
        pytest.skip(f"no Kafka broker for the SASL tests: {exc}")
    cluster = SaslCluster(
        broker,
        broker.bootstrap_servers,
        f"127.0.0.1:{tls_port}" if pki else None,
        pki.ca_file if pki else None,
        password,
        admin_password,
        f"hmac-{secrets.token_hex(16)}",
        root,
    )
    try:
        admin.create_topics(cluster.settings())
        yield cluster
    finally:
        broker.stop()
        log = broker.log_path.read_text(errors="replace") if broker.log_path.exists() else ""
        assert password not in log  # the broker logs failed logins: never with the password


@pytest.fixture(scope="module")
def simulated(sasl: SaslCluster) -> SimulationResult:
    return run_simulation(sasl.settings(), SimulationRequest(preset="small", days=2.0, sink="kafka"))


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Everything the client libraries log, DEBUG included (where they print SASL requests)."""
    caplog.set_level(logging.DEBUG)
    return caplog


def assert_no_secret(text: str, sasl: SaslCluster) -> None:
    for secret in sasl.secrets():
        assert secret not in text


# -- the parts, logged in ----------------------------------------------------------------------


def test_admin_lists_the_created_topics(sasl: SaslCluster, debug_logs: pytest.LogCaptureFixture) -> None:
    settings = sasl.settings()
    names = admin.list_topics(settings)
    assert set(names) >= {spec.name for spec in settings.topics.all()}
    # kafka-python logged its SASL request and its configuration: both without the password
    assert "SaslAuthenticateRequest" in debug_logs.text and "sasl_plain_password" in debug_logs.text
    assert_no_secret(debug_logs.text, sasl)


def test_library_logs_the_password_unless_fleetpulse_built_the_config(
    sasl: SaslCluster, caplog: pytest.LogCaptureFixture
) -> None:
    """The control: kafka-python itself prints a SASL PLAIN password at DEBUG; our config does not."""
    caplog.set_level(logging.DEBUG)
    raw = f"raw-{secrets.token_hex(8)}"
    with pytest.raises(Exception):  # noqa: B017 (a wrong login: kafka-python times out bootstrapping)
        KafkaAdminClient(
            bootstrap_servers=sasl.bootstrap,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_plain_username=USER,
            sasl_plain_password=raw,
            bootstrap_timeout_ms=1000,
        )
    assert raw in caplog.text  # so the capture below would see a leak
    caplog.clear()
    settings = sasl.settings(sasl_password=raw)
    with pytest.raises(KafkaAuthError):
        admin.list_topics(settings)
    assert raw not in caplog.text and "SaslAuthenticateRequest" in caplog.text


def test_simulator_sink_delivers_every_event(
    sasl: SaslCluster, simulated: SimulationResult, debug_logs: pytest.LogCaptureFixture
) -> None:
    settings = sasl.settings()
    assert simulated.total > 100
    for topic, count in simulated.counts_by_topic.items():
        assert reading.record_count(settings.bootstrap_servers, settings.kafka, topic) == count
    assert "SaslAuthenticateRequest" in debug_logs.text
    assert_no_secret(debug_logs.text, sasl)


def test_archiver_archives_everything(sasl: SaslCluster, simulated: SimulationResult) -> None:
    from analytics.lake.archiver import Archiver, archived_topics

    settings = sasl.settings()
    expected = sum(
        reading.record_count(settings.bootstrap_servers, settings.kafka, topic)
        for topic in archived_topics(settings)
    )
    assert expected >= simulated.total
    stats = Archiver(settings).run(until_idle=True, max_seconds=40)
    assert stats.records == expected and stats.commits > 0


def test_webhook_dispatcher_consumes_and_delivers(
    sasl: SaslCluster, debug_logs: pytest.LogCaptureFixture
) -> None:
    from webhooks import Dispatcher, start_receiver

    settings = sasl.settings()
    alerts = [
        AlertRaised(
            event_id=f"sasl-evt-{i}",
            host_id=f"h{i:04d}",
            cluster="c0",
            ts=1_700_000_000_000 + i,
            payload={
                "alert_id": f"sasl-alert-{i}",
                "alertname": "NewRMA",
                "severity": "critical",
                "labels": {},
                "annotations": {"summary": "sasl"},
            },
        ).to_record()
        for i in range(5)
    ]
    producer = KafkaProducer(**settings.kafka.kafka_python(settings.bootstrap_servers), acks="all")
    for record in alerts:
        producer.send(
            settings.topics.alerts.name,
            key=record["payload"]["alert_id"].encode(),
            value=CODEC.encode(record),
        )
    producer.flush(30)
    producer.close()

    out = sasl.root / "received.jsonl"
    # the receiver rejects anything not signed with the secret
    receiver = start_receiver(0, sasl.hmac_secret.encode(), out)
    hooked = settings.model_copy(
        update={"webhooks": settings.webhooks.model_copy(update={"urls": [receiver.url]})}
    )

    def received() -> int:
        return len(out.read_text().splitlines()) if out.exists() else 0

    async def run() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(Dispatcher(hooked).run(stop))
        deadline = time.monotonic() + 30
        while received() < len(alerts) and not task.done() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        stop.set()
        await task

    try:
        asyncio.run(run())
    finally:
        receiver.stop()
    keys = sorted(json.loads(line)["idempotency_key"] for line in out.read_text().splitlines())
    assert len(keys) == len(alerts)
    assert "SaslAuthenticateRequest" in debug_logs.text  # aiokafka's request log, masked
    assert_no_secret(debug_logs.text, sasl)


def test_detect_worker_joins_consumes_and_produces(sasl: SaslCluster, tmp_path: Path) -> None:
    from streams.worker import spawn_worker

    plain = sasl.settings()
    # DEBUG: the worker's log then holds aiokafka's SASL requests, which must come out masked
    settings = plain.model_copy(update={"detect": plain.detect.model_copy(update={"log_level": "debug"})})
    (port,) = free_ports(1)
    log = tmp_path / "detect.log"
    worker = spawn_worker(settings, web_port=port, data_dir=tmp_path / "w", log_path=log)
    try:
        health = worker.wait_ready(60)  # its consumer group got partitions of the SASL-only broker
        assert health["assigned"]
        dlq = settings.topics.dlq.name
        before = reading.record_count(settings.bootstrap_servers, settings.kafka, dlq)
        producer = KafkaProducer(**settings.kafka.kafka_python(settings.bootstrap_servers), acks="all")
        producer.send(settings.topics.errors.name, key=b"h0000", value=b"not an event").get(10)
        producer.close()
        deadline = time.monotonic() + 30  # consumed, then dead-lettered through Faust's producer
        while reading.record_count(settings.bootstrap_servers, settings.kafka, dlq) <= before:
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.25)
    finally:
        assert worker.stop() == 0, log.read_text()[-3000:]
    text = log.read_text()
    assert "Authentication failed" not in text and "SaslAuthenticateRequest" in text
    assert_no_secret(text, sasl)


# -- refused logins --------------------------------------------------------------------------------


def timed(call: Callable[[], object]) -> tuple[BaseException, float]:
    started = time.monotonic()
    with pytest.raises(KafkaAuthError) as info:
        call()
    return info.value, time.monotonic() - started


def test_wrong_password_fails_fast_and_clearly(
    sasl: SaslCluster, debug_logs: pytest.LogCaptureFixture
) -> None:
    from analytics.lake.archiver import Archiver
    from webhooks import Dispatcher

    wrong = f"wrong-{secrets.token_hex(8)}"
    bad = sasl.settings(sasl_password=wrong)
    bad = bad.model_copy(
        update={"webhooks": bad.webhooks.model_copy(update={"urls": ["http://127.0.0.1:9/"]})}
    )
    calls: dict[str, Callable[[], object]] = {
        "admin": lambda: admin.create_topics(bad),
        "producer": lambda: run_simulation(
            bad, SimulationRequest(days=0.25, sink="kafka", create_topics=False)
        ),
        "archiver": lambda: Archiver(bad).run(until_idle=True, max_seconds=5),
        "dispatcher": lambda: asyncio.run(Dispatcher(bad).run(asyncio.Event())),
    }
    for part, call in calls.items():
        error, took = timed(call)
        assert took < 5.0, f"{part} took {took:.1f} s to fail"
        message = str(error)
        assert "Invalid username or password" in message and repr(USER) in message, (part, message)
        assert wrong not in message

    # the libraries' own failures (e.g. a password rotated under a running Faust worker): logged, masked
    async def aiokafka_login() -> None:
        from aiokafka import AIOKafkaConsumer

        consumer = AIOKafkaConsumer("x", **bad.kafka.aiokafka(bad.bootstrap_servers))
        try:
            await consumer.start()
        finally:
            await consumer.stop()

    with pytest.raises(Exception, match="Unable to bootstrap"):
        asyncio.run(aiokafka_login())
    with pytest.raises(Exception, match="Unable to bootstrap"):
        KafkaProducer(**bad.kafka.kafka_python(bad.bootstrap_servers), bootstrap_timeout_ms=1000)
    assert "Authentication failed: Invalid username or password" in debug_logs.text
    assert "SaslAuthenticate" in debug_logs.text
    assert wrong not in debug_logs.text
    assert_no_secret(debug_logs.text, sasl)


def test_cli_reports_a_refused_login_in_one_line(sasl: SaslCluster, tmp_path: Path) -> None:
    wrong = f"wrong-{secrets.token_hex(8)}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEETPULSE_", "KAFKA_"))}
    env.update(
        {
            "FLEETPULSE_KAFKA__BOOTSTRAP_SERVERS": sasl.bootstrap,
            "FLEETPULSE_KAFKA__SECURITY_PROTOCOL": "SASL_PLAINTEXT",
            "FLEETPULSE_KAFKA__SASL_USERNAME": USER,
            "FLEETPULSE_KAFKA__SASL_PASSWORD": wrong,
            "FLEETPULSE_WEBHOOKS__SECRET": sasl.hmac_secret,
            "COLUMNS": "400",
        }
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", "from fleetpulse.cli import main; main()", "--verbose", "topics", "list"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    took = time.monotonic() - started
    output = done.stdout + done.stderr
    assert done.returncode == 2, output[-2000:]
    assert "error: Kafka at" in done.stderr and "Invalid username or password" in done.stderr
    assert "Traceback" not in output and took < 20
    assert "SaslAuthenticateRequest" in output  # --verbose: the debug log was on
    for secret in (wrong, sasl.hmac_secret, *sasl.secrets()):
        assert secret not in output


# -- SCRAM-SHA-256 ---------------------------------------------------------------------------------


def test_scram_sha_256_login(sasl: SaslCluster, debug_logs: pytest.LogCaptureFixture) -> None:
    """A SCRAM user, created through the admin API over PLAIN, runs the admin, a producer and aiokafka."""
    plain = sasl.settings()
    with admin.admin_client(plain.bootstrap_servers, plain.kafka) as client:
        upsert = UserScramCredentialUpsertion(SCRAM_USER, ScramMechanism.SCRAM_SHA_256, sasl.password)
        assert client.alter_user_scram_credentials([upsert]) == {SCRAM_USER: None}
    scram = sasl.settings(sasl_mechanism="SCRAM-SHA-256", sasl_username=SCRAM_USER)
    topic = "sasl.scram"
    deadline = time.monotonic() + 10  # the credential reaches the broker through the metadata log
    while True:
        try:
            admin.create_topics(scram, [TopicSpec(name=topic, partitions=1)])
            break
        except KafkaAuthError:
            assert time.monotonic() < deadline
            time.sleep(0.2)
    producer = KafkaProducer(**scram.kafka.kafka_python(scram.bootstrap_servers), acks="all")
    producer.send(topic, b"over scram").get(10)
    producer.close()

    async def consume() -> list[bytes]:
        from aiokafka import AIOKafkaConsumer

        consumer = AIOKafkaConsumer(
            topic, auto_offset_reset="earliest", **scram.kafka.aiokafka(scram.bootstrap_servers)
        )
        await consumer.start()
        try:
            batches = await consumer.getmany(timeout_ms=10_000)
            return [m.value for msgs in batches.values() for m in msgs]
        finally:
            await consumer.stop()

    assert asyncio.run(consume()) == [b"over scram"]
    plain_consumer = KafkaConsumer(**scram.kafka.kafka_python(scram.bootstrap_servers))
    assert topic in plain_consumer.topics()
    plain_consumer.close()
    _, took = timed(
        lambda: admin.list_topics(sasl.settings(sasl_mechanism="SCRAM-SHA-256", sasl_username="nobody"))
    )
    assert took < 5.0
    assert_no_secret(debug_logs.text, sasl)


# -- SASL_SSL: the same login inside TLS -------------------------------------------------------------


def test_sasl_ssl_reaches_every_client_library(sasl: SaslCluster, tmp_path: Path) -> None:
    """kafka-python (admin, producer) with ssl_cafile, aiokafka with an SSL context, Faust with SASL_SSL credentials."""
    from streams.worker import spawn_worker

    if sasl.tls_bootstrap is None:
        pytest.skip("the cryptography package is needed to make the test CA")
    settings = sasl.settings(tls=True)  # its own "tls."-prefixed topics
    result = run_simulation(settings, SimulationRequest(preset="small", days=1.0, sink="kafka"))
    for topic, count in result.counts_by_topic.items():
        assert topic.startswith("tls.")
        assert reading.record_count(settings.bootstrap_servers, settings.kafka, topic) == count

    async def first_inventory() -> bytes | None:
        from aiokafka import AIOKafkaConsumer

        consumer = AIOKafkaConsumer(
            settings.topics.inventory.name,
            auto_offset_reset="earliest",
            **settings.kafka.aiokafka(settings.bootstrap_servers),
        )
        await consumer.start()
        try:
            return (await consumer.getone()).value
        finally:
            await consumer.stop()

    value = asyncio.run(asyncio.wait_for(first_inventory(), 20))
    assert value is not None and CODEC.decode(value).event_type == "HostInventoried"

    (port,) = free_ports(1)
    log = tmp_path / "detect.log"
    worker = spawn_worker(settings, web_port=port, data_dir=tmp_path / "w", log_path=log)
    try:
        assert worker.wait_ready(60)["assigned"]
    finally:
        assert worker.stop() == 0, log.read_text()[-3000:]
    assert_no_secret(log.read_text(), sasl)

    untrusted = settings.kafka.model_copy(update={"ssl_cafile": None})  # system CAs don't know our CA
    error, took = timed(lambda: admin.list_topics(settings.model_copy(update={"kafka": untrusted})))
    assert "certificate is not trusted" in str(error) and took < 5.0
