"""Choosing and caching the Delta jars for Spark, with an injected Maven: no JVM, no network."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from fleetpulse.maven import COMPLETE_MARKER, JarResolutionError, ToolMissingError
from fleetpulse.spark import DeltaRelease, SparkSetupError, delta_jars, delta_release
from fleetpulse.spark.session import DELTA_CATALOG, DELTA_EXTENSION, local_conf, spark_java

RELEASE = DeltaRelease("delta-spark_2.13", "4.4.0")


class FakeMaven:
    """Writes the pom's jars into -DoutputDirectory, as ``mvn dependency:copy-dependencies`` would."""

    def __init__(self, code: int = 0, out: str = "") -> None:
        self.code, self.out = code, out
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        props = dict(a[2:].split("=", 1) for a in argv if a.startswith("-D"))
        target = Path(props["outputDirectory"])
        for name in (f"{props['delta.artifact']}-{props['delta.version']}.jar", "delta-storage-4.4.0.jar"):
            (target / name).write_bytes(b"PK")
        return subprocess.CompletedProcess(list(argv), self.code, stdout=self.out)


def mvn_on_path(name: str) -> str | None:
    return "/usr/bin/mvn" if name == "mvn" else None


@pytest.mark.parametrize(
    ("spark", "artifact"),
    [("4.0.1", "delta-spark_4.0_2.13"), ("4.1.4", "delta-spark_4.1_2.13"), ("4.2.1", "delta-spark_2.13")],
)
def test_delta_release_per_spark_minor(spark: str, artifact: str):
    assert delta_release(spark) == DeltaRelease(artifact, "4.4.0")


@pytest.mark.parametrize("spark", ["4.3.0", "3.5.3"])
def test_spark_without_a_delta_release_is_one_clear_line(spark: str):
    with pytest.raises(SparkSetupError, match=f"supports Spark {spark} yet") as info:
        delta_release(spark)
    assert "\n" not in str(info.value) and "pyspark>=4.2,<4.3" in str(info.value)


def test_jars_fetched_once_into_a_per_version_cache(tmp_path: Path):
    maven = FakeMaven()
    messages: list[str] = []
    jars = delta_jars(RELEASE, cache_dir=tmp_path, which=mvn_on_path, run=maven, on_fetch=messages.append)
    libs = tmp_path / "delta-spark_2.13-4.4.0" / "libs"
    assert jars == [libs / "delta-spark_2.13-4.4.0.jar", libs / "delta-storage-4.4.0.jar"]
    assert (libs / COMPLETE_MARKER).is_file()
    assert "-Ddelta.artifact=delta-spark_2.13" in maven.calls[0] and "-Ddelta.version=4.4.0" in maven.calls[0]
    assert messages and "first use" in messages[0]
    assert delta_jars(RELEASE, cache_dir=tmp_path, which=lambda name: None, run=maven) == jars
    assert len(maven.calls) == 1  # the second call needed neither Maven nor the network


def test_missing_mvn_says_what_it_would_fetch(tmp_path: Path):
    with pytest.raises(ToolMissingError, match="io.delta:delta-spark_2.13:4.4.0") as info:
        delta_jars(RELEASE, cache_dir=tmp_path, which=lambda name: None, run=FakeMaven())
    assert info.value.tool == "mvn"


def test_unresolvable_release_leaves_no_cache(tmp_path: Path):
    out = "[ERROR] Could not find artifact io.delta:delta-spark_4.3_2.13:jar:9.9.9 in central\n"
    with pytest.raises(JarResolutionError, match="could not resolve Delta Lake 9.9.9"):
        delta_jars(
            DeltaRelease("delta-spark_4.3_2.13", "9.9.9"),
            cache_dir=tmp_path,
            which=mvn_on_path,
            run=FakeMaven(code=1, out=out),
        )
    assert list((tmp_path / "delta-spark_4.3_2.13-9.9.9").iterdir()) == []


def test_local_conf_configures_delta_and_the_jars():
    conf = local_conf([Path("/c/a.jar"), Path("/c/b.jar")], driver_memory="512m", shuffle_partitions=2)
    assert conf["spark.jars"] == "/c/a.jar,/c/b.jar"
    assert conf["spark.sql.extensions"] == DELTA_EXTENSION
    assert conf["spark.sql.catalog.spark_catalog"] == DELTA_CATALOG
    assert conf["spark.ui.enabled"] == "false" and conf["spark.driver.memory"] == "512m"
    assert "spark.jars.packages" not in conf


def test_spark_java_follows_java_home():
    assert spark_java({"JAVA_HOME": "/opt/jdk"}) == "/opt/jdk/bin/java"
    assert spark_java({}) == "java"
