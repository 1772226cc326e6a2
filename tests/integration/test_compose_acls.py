"""The compose stack's ACL table (deploy/kafka/acls.txt) on a real broker with its authorizer settings.

The broker takes the authorizer, super users and SCRAM-SHA-512 of deploy/kafka/start-broker.sh;
the admin logs in with PLAIN here (the local broker cannot be formatted with ``--add-scram``), the
parts with SCRAM-SHA-512 as in compose. Each part may write exactly what the table grants.
"""

from __future__ import annotations

import asyncio
import secrets
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from kafka import KafkaProducer
from kafka.admin import (
    ACL,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ResourcePattern,
    ResourceType,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from kafka.errors import KafkaError
from pydantic import SecretStr

from analytics.lake.archiver import Archiver
from fleetpulse.broker import LocalBroker, ToolMissingError
from ground.kafka import admin
from ground.kafka.config import KafkaAuthError, KafkaSettings
from ground.settings import Settings
from producers import SimulationRequest, run_simulation
from producers.importer import HistoryMapping, run_import
from producers.importer.incidents import parse_start
from schemas import Codec
from streams.operator_events import operator_record, parse_step
from streams.ops_cli import cluster_of, send_step
from streams.worker import spawn_worker
from tests.conftest import free_ports, pointed_at
from tests.deploy.test_compose import broker_properties
from tests.deploy.test_compose_security import acls
from tests.webhooks.conftest import make_alert
from webhooks import run_dispatcher, start_receiver

# same_worker: one ACL broker (26 s to start) for all seven, not one per xdist worker
pytestmark = [pytest.mark.integration, pytest.mark.same_worker]

USERS = ("detector", "dispatcher", "simulator", "archiver", "agent", "operator")


@dataclass(frozen=True)
class AclBroker:
    bootstrap: str
    admin_password: str
    password: str  # every part's, for brevity

    def settings(self, user: str) -> Settings:
        if user == "admin":
            kafka = KafkaSettings(
                security_protocol="SASL_PLAINTEXT",
                sasl_mechanism="PLAIN",
                sasl_username="admin",
                sasl_password=self.admin_password,
            )
        else:
            kafka = KafkaSettings(
                security_protocol="SASL_PLAINTEXT",
                sasl_mechanism="SCRAM-SHA-512",
                sasl_username=user,
                sasl_password=self.password,
            )
        base = pointed_at(Settings.load(), self.bootstrap)
        return base.model_copy(
            update={"kafka": kafka.model_copy(update={"bootstrap_servers": self.bootstrap})}
        )


def compose_authorization(port: int, controller_port: int, admin_password: str) -> dict[str, str]:
    compose = broker_properties()
    plain = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="admin" password="{admin_password}" user_admin="{admin_password}";'
    )
    return {
        **{k: compose[k] for k in ("authorizer.class.name", "allow.everyone.if.no.acl.found", "super.users")},
        "listeners": f"SASL_PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"SASL_PLAINTEXT://127.0.0.1:{port}",
        "listener.security.protocol.map": "SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": f"PLAIN,{compose['sasl.enabled.mechanisms']}",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": plain,
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": (
            "org.apache.kafka.common.security.scram.ScramLoginModule required;"
        ),
    }


def table_acls() -> list[ACL]:
    out = []
    for user, ops, kind, pattern, name in acls():
        for op in ops:
            out.append(
                ACL(
                    principal=f"User:{user}",
                    host="*",
                    operation=ACLOperation[op.upper()],
                    permission_type=ACLPermissionType.ALLOW,
                    resource_pattern=ResourcePattern(
                        ResourceType[kind.upper()], name, ACLResourcePatternType[pattern.upper()]
                    ),
                )
            )
    return out


@pytest.fixture(scope="module")
def broker(local_broker_factory: Callable[..., LocalBroker]) -> Iterator[AclBroker]:
    admin_password, password = f"adm-{secrets.token_hex(16)}", f"pw-{secrets.token_hex(16)}"
    port, controller_port = free_ports(2)
    made = local_broker_factory(
        port=port,
        controller_port=controller_port,
        extra_properties=compose_authorization(port, controller_port, admin_password),
    )
    cluster = AclBroker(f"127.0.0.1:{port}", admin_password, password)
    running = LocalBroker(made.settings, kafka=cluster.settings("admin").kafka)
    try:
        running.start()
    except ToolMissingError as exc:
        pytest.skip(f"no Kafka broker: {exc}")
    try:
        root = cluster.settings("admin")
        admin.create_topics(root)
        with admin.admin_client(root.bootstrap_servers, root.kafka) as client:
            upserts = [UserScramCredentialUpsertion(u, ScramMechanism.SCRAM_SHA_512, password) for u in USERS]
            client.alter_user_scram_credentials(upserts)
            client.create_acls(table_acls())
        wait_for_logins(cluster)
        yield cluster
    finally:
        running.stop()


def wait_for_logins(cluster: AclBroker, timeout_s: float = 30.0) -> None:
    """Credentials reach the broker through its metadata log: a test may not be the first to try them."""
    deadline = time.monotonic() + timeout_s
    for user in USERS:
        settings = cluster.settings(user)
        while True:
            try:
                settings.kafka.check_login(settings.bootstrap_servers, timeout_s=5)
                break
            except KafkaAuthError:
                assert time.monotonic() < deadline, f"{user} cannot log in"
                time.sleep(0.5)


