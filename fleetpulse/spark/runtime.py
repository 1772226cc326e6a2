"""pyspark in a cached folder of its own, and Spark SQL over the lake run in a child process that has it.

pyspark is not a project dependency: installed beside great-expectations it is imported by it, and
its connect module then exits any ``python -c`` process that lacks grpc (the tests start parts that way)
and slows every import of great-expectations by ~1 s. And no Delta Lake release supports Spark 4.3 yet, so the Spark that reads the lake is
pinned here, fetched once like the Delta and Kafka jars (temp folder, rename, ``.complete``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from fleetpulse.maven import COMPLETE_MARKER, Runner, publish_dir, run_captured
from fleetpulse.spark.session import SparkSetupError

PYSPARK_VERSION = "4.2.1"  # the newest Spark line Delta Lake 4.4 is built for
DEFAULT_SPARK_CACHE = Path("~/.cache/fleetpulse/spark").expanduser()


def installer(target: Path) -> list[str]:
    """uv when it is at hand (the project's own installer, with its cache), else pip."""
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    if Path(uv).is_file():
        return [uv, "pip", "install", "--quiet", "--python", sys.executable, "--target", str(target)]
    return [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(target)]


def pyspark_site(
    version: str = PYSPARK_VERSION,
    *,
    cache_dir: Path = DEFAULT_SPARK_CACHE,
    run: Runner = run_captured,
    on_fetch: Callable[[str], None] = lambda message: None,
) -> Path:
    """A folder holding pyspark ``version`` and py4j, installed on first use."""
    site = cache_dir.expanduser().absolute() / f"pyspark-{version}"
    if (site / COMPLETE_MARKER).is_file():
        return site
    site.parent.mkdir(parents=True, exist_ok=True)
    on_fetch(f"installing pyspark {version} into {site} (first use only)")
    staging = Path(tempfile.mkdtemp(prefix=f".{site.name}-", dir=site.parent))
    try:
        try:
            result = run([*installer(staging), f"pyspark=={version}"], 1800.0)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SparkSetupError(f"could not install pyspark {version}: {exc}") from exc
        if result.returncode != 0 or not (staging / "pyspark").is_dir():
            tail = (result.stdout or "").strip().splitlines()[-1:] or ["no output"]
            raise SparkSetupError(f"could not install pyspark {version} from PyPI: {tail[0]}")
        (staging / COMPLETE_MARKER).write_text(f"pyspark {version}\n")
        publish_dir(staging, site)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return site


def spark_sql(
    queries: Mapping[str, str],
    out: Path,
    *,
    conf: Mapping[str, str] | None = None,
    driver_memory: str = "1g",
    timeout_s: float = 900.0,
    site: Path | None = None,
) -> dict[str, Path]:
    """Run each named Spark SQL query (``delta.`<table path>``` reads a lake table) in a child process with
    the cached pyspark; each result lands in ``out/<name>.parquet``."""
    site = site or pyspark_site()
    out.mkdir(parents=True, exist_ok=True)
    spec = out / "spark-queries.json"
    spec.write_text(
        json.dumps({"queries": dict(queries), "conf": dict(conf or {}), "driver_memory": driver_memory})
    )
    paths = [str(site), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "fleetpulse.spark.sql", str(spec)],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise SparkSetupError(f"Spark SQL did not finish within {timeout_s:.0f} s") from exc
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        raise SparkSetupError(
            f"Spark SQL failed (exit {proc.returncode}): {lines[-1] if lines else 'no output'}"
        )
    return {name: out / f"{name}.parquet" for name in queries}
