"""The local broker's two JVM command lines (storage format, the broker itself), built from its settings."""

from __future__ import annotations

from fleetpulse.broker import jars
from fleetpulse.broker.layout import BrokerFiles
from fleetpulse.broker.properties import new_cluster_id
from fleetpulse.broker.system import parent_death_prefix
from ground.settings.broker import BrokerSettings


def java_base(settings: BrokerSettings, files: BrokerFiles, java: str) -> list[str]:
    return [
        java,
        "-cp",
        jars.classpath(settings),
        f"-Dlog4j2.configurationFile={files.log4j_properties}",
        "-Djava.awt.headless=true",
    ]


def format_argv(settings: BrokerSettings, files: BrokerFiles, java: str) -> list[str]:
    """Kafka's StorageTool formatting ``log.dirs`` once, under a new cluster id."""
    return [
        *java_base(settings, files, java),
        "kafka.tools.StorageTool",
        "format",
        # one argv word: a base64url id may start with '-', which argparse would take for an option
        f"--cluster-id={new_cluster_id()}",
        f"--config={files.server_properties}",
    ]


def broker_argv(
    settings: BrokerSettings, files: BrokerFiles, java: str, *, die_with_caller: bool
) -> list[str]:
    """The broker JVM; with ``die_with_caller`` the kernel ends it when its caller dies."""
    argv = [
        *java_base(settings, files, java),
        f"-Xmx{settings.heap}",
        f"-Xms{settings.heap}",  # as Kafka's own start script: RSS does not step up as the heap grows
        "-XX:+ExitOnOutOfMemoryError",
        "kafka.Kafka",
        str(files.server_properties),
    ]
    return [*parent_death_prefix(), *argv] if die_with_caller else argv
