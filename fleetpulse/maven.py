"""Find java and Maven, and fetch a set of jars with Maven into a cache directory, once.

Shared by the local Kafka broker (``fleetpulse.broker.jars``) and Spark's Delta Lake jars
(``fleetpulse.spark``). A cache directory is filled in a temporary sibling and renamed into
place with a ``.complete`` marker, so an interrupted download never leaves a half cache, and
later runs need neither the network nor Maven.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ground.errors import FleetpulseError

MIN_JAVA = 17
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


class ToolMissingError(FleetpulseError):
    """``java`` or ``mvn`` is missing from PATH, or Java is older than needed."""

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(message)
        self.tool = tool


class JarResolutionError(FleetpulseError):
    """Maven failed to resolve the jars; ``output_tail`` holds the end of its output."""

    def __init__(self, message: str, output_tail: str = "") -> None:
        super().__init__(f"{message}\n{output_tail}" if output_tail else message)
        self.output_tail = output_tail


@dataclass(frozen=True)
class JarSet:
    """What to fetch and where: a pom, its ``-D`` properties and the cache directory to fill.

    ``what`` names the set in messages ("Kafka 4.4.0 for Scala 2.13"); ``main_jar`` must be
    among the fetched jars, so a pom that resolves to nothing useful is still an error.
    """

    what: str
    pom: Path
    libs: Path
    main_jar: str
    properties: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 900.0
    timeout_fix: str = "raise the fetch timeout on a slow network"
    first_use: str = "first use"

    def is_complete(self) -> bool:
        return (self.libs / COMPLETE_MARKER).is_file() and (self.libs / self.main_jar).is_file()


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


def require_java(
    java: str, needed_by: str, fix: str, which: Which = shutil.which, run: Runner = run_captured
) -> str:
    """Absolute path of a java >= 17, or ToolMissingError saying who needs it and how to get one.

    ``fix`` completes "…, or <fix>" (e.g. "set FLEETPULSE_BROKER__JAVA to its path").
    """
    found = which(java)
    if found is None:
        raise ToolMissingError(
            "java",
            f"java ({java!r}) not found on PATH: {needed_by} needs Java {MIN_JAVA}+ "
            f"(e.g. `apt-get install openjdk-{MIN_JAVA}-jre-headless`), or {fix}",
        )
    try:
        result = run([found, "-version"], 30.0)
        major = java_major_version(result.stdout or "")
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        raise ToolMissingError("java", f"could not tell the version of {found}: {exc}") from exc
    if major < MIN_JAVA:
        raise ToolMissingError(
            "java",
            f"{found} is Java {major}; {needed_by} needs Java {MIN_JAVA}+ (install a newer JDK, or {fix})",
        )
    return found


def require_mvn(mvn: str, what: str, fix: str, which: Which = shutil.which) -> str:
    """Absolute path of Maven, or ToolMissingError saying what it would have fetched."""
    found = which(mvn)
    if found is None:
        raise ToolMissingError(
            "mvn",
            f"Maven ({mvn!r}) not found on PATH: it fetches {what} from Maven Central once "
            f"(`apt-get install maven`), or {fix}",
        )
    return found


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


def fetch_jars(
    jars: JarSet,
    mvn: str,
    *,
    run: Runner = run_captured,
    on_fetch: Callable[[str], None] = lambda message: None,
) -> Path:
    """Fill ``jars.libs`` with the pom's runtime dependencies unless it is complete already."""
    if jars.is_complete():
        return jars.libs
    parent = jars.libs.parent
    parent.mkdir(parents=True, exist_ok=True)
    on_fetch(f"fetching {jars.what} with Maven into {jars.libs} ({jars.first_use} only)")
    staging = Path(tempfile.mkdtemp(prefix=f".{jars.libs.name}-", dir=parent))
    try:
        argv = [
            mvn,
            "-q",
            "-B",
            "-f",
            str(jars.pom),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={staging}",
            "-DincludeScope=runtime",
            *(f"-D{key}={value}" for key, value in jars.properties.items()),
        ]
        try:
            result = run(argv, jars.timeout_s)
        except subprocess.TimeoutExpired as exc:
            raise JarResolutionError(
                f"Maven did not fetch {jars.what} within {jars.timeout_s:.0f} s ({jars.timeout_fix})"
            ) from exc
        except OSError as exc:
            raise JarResolutionError(f"could not run {mvn}: {exc}") from exc
        if result.returncode != 0:
            raise JarResolutionError(
                f"Maven could not resolve {jars.what} (exit code {result.returncode}); "
                "check the version and network access to Maven Central:",
                mvn_output_summary(result.stdout or ""),
            )
        if not (staging / jars.main_jar).is_file():
            raise JarResolutionError(
                f"Maven succeeded but {jars.main_jar} is not among the fetched jars in {staging}",
                mvn_output_summary(result.stdout or ""),
            )
        (staging / COMPLETE_MARKER).write_text(f"{jars.main_jar}\n")
        publish_dir(staging, jars.libs)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return jars.libs


def publish_dir(staging: Path, libs: Path) -> None:
    """Move the finished staging dir into place; a concurrent fetch that won the race is fine."""
    if libs.exists() and not (libs / COMPLETE_MARKER).is_file():
        shutil.rmtree(libs)  # leftover of an older, incomplete layout
    try:
        staging.rename(libs)
    except OSError:
        if not (libs / COMPLETE_MARKER).is_file():
            raise