def can_write(cluster: AclBroker, user: str, topic: str) -> bool:
    settings = cluster.settings(user)
    deadline = time.monotonic() + 15  # credentials and ACLs reach the broker through its metadata log
    while True:
        try:
            producer = KafkaProducer(
                **settings.kafka.kafka_python(settings.bootstrap_servers), acks="all", max_block_ms=5000
            )
            break
        except KafkaAuthError:
            assert time.monotonic() < deadline, f"{user} cannot log in"
            time.sleep(0.5)
    try:
        producer.send(topic, b"acl probe", key=b"probe").get(10)  # keyed: fleet.inventory is compacted
        return True
    except KafkaError:
        return False
    finally:
        producer.close(timeout=5)


def test_only_the_detector_writes_findings_actions_and_alerts(broker: AclBroker) -> None:
    """... and the operator user (import, ops record) adds incidents and steps to fleet.actions (issue 36)."""
    topics = Settings().topics
    for key in ("findings", "actions", "alerts"):
        name = getattr(topics, key).name
        assert can_write(broker, "detector", name), name
        assert can_write(broker, "operator", name) == (key == "actions"), name
        for user in ("simulator", "agent", "dispatcher", "archiver"):
            assert not can_write(broker, user, name), (user, name)


def test_only_agents_and_the_simulator_write_telemetry(broker: AclBroker) -> None:
    """... and the operator user imports hosts and their hardware signals, never samples (issue 36)."""
    topics = Settings().topics
    for key in ("samples", "errors", "inventory"):
        name = getattr(topics, key).name
        assert can_write(broker, "simulator", name) and can_write(broker, "agent", name), name
        assert can_write(broker, "operator", name) == (key != "samples"), name
        for user in ("detector", "dispatcher", "archiver"):
            assert not can_write(broker, user, name), (user, name)


def test_import_and_ops_record_run_with_only_the_operator_grants(broker: AclBroker, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`fleetpulse import` and `ops record` need no admin password (issue 36)."""
    settings = broker.settings("operator")
    path = tmp_path / "history.csv"
    path.write_text("host,start,end,class,text,component\nop-h1,0,1,GPU/lost,gone,3\nop-h2,1,,GPU/lost,,\n")
    start = parse_start(time.strftime("%Y-%m-%d", time.gmtime(time.time() - 30 * 86_400)))
    summary = run_import(settings, path, HistoryMapping(causes={"GPU": "faulty_gpu"}), start_ms=start)
    assert summary.sent == 2 and summary.new_hosts == ["op-h1", "op-h2"]
    assert cluster_of(settings, "op-h1") == "imported"
    now_ms = int(time.time() * 1000)
    step = parse_step({"host_id": "op-h1", "kind": "out_of_service", "actor": "dc-tech"}, now_ms)
    send_step(settings, operator_record(step, cluster="imported", now_ms=now_ms))


def test_a_detect_worker_runs_with_only_the_detector_grants(broker: AclBroker, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Its reads, its consumer groups and the internal topics it creates are all in the table."""
    (port,) = free_ports(1)
    worker = spawn_worker(
        broker.settings("detector"), web_port=port, data_dir=tmp_path / "w", log_path=tmp_path / "w.log"
    )
    try:
        health = worker.wait_ready(180)
    finally:
        worker.stop()
    assert health["assigned"], health
    assert stat.S_IMODE((tmp_path / "w").stat().st_mode) == 0o700  # its state: hosts, findings (issue 36)


def test_the_simulator_runs_with_only_its_grants(broker: AclBroker) -> None:
    result = run_simulation(
        broker.settings("simulator"), SimulationRequest(preset="small", days=0.2, sink="kafka")
    )
    assert sum(result.counts.values()) > 0


def test_the_dispatcher_delivers_with_only_its_grants(broker: AclBroker, tmp_path) -> None:  # type: ignore[no-untyped-def]
    secret = secrets.token_urlsafe(32)
    receiver = start_receiver(0, secret.encode(), tmp_path / "alerts.jsonl")
    detector = broker.settings("detector")
    producer = KafkaProducer(**detector.kafka.kafka_python(detector.bootstrap_servers), acks="all")
    producer.send(detector.topics.alerts.name, Codec().encode(make_alert("acl-1")), key=b"acl-1").get(10)
    producer.close()
    base = broker.settings("dispatcher")
    webhooks = base.webhooks.model_copy(
        update={"urls": [receiver.url], "secret": SecretStr(secret), "data_dir": tmp_path / "outbox"}
    )
    settings = base.model_copy(update={"webhooks": webhooks})

    async def deliver() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(run_dispatcher(settings, stop))
        deadline = time.monotonic() + 60
        while receiver.stats.received < 1 and time.monotonic() < deadline and not task.done():
            await asyncio.sleep(0.2)
        stop.set()
        await task

    try:
        asyncio.run(deliver())
    finally:
        receiver.stop()
    assert receiver.stats.received == 1


def test_the_archiver_archives_with_only_its_grants(broker: AclBroker, tmp_path) -> None:  # type: ignore[no-untyped-def]
    run_simulation(broker.settings("simulator"), SimulationRequest(preset="small", days=0.1, sink="kafka"))
    base = broker.settings("archiver")
    settings = base.model_copy(update={"lake": base.lake.model_copy(update={"path": tmp_path / "lake"})})
    stats = Archiver(settings).run(until_idle=True, max_seconds=60)
    assert stats.records > 0 and stats.commits > 0
