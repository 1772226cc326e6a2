"""A local SparkSession that reads the Delta lake, with the Delta jars matching the installed pyspark.

The jars come from Maven Central once, through ``fleetpulse.maven`` (the way the broker gets Kafka),
into ``~/.cache/fleetpulse/delta/<artifact>-<version>/libs``, and go to Spark as ``spark.jars``.
Not ``spark.jars.packages``: Ivy would resolve at every start, need the network each time, and add
Delta's whole dependency tree next to Spark's own newer Hadoop and Parquet.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

from fleetpulse.maven import JarSet, Runner, Which, fetch_jars, require_java, require_mvn, run_captured
from ground.errors import FleetpulseError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_CACHE_DIR = Path("~/.cache/fleetpulse/delta").expanduser()
POM = Path(__file__).with_name("pom.xml")
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"


class SparkSetupError(FleetpulseError):
    """No Delta Lake build for the installed Spark, or pyspark is missing."""


@dataclass(frozen=True)
class DeltaRelease:
    """One Delta Lake build on Maven Central: ``io.delta:<artifact>:<version>``."""

    artifact: str
    version: str

    @property
    def coordinates(self) -> str:
        return f"io.delta:{self.artifact}:{self.version}"

    @property
    def main_jar(self) -> str:
        return f"{self.artifact}-{self.version}.jar"


# Spark major.minor → the newest Delta Lake build for it on Maven Central (checked 2026-12-04).
# Delta 4.4.0 is built for Spark 4.0, 4.1 and 4.2; delta-spark_2.13 is the same jar as
# delta-spark_4.2_2.13. No Delta release supports Spark 4.3 yet: 4.4.0 fails there with
# NoSuchMethodError (LogicalRDD.<init>) on the first read.
DELTA_FOR_SPARK: dict[str, DeltaRelease] = {
    "4.0": DeltaRelease("delta-spark_4.0_2.13", "4.4.0"),
    "4.1": DeltaRelease("delta-spark_4.1_2.13", "4.4.0"),
    "4.2": DeltaRelease("delta-spark_2.13", "4.4.0"),
}


def installed_spark_version() -> str:
    try:
        return version("pyspark")
    except PackageNotFoundError as exc:
        raise SparkSetupError(
            "pyspark is not installed (it is no project dependency): `pip install 'pyspark>=4.2,<4.3'`"
        ) from exc


def delta_release(spark_version: str) -> DeltaRelease:
    """The Delta build for a Spark version, or a one-line SparkSetupError saying what to install."""
    minor = ".".join(spark_version.split(".")[:2])
    release = DELTA_FOR_SPARK.get(minor)
    if release is None:
        raise SparkSetupError(
            f"no Delta Lake release on Maven Central supports Spark {spark_version} yet "
            f"(known: Spark {', '.join(DELTA_FOR_SPARK)}); install one of those "
            "(`pip install 'pyspark>=4.2,<4.3'`), or pass delta=DeltaRelease(artifact, version)"
        )
    return release


def delta_jars(
    release: DeltaRelease,
    *,
    cache_dir: Path = DEFAULT_CACHE_DIR,
    mvn: str = "mvn",
    timeout_s: float = 900.0,
    which: Which = shutil.which,
    run: Runner = run_captured,
    on_fetch: Callable[[str], None] = lambda message: None,
) -> list[Path]:
    """The Delta jars for ``release`` (delta-spark, delta-storage), fetched with Maven if not cached."""
    jars = JarSet(
        what=f"Delta Lake {release.version} ({release.coordinates})",
        pom=POM,
        libs=cache_dir.expanduser().absolute() / f"{release.artifact}-{release.version}" / "libs",
        main_jar=release.main_jar,
        properties={"delta.artifact": release.artifact, "delta.version": release.version},
        timeout_s=timeout_s,
        timeout_fix="pass a larger timeout_s on a slow network",
        first_use="first use",
    )
    if not jars.is_complete():
        fetch_jars(jars, require_mvn(mvn, jars.what, "pass mvn= its path", which), run=run, on_fetch=on_fetch)
    return sorted(jars.libs.glob("*.jar"))


def spark_java(environ: Mapping[str, str] = os.environ) -> str:
    """The java Spark's launcher runs: ``$JAVA_HOME/bin/java`` if set, else ``java`` on PATH."""
    home = environ.get("JAVA_HOME")
    return str(Path(home) / "bin" / "java") if home else "java"


def local_conf(
    jars: Sequence[Path], *, driver_memory: str = "1g", shuffle_partitions: int = 2
) -> dict[str, str]:
    """Spark settings of a small local session that reads and writes Delta tables."""
    return {
        "spark.jars": ",".join(str(jar) for jar in jars),
        "spark.sql.extensions": DELTA_EXTENSION,
        "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
        "spark.driver.memory": driver_memory,
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        # Delta replays its log in this many tasks (default 50): a few suit a small local lake.
        "spark.databricks.delta.snapshotPartitions": str(shuffle_partitions),
    }


def delta_session(
    app_name: str = "fleetpulse",
    *,
    delta: DeltaRelease | None = None,
    cores: int = 2,
    driver_memory: str = "1g",
    cache_dir: Path = DEFAULT_CACHE_DIR,
    extra_conf: Mapping[str, str] | None = None,
    on_fetch: Callable[[str], None] = lambda message: None,
) -> SparkSession:
    """A ``local[cores]`` SparkSession with Delta Lake configured (``delta.`<path>``` in SQL).

    Checks java first, since Spark's own error for a missing JVM names none. Like every
    ``getOrCreate``, it returns a running session unchanged when one exists in this process.
    pyspark is imported here, not at module level: it is not a project dependency, and the jar
    helpers above work without it.
    """
    spark_version = installed_spark_version()
    release = delta or delta_release(spark_version)
    require_java(spark_java(), f"Spark {spark_version}", "set JAVA_HOME to a JDK 17+")
    jars = delta_jars(release, cache_dir=cache_dir, on_fetch=on_fetch)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(f"local[{cores}]").appName(app_name)
    conf = {**local_conf(jars, driver_memory=driver_memory, shuffle_partitions=cores), **(extra_conf or {})}
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
