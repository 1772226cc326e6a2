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
        # PLAINTEXT only on the container's own loopback: the controller, and the broker's own listener
        # through which the admin's credentials are set without a command line (no secret in ps)
        if protocols[listener] == "PLAINTEXT":
            assert address.startswith("127.0.0.1:"), listener
        else:
            assert protocols[listener] == "SASL_PLAINTEXT"
    assert protocols[props["inter.broker.listener.name"]] == "PLAINTEXT"  # loopback: no password in the file
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


def test_only_the_detector_writes_findings_and_alerts_and_operators_add_actions() -> None:
    """The operator user (import, ops record) is the one other writer of fleet.actions (issue 36)."""
    topics = Settings().topics
    for key in DETECTOR_OUTPUTS:
        expected = {"detector", "operator"} if key == "actions" else {"detector"}
        assert writers_of(getattr(topics, key).name) == expected, key


def test_only_agents_and_the_simulator_write_samples_and_operators_import_inventory_and_signals() -> None:
    topics = Settings().topics
    for key in TELEMETRY:
        expected = {"simulator", "agent"} | ({"operator"} if key in ("inventory", "errors") else set())
        assert writers_of(getattr(topics, key).name) == expected, key


def test_the_operator_user_has_its_grants_and_no_more() -> None:
    rows = [(ops, kind, pattern, name) for user, ops, kind, pattern, name in acls() if user == "operator"]
    assert all(kind == "topic" and pattern == "literal" for _, kind, pattern, _ in rows)
    topics = Settings().topics
    assert {name for *_, name in rows} == {topics.actions.name, topics.inventory.name, topics.errors.name}
    assert not any({"All", "Create", "Delete", "Alter"} & ops for ops, *_ in rows)


def test_operators_tools_log_in_as_operator_never_admin() -> None:
    env = env_of("operator")
    assert env["FLEETPULSE_KAFKA__SASL_USERNAME"] == "operator"
    assert "KAFKA_OPERATOR_PASSWORD" in env["FLEETPULSE_KAFKA__SASL_PASSWORD"]
    assert SERVICES["operator"].get("profiles") == ["tools"]  # a tool: `docker compose run`, not `up`
    assert "operator:KAFKA_OPERATOR_PASSWORD" in (KAFKA_DIR / "setup-users.sh").read_text()
    assert "KAFKA_OPERATOR_PASSWORD" in env_of("kafka-users")


def test_each_part_gets_only_the_secrets_it_uses() -> None:
    """The detector and the topic job got the webhook secret they do not use (issue 36)."""
    for name in SERVICES:
        env = env_of(name)
        if "FLEETPULSE_WEBHOOKS__SECRET" in env:
            assert name in ("dispatcher", "receiver"), name
        if "FLEETPULSE_DETECT__OPS_TOKEN" in env:
            assert name == "detector", name
        passwords = {v for k, v in env.items() if "PASSWORD" in k and k != "KAFKA_ADMIN_PASSWORD"}
        if "KAFKA_ADMIN_PASSWORD" in env or any("KAFKA_ADMIN_PASSWORD" in v for v in passwords):
            assert name in ("kafka", "kafka-users", "topics"), name
    assert "FLEETPULSE_DETECT__OPS_TOKEN" in env_of("detector")


def test_no_secret_is_on_a_command_line() -> None:
    """The admin password was visible on the kafka-storage command line (issue 36)."""
    for script in ("start-broker.sh", "setup-users.sh"):
        text = (KAFKA_DIR / script).read_text()
        assert "--add-scram" not in text
        for line in text.splitlines():
            if "/opt/kafka/bin/" in line or line.lstrip().startswith('"$bin/'):
                assert "PASSWORD" not in line and "password" not in line, (script, line)
    for name, svc in SERVICES.items():
        assert "PASSWORD" not in " ".join(map(str, svc.get("command", []))), name
        assert "SECRET" not in " ".join(map(str, svc.get("command", []))), name


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
