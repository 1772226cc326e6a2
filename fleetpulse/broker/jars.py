"""Find java and fetch the Kafka jars with Maven into a per-version cache, once.

The cache is ``cache_dir/<kafka_version>/libs``, filled by ``fleetpulse.maven`` (a temporary
sibling renamed into place with a ``.complete`` marker), so an interrupted download never
leaves a half cache, and later starts need neither the network nor Maven.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from fleetpulse.maven import (
    COMPLETE_MARKER,
    MIN_JAVA,
    JarSet,
    Runner,
    Which,
    fetch_jars,
    java_major_version,
    mvn_output_summary,
    require_java,
    require_mvn,
    run_captured,
)
from ground.settings.broker import BrokerSettings

POM = Path(__file__).with_name("pom.xml")

__all__ = [
    "COMPLETE_MARKER",
    "MIN_JAVA",
    "POM",
    "classpath",
    "ensure_jars",
    "find_java",
    "find_mvn",
    "is_complete",
    "java_major_version",
    "libs_dir",
    "main_jar_name",
    "mvn_output_summary",
    "run_captured",
]


def find_java(settings: BrokerSettings, which: Which = shutil.which, run: Runner = run_captured) -> str:
    """Absolute path of a java >= 17, or ToolMissingError saying how to get one."""
    return require_java(
        settings.java,
        f"Kafka {settings.kafka_version}",
        "set FLEETPULSE_BROKER__JAVA to its path",
        which,
        run,
    )


def find_mvn(settings: BrokerSettings, which: Which = shutil.which) -> str:
    return require_mvn(
        settings.mvn, f"Kafka {settings.kafka_version}", "set FLEETPULSE_BROKER__MVN to its path", which
    )


def libs_dir(settings: BrokerSettings) -> Path:
    return settings.cache_dir / settings.kafka_version / "libs"


def main_jar_name(settings: BrokerSettings) -> str:
    return f"kafka_{settings.scala_version}-{settings.kafka_version}.jar"


def jar_set(settings: BrokerSettings, pom: Path = POM) -> JarSet:
    return JarSet(
        what=f"Kafka {settings.kafka_version} for Scala {settings.scala_version}",
        pom=pom,
        libs=libs_dir(settings),
        main_jar=main_jar_name(settings),
        properties={"kafka.version": settings.kafka_version, "scala.binary.version": settings.scala_version},
        timeout_s=settings.fetch_timeout_s,
        timeout_fix="raise FLEETPULSE_BROKER__FETCH_TIMEOUT_S on a slow network",
        first_use="first start",
    )


def is_complete(settings: BrokerSettings) -> bool:
    return jar_set(settings).is_complete()


def classpath(settings: BrokerSettings) -> str:
    """A java ``-cp`` value for every jar in the cache (java expands the ``*``)."""
    return f"{libs_dir(settings)}/*"


def ensure_jars(
    settings: BrokerSettings,
    *,
    which: Which = shutil.which,
    run: Runner = run_captured,
    pom: Path = POM,
    on_fetch: Callable[[str], None] = lambda message: None,
) -> Path:
    """The libs directory holding Kafka and its dependencies, fetched with Maven if not cached."""
    jars = jar_set(settings, pom)
    if jars.is_complete():
        return jars.libs
    return fetch_jars(jars, find_mvn(settings, which), run=run, on_fetch=on_fetch)
