"""The compose stack's security defaults: required secrets, loopback ports, SCRAM users and topic ACLs."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from ground.settings import Settings
from tests.deploy.test_compose import (
    DOT_ENV,
    FLEETPULSE_SERVICES,
    ROOT,
    SERVICES,
    MissingVariableError,
    broker_properties,
    interpolate,
)

KAFKA_DIR = ROOT / "deploy" / "kafka"
TELEMETRY = {"samples", "errors", "inventory"}
DETECTOR_OUTPUTS = {"findings", "actions", "alerts"}


def acls() -> list[tuple[str, set[str], str, str, str]]:
    """(user, operations, resource type, pattern type, name) rows of deploy/kafka/acls.txt."""
    rows = []
    for line in (KAFKA_DIR / "acls.txt").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            user, ops, kind, pattern, name = line.split()
            rows.append((user, set(ops.split(",")), kind, pattern, name))
    return rows


def writers_of(topic: str) -> set[str]:
    """Users an ACL row lets write ``topic`` (literal name or prefix)."""
    return {
        user
        for user, ops, kind, pattern, name in acls()
        if kind == "topic"
        and ({"Write", "All"} & ops)
        and (name == topic if pattern == "literal" else topic.startswith(name))
    }


def env_of(name: str) -> dict[str, str]:
    return {k: str(v) for k, v in SERVICES[name].get("environment", {}).items()}


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_published_ports_listen_on_loopback_only(name: str) -> None:
    for port in SERVICES[name].get("ports", []):
        assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} on every interface"


def test_compose_stops_with_a_message_naming_each_missing_secret() -> None:
    for svc in SERVICES.values():
        for raw in svc.get("environment", {}).values():
            for var in re.findall(r"\$\{(\w+)", str(raw)):
                if var not in DOT_ENV:
                    continue
                env = {k: v for k, v in DOT_ENV.items() if k != var}
                with pytest.raises(MissingVariableError, match=var):
                    interpolate(raw, env)


def test_no_secret_has_a_fallback() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    assert "change-me" not in text
    for var in DOT_ENV:
        assert not re.search(r"\$\{" + var + r":?-", text), f"{var} has a default"


def test_the_broker_takes_only_scram_logins_and_enforces_acls() -> None:
    props = broker_properties()
    protocols = dict(p.split(":") for p in props["listener.security.protocol.map"].split(","))
    listeners = dict(re.match(r"(\w+)://(.*)", x).groups() for x in props["listeners"].split(","))  # type: ignore[union-attr]
    for listener, address in listeners.items():
        if protocols[listener] == "PLAINTEXT":  # only the controller, only on the container's loopback
            assert listener == props["controller.listener.names"] and address.startswith("127.0.0.1:")
        else:
            assert protocols[listener] == "SASL_PLAINTEXT"
    assert props["sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert props["authorizer.class.name"].endswith("StandardAuthorizer")
    assert props["allow.everyone.if.no.acl.found"] == "false"


def test_every_kafka_part_logs_in_as_its_own_user() -> None:
    users: dict[str, str] = {}
    for name in FLEETPULSE_SERVICES:
        env = env_of(name)
        if "KAFKA_BOOTSTRAP_SERVERS" not in env:
            continue
        assert env["FLEETPULSE_KAFKA__SECURITY_PROTOCOL"] == "SASL_PLAINTEXT", name
        assert env["FLEETPULSE_KAFKA__SASL_MECHANISM"] == "SCRAM-SHA-512", name
        assert re.fullmatch(r"\$\{KAFKA_\w+_PASSWORD:\?.+\}", env["FLEETPULSE_KAFKA__SASL_PASSWORD"]), name
        users[name] = env["FLEETPULSE_KAFKA__SASL_USERNAME"]
    assert users["topics"] == "admin"
    parts = {n: u for n, u in users.items() if n != "topics"}
    assert len(set(parts.values())) == len(parts), "parts share a Kafka user"
    created = re.search(r'users="([^"]*)"', (KAFKA_DIR / "setup-users.sh").read_text()).group(1)  # type: ignore[union-attr]
    created_users = {entry.split(":")[0] for entry in created.split()}
    granted = {row[0] for row in acls()}
    assert set(parts.values()) <= created_users and granted <= created_users


def test_only_the_detector_writes_findings_actions_and_alerts() -> None:
    topics = Settings().topics
    for key in DETECTOR_OUTPUTS:
        assert writers_of(getattr(topics, key).name) == {"detector"}, key


def test_only_agents_and_the_simulator_write_telemetry() -> None:
    topics = Settings().topics
    for key in TELEMETRY:
        assert writers_of(getattr(topics, key).name) == {"simulator", "agent"}, key


def test_the_acls_name_the_topics_and_groups_the_parts_use() -> None:
    settings = Settings()
    names = {
        spec.name
        for spec in (getattr(settings.topics, k) for k in type(settings.topics).model_fields)
        if hasattr(spec, "name")
    }
    groups = {settings.detect.app_id, settings.webhooks.group_id, settings.lake.group_id}
    by_kind: dict[str, set[str]] = defaultdict(set)
    for _, _, kind, pattern, name in acls():
        by_kind[kind].add(name)
        if kind == "topic" and pattern == "literal":
            assert name in names, f"acls.txt names an unknown topic {name}"
    assert groups <= by_kind["group"]
