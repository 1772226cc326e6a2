"""Finding java/mvn and the jar cache, with injected ``which`` and runner: no Maven, no network."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from fleetpulse.broker import jars
from fleetpulse.broker.errors import JarResolutionError, ToolMissingError
from ground.settings.broker import BrokerSettings

JAVA17 = 'openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment (build 17.0.15+6)\n'
JAVA8 = 'java version "1.8.0_292"\nJava(TM) SE Runtime Environment (build 1.8.0_292-b10)\n'


def which_only(*present: str):
    return lambda name: f"/usr/bin/{name}" if name in present else None


def completed(argv: Sequence[str], code: int = 0, out: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(list(argv), code, stdout=out)


def no_run(argv: Sequence[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
    raise AssertionError(f"nothing should run, ran {argv}")


class FakeMaven:
    """Stands in for ``mvn dependency:copy-dependencies``: writes jars into -DoutputDirectory."""

    def __init__(self, jar_names: Sequence[str], code: int = 0, out: str = "") -> None:
        self.jar_names, self.code, self.out = jar_names, code, out
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        target = Path(next(a for a in argv if a.startswith("-DoutputDirectory=")).split("=", 1)[1])
        for name in self.jar_names:
            (target / name).write_bytes(b"PK")
        return completed(argv, self.code, self.out)


@pytest.fixture
def settings(tmp_path: Path) -> BrokerSettings:
    return BrokerSettings(cache_dir=tmp_path / "cache", kafka_version="4.4.0")


@pytest.mark.parametrize(
    ("output", "major"),
    [(JAVA17, 17), (JAVA8, 8), ('openjdk version "21" 2023-09-19', 21), ('java version "11.0.2"', 11)],
)
def test_java_major_version(output: str, major: int):
    assert jars.java_major_version(output) == major


def test_java_major_version_without_version():
    with pytest.raises(ValueError, match="no version"):
        jars.java_major_version("command not found")


def test_missing_java_says_what_to_install(settings):
    with pytest.raises(ToolMissingError, match="Java 17") as info:
        jars.find_java(settings, which=which_only("mvn"), run=no_run)
    assert info.value.tool == "java"
    assert "FLEETPULSE_BROKER__JAVA" in str(info.value)


def test_old_java_is_refused(settings):
    with pytest.raises(ToolMissingError, match="Java 8"):
        jars.find_java(settings, which=which_only("java"), run=lambda argv, t: completed(argv, out=JAVA8))


def test_java_17_is_accepted(settings):
    java = jars.find_java(settings, which=which_only("java"), run=lambda argv, t: completed(argv, out=JAVA17))
    assert java == "/usr/bin/java"


def test_unreadable_java_version(settings):
    with pytest.raises(ToolMissingError, match="could not tell the version"):
        jars.find_java(settings, which=which_only("java"), run=lambda argv, t: completed(argv, out="??"))


def test_missing_mvn_on_first_start(settings):
    with pytest.raises(ToolMissingError, match="Maven") as info:
        jars.ensure_jars(settings, which=which_only("java"), run=no_run)
    assert info.value.tool == "mvn"
    assert "FLEETPULSE_BROKER__MVN" in str(info.value)
    assert not jars.libs_dir(settings).exists()


def test_fetch_publishes_complete_cache(settings):
    maven = FakeMaven(["kafka_2.13-4.4.0.jar", "kafka-clients-4.4.0.jar"])
    messages: list[str] = []
    libs = jars.ensure_jars(settings, which=which_only("mvn"), run=maven, on_fetch=messages.append)
    assert libs == settings.cache_dir / "4.4.0" / "libs"
    assert (libs / jars.COMPLETE_MARKER).is_file()
    assert sorted(p.name for p in libs.glob("*.jar")) == ["kafka-clients-4.4.0.jar", "kafka_2.13-4.4.0.jar"]
    assert "-Dkafka.version=4.4.0" in maven.calls[0] and "-Dscala.binary.version=2.13" in maven.calls[0]
    assert messages and "first start" in messages[0]
    assert [p.name for p in libs.parent.iterdir()] == ["libs"]  # no staging dir left behind
    assert jars.classpath(settings) == f"{libs}/*"


def test_second_start_uses_cache_without_maven(settings):
    jars.ensure_jars(settings, which=which_only("mvn"), run=FakeMaven(["kafka_2.13-4.4.0.jar"]))
    libs = jars.ensure_jars(settings, which=which_only(), run=no_run)  # no mvn on PATH, nothing run
    assert jars.is_complete(settings) and libs.is_dir()


def test_other_kafka_version_fetches_again(settings):
    jars.ensure_jars(settings, which=which_only("mvn"), run=FakeMaven(["kafka_2.13-4.4.0.jar"]))
    other = settings.model_copy(update={"kafka_version": "4.3.0"})
    assert not jars.is_complete(other)


def test_failed_fetch_reports_maven_errors_and_leaves_no_cache(settings):
    output = (
        "\x1b[0m\x1b[0m[ERROR] Failed to execute goal on project x: Could not resolve dependencies: "
        "org.apache.kafka:kafka_2.13:jar:4.4.0 was not found -> [Help 1]\n"
        "[ERROR] \n[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n"
        "[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/DependencyResolutionException\n"
    )
    maven = FakeMaven(["half-a-download.jar"], code=1, out=output)
    with pytest.raises(JarResolutionError, match="could not resolve Kafka 4.4.0") as info:
        jars.ensure_jars(settings, which=which_only("mvn"), run=maven)
    assert "kafka_2.13:jar:4.4.0 was not found" in info.value.output_tail
    assert info.value.output_tail == (
        "[ERROR] Failed to execute goal on project x: Could not resolve dependencies: "
        "org.apache.kafka:kafka_2.13:jar:4.4.0 was not found"
    )
    assert not jars.libs_dir(settings).exists()
    assert list(jars.libs_dir(settings).parent.iterdir()) == []


def test_success_without_the_kafka_jar_is_an_error(settings):
    with pytest.raises(JarResolutionError, match="kafka_2.13-4.4.0.jar"):
        jars.ensure_jars(settings, which=which_only("mvn"), run=FakeMaven(["other.jar"]))
    assert not jars.libs_dir(settings).exists()


def test_interrupted_fetch_leaves_no_half_cache(settings):
    def interrupted(argv: Sequence[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
        FakeMaven(["kafka_2.13-4.4.0.jar"])(argv, timeout_s)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        jars.ensure_jars(settings, which=which_only("mvn"), run=interrupted)
    assert not jars.is_complete(settings)
    assert list(jars.libs_dir(settings).parent.iterdir()) == []


def test_maven_timeout(settings):
    def slow(argv: Sequence[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
        raise subprocess.TimeoutExpired(argv, timeout_s)

    with pytest.raises(JarResolutionError, match="FETCH_TIMEOUT_S"):
        jars.ensure_jars(settings, which=which_only("mvn"), run=slow)


def test_incomplete_leftover_cache_is_replaced(settings):
    libs = jars.libs_dir(settings)
    libs.mkdir(parents=True)
    (libs / "kafka_2.13-4.4.0.jar").write_bytes(b"truncated")  # no .complete marker
    jars.ensure_jars(settings, which=which_only("mvn"), run=FakeMaven(["kafka_2.13-4.4.0.jar", "more.jar"]))
    assert jars.is_complete(settings) and (libs / "more.jar").is_file()


def test_mvn_output_summary_falls_back_to_last_lines():
    assert jars.mvn_output_summary("a\nb\n\nc", max_lines=2) == "b\nc"
