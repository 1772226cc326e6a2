"""Render the broker's server.properties and log4j2.properties from BrokerSettings.

Pure functions: a single-node KRaft broker (broker + controller in one process) with
replication factors of 1, listening on loopback only.
"""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

from ground.settings.broker import BrokerSettings


def new_cluster_id(raw: bytes | None = None) -> str:
    """A KRaft cluster id: the base64url of 16 random bytes without padding (22 chars)."""
    data = raw if raw is not None else uuid.uuid4().bytes
    if len(data) != 16:
        raise ValueError(f"a cluster id is made of 16 bytes, got {len(data)}")
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def server_properties(settings: BrokerSettings, log_dirs: Path) -> dict[str, str]:
    """The broker configuration; ``settings.extra_properties`` override the defaults."""
    host, port, cport = settings.host, settings.port, settings.effective_controller_port
    if cport == port:
        raise ValueError(f"the controller port must differ from the broker port ({port})")
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@{host}:{cport}",
        "listeners": f"PLAINTEXT://{host}:{port},CONTROLLER://{host}:{cport}",
        "advertised.listeners": f"PLAINTEXT://{host}:{port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(log_dirs),
        "num.partitions": str(settings.num_partitions),
        # One node: every internal topic must be satisfiable with a single replica.
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        # Nobody else will join a consumer group on a dev broker: don't make the first one wait.
        "group.initial.rebalance.delay.ms": "0",
        # After a crash the controller keeps the dead incarnation registered until its session
        # expires (default 9 s) and refuses the restarted broker meanwhile: expire it sooner.
        "broker.heartbeat.interval.ms": "1000",
        "broker.session.timeout.ms": "4000",
    }
    props.update(settings.extra_properties)
    return props


def log4j2_properties(log_file: Path, level: str = "INFO") -> dict[str, str]:
    """Log everything to one size-rotated file; Kafka's request log is too chatty for INFO."""
    return {
        "status": "warn",
        "name": "fleetpulse-broker",
        # Kafka logs its own shutdown from a JVM shutdown hook; log4j's hook would close the file first.
        "shutdownHook": "disable",
        "appender.file.type": "RollingFile",
        "appender.file.name": "file",
        "appender.file.fileName": str(log_file),
        "appender.file.filePattern": f"{log_file}.%i",
        "appender.file.layout.type": "PatternLayout",
        "appender.file.layout.pattern": "[%d] %p %m (%c)%n",
        "appender.file.policies.type": "Policies",
        "appender.file.policies.size.type": "SizeBasedTriggeringPolicy",
        "appender.file.policies.size.size": "100MB",
        "appender.file.strategy.type": "DefaultRolloverStrategy",
        "appender.file.strategy.max": "3",
        "rootLogger.level": level,
        "rootLogger.appenderRef.file.ref": "file",
        "logger.request.name": "kafka.request.logger",
        "logger.request.level": "WARN",
    }


def render(props: dict[str, str], header: str = "") -> str:
    """Java .properties text, escaped so paths with backslashes or spaces survive."""
    lines = [f"# {line}" for line in header.splitlines()]
    lines += [f"{_escape(key, is_key=True)}={_escape(value)}" for key, value in props.items()]
    return "\n".join(lines) + "\n"


def _escape(text: str, is_key: bool = False) -> str:
    out = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    if is_key:
        for char in " =:#!":
            out = out.replace(char, "\\" + char)
    elif out.startswith(" "):
        out = "\\" + out
    return out
