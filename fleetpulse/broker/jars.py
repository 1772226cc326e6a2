"""Find java and fetch the Kafka jars with Maven into a per-version cache, once.

The cache is ``cache_dir/<kafka_version>/libs``. It is filled in a temporary sibling
directory and renamed into place with a ``.complete`` marker, so an interrupted download
never leaves a half cache, and later starts need neither the network nor Maven.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from fleetpulse.broker.errors import JarResolutionError, ToolMissingError
from ground.settings.broker import BrokerSettings

MIN_JAVA = 17
POM = Path(__file__).with_name("pom.xml")
COMPLETE_MARKER = ".complete"

Which = Callable[[str], str | None]
Runner = Callable[[Sequence[str], float], subprocess.CompletedProcess[str]]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_MVN_BOILERPLATE = (
    "To see the full stack trace",
    "Re-run Maven",
    "For more information about the errors",
    "[Help ",
)


def run_captured(argv: Sequence[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
    """Run a tool with stdout and stderr merged into ``stdout`` (the production runner)."""
    return subprocess.run(
        list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def java_major_version(version_output: str) -> int:
    """The major version from ``java -version`` output ("1.8.0_292" → 8, "17.0.15" → 17)."""
    match = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if match is None:
        raise ValueError(f"no version in java -version output: {version_output.strip()[:200]!r}")
    major = int(match.group(1))
    if major == 1 and match.group(2) is not None:
        return int(match.group(2))
    return major


def find_java(settings: BrokerSettings, which: Which = shutil.which, run: Runner = run_captured) -> str:
    """Absolute path of a java >= 17, or ToolMissingError saying how to get one."""
    java = which(settings.java)
    if java is None:
        raise ToolMissingError(
            "java",
            f"java ({settings.java!r}) not found on PATH: Kafka {settings.kafka_version} needs Java "
            f"{MIN_JAVA}+ (e.g. `apt-get install openjdk-{MIN_JAVA}-jre-headless`), "
            "or set FLEETPULSE_BROKER__JAVA to its path",
        )
    try:
        result = run([java, "-version"], 30.0)
        major = java_major_version(result.stdout or "")
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        raise ToolMissingError("java", f"could not tell the version of {java}: {exc}") from exc
    if major < MIN_JAVA:
        raise ToolMissingError(
            "java",
            f"{java} is Java {major}; Kafka {settings.kafka_version} needs Java {MIN_JAVA}+ "
            "(install a newer JDK or set FLEETPULSE_BROKER__JAVA to one)",
        )
    return java


def find_mvn(settings: BrokerSettings, which: Which = shutil.which) -> str:
    mvn = which(settings.mvn)
    if mvn is None:
        raise ToolMissingError(
            "mvn",
            f"Maven ({settings.mvn!r}) not found on PATH: it fetches Kafka {settings.kafka_version} "
            "from Maven Central on the first start (`apt-get install maven`), "
            "or set FLEETPULSE_BROKER__MVN to its path",
        )
    return mvn


def libs_dir(settings: BrokerSettings) -> Path:
    return settings.cache_dir / settings.kafka_version / "libs"


def main_jar_name(settings: BrokerSettings) -> str:
    return f"kafka_{settings.scala_version}-{settings.kafka_version}.jar"


def is_complete(settings: BrokerSettings) -> bool:
    libs = libs_dir(settings)
    return (libs / COMPLETE_MARKER).is_file() and (libs / main_jar_name(settings)).is_file()


def classpath(settings: BrokerSettings) -> str:
    """A java ``-cp`` value for every jar in the cache (java expands the ``*``)."""
    return f"{libs_dir(settings)}/*"


def mvn_output_summary(output: str, max_lines: int = 20) -> str:
    """The useful end of Maven's output: its error lines without the generic help text."""
    lines = [_ANSI.sub("", line).rstrip().removesuffix(" -> [Help 1]") for line in output.splitlines()]
    errors = [
        line
        for line in lines
        if line.startswith("[ERROR] ") and not line[len("[ERROR] ") :].startswith(_MVN_BOILERPLATE)
    ]
    kept = errors or [line for line in lines if line]
    return "\n".join(kept[-max_lines:])


def ensure_jars(
    settings: BrokerSettings,
    *,
    which: Which = shutil.which,
    run: Runner = run_captured,
    pom: Path = POM,
    on_fetch: Callable[[str], None] = lambda message: None,
) -> Path:
    """The libs directory holding Kafka and its dependencies, fetched with Maven if not cached."""
    libs = libs_dir(settings)
    if is_complete(settings):
        return libs
    mvn = find_mvn(settings, which)
    version_dir = libs.parent
    version_dir.mkdir(parents=True, exist_ok=True)
    on_fetch(f"fetching Kafka {settings.kafka_version} with Maven into {libs} (first start only)")
    staging = Path(tempfile.mkdtemp(prefix=".libs-", dir=version_dir))
    try:
        argv = [
            mvn,
            "-q",
            "-B",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={staging}",
            "-DincludeScope=runtime",
            f"-Dkafka.version={settings.kafka_version}",
            f"-Dscala.binary.version={settings.scala_version}",
        ]
        try:
            result = run(argv, settings.fetch_timeout_s)
        except subprocess.TimeoutExpired as exc:
            raise JarResolutionError(
                f"Maven did not fetch Kafka {settings.kafka_version} within {settings.fetch_timeout_s:.0f} s "
                "(raise FLEETPULSE_BROKER__FETCH_TIMEOUT_S on a slow network)"
            ) from exc
        except OSError as exc:
            raise JarResolutionError(f"could not run {mvn}: {exc}") from exc
        if result.returncode != 0:
            raise JarResolutionError(
                f"Maven could not resolve Kafka {settings.kafka_version} (scala {settings.scala_version}, "
                f"exit code {result.returncode}); check the version and network access to Maven Central:",
                mvn_output_summary(result.stdout or ""),
            )
        if not (staging / main_jar_name(settings)).is_file():
            raise JarResolutionError(
                f"Maven succeeded but {main_jar_name(settings)} is not among the fetched jars in {staging}",
                mvn_output_summary(result.stdout or ""),
            )
        (staging / COMPLETE_MARKER).write_text(f"{main_jar_name(settings)}\n")
        _publish(staging, libs)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return libs


def _publish(staging: Path, libs: Path) -> None:
    """Move the finished staging dir into place; a concurrent fetch that won the race is fine."""
    if libs.exists() and not (libs / COMPLETE_MARKER).is_file():
        shutil.rmtree(libs)  # leftover of an older, incomplete layout
    try:
        staging.rename(libs)
    except OSError:
        if not (libs / COMPLETE_MARKER).is_file():
            raise
