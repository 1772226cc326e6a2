"""Benchmark the heavy analytics queries: Polars vs DuckDB vs pandas vs a bare pyarrow read.

Generates a narrow host_sampled lake table (≥ 100M rows by default) with numpy/pyarrow and writes it
the way the archiver does: the table's own column types (``schemas.arrow``), a Delta table appended
through ``ground.delta`` with the default ``LakeSettings`` (zstd, 128 Ki-row groups), partitioned by
``date``, one commit per flush. Like the real table it has no ``fabric`` column: every engine joins
the inventory for it. Each engine reads the table through the Delta log (``pl.scan_delta``, DuckDB's
``delta_scan``, ``DeltaTable.to_pandas``); ``polars-parquet`` runs Polars' query with
``pl.scan_parquet`` over the same files, to price the Delta reader, and ``pyarrow-read`` reads
only the needed columns of those files, the floor. Each (query, engine) runs in a fresh subprocess
several times, recording the wall time of the query and the process's peak RSS (VmHWM). Results
are checked to agree.

    .venv/bin/python bench/bench_analytics.py --rows 100_000_000 --reps 3 \
        --data /tmp/fleetpulse-bench --md docs/benchmarks/analytics-run.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DAY_MS = 86_400_000
START_MS = 1_735_689_600_000  # 2025-01-01
WEEK_MS = 7 * DAY_MS
QUANTILES = (0.5, 0.9, 0.99)
ENGINES = ("polars", "polars-streaming", "polars-parquet", "duckdb", "pandas", "pyarrow-read")
QUERIES = ("fabric_percentiles", "hazard_by_age")
# Columns each query needs: the bare pyarrow read of exactly these is the floor.
NEEDED = {
    "fabric_percentiles": ["host_id", "step_time_ms", "bus_bw_gbps"],
    "hazard_by_age": ["host_id", "ts", "step_time_ms"],
}
SAMPLE_COLUMNS = ("host_id", "cluster", "ts", "step_time_ms", "bus_bw_gbps")  # of host_sampled's
TABLE = "host_sampled"


# ---------------------------------------------------------------- data generation
def generate(data: Path, rows: int, hosts: int, interval_s: int, seed: int = 7) -> dict[str, Any]:
    """Write the Delta table ``data/host_sampled`` and ``data/inventory.parquet``; return stats."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ground.delta import DATE, DeltaTables, with_date
    from ground.settings.lake import LakeSettings
    from schemas.arrow import table_schema

    rng = np.random.default_rng(seed)
    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    settings = LakeSettings()
    lake = DeltaTables(data, compression=settings.compression, row_group_size=settings.row_group_size)
    schema = pa.schema([table_schema("HostSampled").field(c) for c in SAMPLE_COLUMNS])
    names = pa.array([f"host-{i:05d}" for i in range(hosts)])
    clusters = pa.array(["rsc-roce", "rsc-ib"])
    fabrics = pa.array(["roce", "infiniband"])
    host_cluster = (np.arange(hosts) >= hosts // 2).astype(np.int32)  # first half RoCE, second half IB
    install = START_MS - rng.uniform(0.0, 1.0, hosts) * 400 * DAY_MS  # all in service before the data starts
    host_offset = rng.normal(0, 0.003, hosts)
    slow = rng.random(hosts) < 0.03
    base_step = np.where(host_cluster == 0, 1000.0, 990.0) * (1 + host_offset) * np.where(slow, 1.12, 1.0)
    base_bw = np.where(host_cluster == 0, 360.0, 372.0) / np.where(slow, 1.12, 1.0)
    pq.write_table(
        pa.table(
            {
                "host_id": names,
                "cluster": pa.DictionaryArray.from_arrays(host_cluster, clusters).cast(pa.string()),
                "fabric": pa.DictionaryArray.from_arrays(host_cluster, fabrics).cast(pa.string()),
                "install_ts": pa.array(install.astype(np.int64)),
            }
        ),
        data / "inventory.parquet",
    )
    steps = -(-rows // hosts)  # timestamps; each has one sample per host (ts-major, like an archive)
    per_day = DAY_MS // (interval_s * 1000)
    t0 = time.perf_counter()
    written, step0 = 0, 0
    chunk_steps = max(1, 4_000_000 // hosts)
    while step0 < steps:
        n_steps = min(chunk_steps, steps - step0, per_day - step0 % per_day)
        ts = START_MS + (step0 + np.arange(n_steps, dtype=np.int64)) * interval_s * 1000
        h = np.tile(np.arange(hosts, dtype=np.int32), n_steps)
        n = h.size
        table = pa.table(
            {
                "host_id": pa.DictionaryArray.from_arrays(h, names).cast(pa.string()),
                "cluster": pa.DictionaryArray.from_arrays(host_cluster[h], clusters).cast(pa.string()),
                "ts": np.repeat(ts, hosts),
                "step_time_ms": (base_step[h] * (1 + rng.standard_normal(n, dtype=np.float32) * 0.01)).astype(
                    np.float32
                ),
                "bus_bw_gbps": (base_bw[h] * (1 + rng.standard_normal(n, dtype=np.float32) * 0.02)).astype(
                    np.float32
                ),
            }
        ).cast(schema)
        # The archiver's writer and settings (a commit per flush, its next offset as the app version),
        # so the bench reads the layout the lake really has.
        lake.append(
            TABLE, with_date(table), partition_by=[DATE], versions={"bench:fleet.samples:0": written + n}
        )
        written, step0 = written + n, step0 + n_steps
    files = [Path(f) for f in table_files(data)]
    return {
        "rows": written,
        "hosts": hosts,
        "files": len(files),
        "bytes": sum(f.stat().st_size for f in files),
        "seconds": time.perf_counter() - t0,
        "layout": f"Delta, {settings.compression}, {settings.row_group_size:,}-row groups, string columns",
    }


# ---------------------------------------------------------------- the queries, per engine
def table_files(data: Path) -> list[str]:
    """The Parquet files of the table's current version, as its Delta log lists them."""
    from deltalake import DeltaTable

    return DeltaTable(str(data / TABLE)).file_uris()


def run_polars(query: str, data: Path, streaming: bool, files: list[str] | None = None) -> Any:
    """The jobs' own query functions over ``pl.scan_delta``, or ``pl.scan_parquet`` of ``files``."""
    import polars as pl

    from analytics.jobs.early_life import sample_age_profile
    from analytics.jobs.fabric import sample_percentiles

    engine = "streaming" if streaming else "auto"
    if files is None:
        samples = pl.scan_delta(str(data / TABLE))
    else:
        samples = pl.scan_parquet(files, hive_partitioning=True)
    inv = pl.scan_parquet(data / "inventory.parquet")
    if query == "fabric_percentiles":  # the fabric job's own function
        out = sample_percentiles(samples, inv).collect(engine=engine)
        return {
            r["fabric"]: [r[f"step_time_ms_p{round(q * 100)}"] for q in QUANTILES] for r in out.to_dicts()
        }
    out = sample_age_profile(samples, inv, WEEK_MS / DAY_MS).collect(engine=engine)  # the early-life job's
    return _hazard_digest(out["samples"].to_list(), out["step_time_ms_mean"].to_list())


def duckdb_with_delta() -> Any:
    """A DuckDB connection with the delta extension from its PyPI package loaded (the tests' loader)."""
    from tests.analytics.lake.duck import connect

    return connect()


def run_duckdb(query: str, data: Path, con: Any) -> Any:
    src = f"delta_scan('{data / TABLE}')"
    if query == "fabric_percentiles":
        qs = ", ".join(f"quantile_cont(step_time_ms, {q}) AS p{round(q * 100)}" for q in QUANTILES)
        bw = ", ".join(f"quantile_cont(bus_bw_gbps, {q}) AS b{round(q * 100)}" for q in QUANTILES)
        rows = con.execute(
            f"SELECT i.fabric, count(*), count(DISTINCT host_id) AS hosts, {qs}, avg(step_time_ms), {bw}, "
            f"avg(bus_bw_gbps) FROM {src} s JOIN read_parquet('{data}/inventory.parquet') i USING (host_id) "
            "GROUP BY i.fabric ORDER BY i.fabric"
        ).fetchall()
        return {r[0]: list(r[3:6]) for r in rows}
    rows = con.execute(
        f"SELECT i.fabric, (s.ts - i.install_ts) // {WEEK_MS} AS age_week, count(*) AS samples, avg(step_time_ms) "
        f"FROM {src} s JOIN read_parquet('{data}/inventory.parquet') i USING (host_id) "
        "GROUP BY 1, 2 ORDER BY 1, 2"
    ).fetchall()
    return _hazard_digest([r[2] for r in rows], [r[3] for r in rows])


def run_pandas(query: str, data: Path) -> Any:
    import pandas as pd
    from deltalake import DeltaTable

    inv = pd.read_parquet(data / "inventory.parquet")
    df = DeltaTable(str(data / TABLE)).to_pandas(columns=NEEDED[query])
    if query == "fabric_percentiles":
        df = df.merge(inv[["host_id", "fabric"]], on="host_id")
        g = df.groupby("fabric", observed=True)
        agg = g[["step_time_ms", "bus_bw_gbps"]].quantile(list(QUANTILES))
        _ = (g.size(), g["host_id"].nunique(), g[["step_time_ms", "bus_bw_gbps"]].mean())
        return {str(f): [float(agg.loc[(f, q), "step_time_ms"]) for q in QUANTILES] for f in sorted(g.groups)}
    df["host_id"] = df["host_id"].astype(str)
    df = df.merge(inv[["host_id", "fabric", "install_ts"]], on="host_id")
    df["age_week"] = (df["ts"] - df["install_ts"]) // WEEK_MS
    out = df.groupby(["fabric", "age_week"]).agg(samples=("ts", "size"), step=("step_time_ms", "mean"))
    out = out.sort_index()
    return _hazard_digest(out["samples"].tolist(), out["step"].tolist())


def run_pyarrow_read(query: str, files: list[str]) -> Any:
    import pyarrow.dataset as ds

    return {"rows": ds.dataset(files, format="parquet").to_table(columns=NEEDED[query]).num_rows}


def _hazard_digest(samples: list[int], step: list[float]) -> dict[str, float]:
    return {"bins": len(samples), "samples": int(sum(samples)), "step_mean": float(sum(step) / len(step))}


def _peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM; unlike ru_maxrss it does not inherit the parent's peak across exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(engine: str, query: str, data: Path) -> None:
    """Run one query in this fresh process; print elapsed seconds, peak RSS and a result digest.

    The engine's modules are imported (DuckDB's extension loaded, the file list of the Parquet
    readers read from the Delta log) before the clock starts: the query is timed, not the set-up.
    """
    files = table_files(data) if engine in ("polars-parquet", "pyarrow-read") else None
    con = None
    if engine.startswith("polars"):
        import deltalake  # noqa: F401  (pl.scan_delta's, imported on first use)
        import polars  # noqa: F401

        import analytics.jobs.early_life  # noqa: F401
        import analytics.jobs.fabric  # noqa: F401
    elif engine == "duckdb":
        con = duckdb_with_delta()
    elif engine == "pandas":
        import pandas  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    else:
        import pyarrow.dataset  # noqa: F401
    t = time.perf_counter()
    if engine.startswith("polars"):
        result = run_polars(query, data, streaming=engine == "polars-streaming", files=files)
    elif engine == "duckdb":
        result = run_duckdb(query, data, con)
    elif engine == "pandas":
        result = run_pandas(query, data)
    else:
        result = run_pyarrow_read(query, files or [])
    elapsed = time.perf_counter() - t
    print(json.dumps({"seconds": elapsed, "peak_rss_mb": _peak_rss_mb(), "result": result}))


# ---------------------------------------------------------------- driver
def measure(engine: str, query: str, data: Path, reps: int, timeout: float) -> dict[str, Any]:
    runs = []
    for _ in range(reps):
        proc = subprocess.run(
            [sys.executable, __file__, "--child", engine, query, "--data", str(data)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if proc.returncode != 0:
            return {"engine": engine, "query": query, "error": proc.stderr.strip().splitlines()[-1:]}
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    times = sorted(r["seconds"] for r in runs)
    return {
        "engine": engine,
        "query": query,
        "median_s": times[len(times) // 2],
        "min_s": times[0],
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
        "result": runs[0]["result"],
    }


def agree(results: list[dict[str, Any]]) -> list[str]:
    """Disagreements between engines on the same query (empty when all agree)."""
    problems = []
    for query in QUERIES:
        got = [r for r in results if r["query"] == query and "result" in r and r["engine"] != "pyarrow-read"]
        for r in got[1:]:
            a, b = got[0]["result"], r["result"]
            if query == "fabric_percentiles":
                ok = a.keys() == b.keys() and all(
                    abs(x - y) <= 1e-3 * abs(x) for f in a for x, y in zip(a[f], b[f], strict=True)
                )
            else:
                ok = (
                    a["bins"] == b["bins"]
                    and a["samples"] == b["samples"]
                    and abs(a["step_mean"] - b["step_mean"]) < 1e-3
                )
            if not ok:
                problems.append(f"{query}: {got[0]['engine']} {a} != {r['engine']} {b}")
    return problems


def markdown(
    gen: dict[str, Any], results: list[dict[str, Any]], args: argparse.Namespace, problems: list[str]
) -> str:
    by = {(r["query"], r["engine"]): r for r in results}
    lines = [
        "# Analytics benchmark: Polars vs DuckDB vs pandas vs a bare pyarrow read",
        "",
        f"Command: `{' '.join(['python', *sys.argv])}`",
        "",
        f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, shared with other jobs (noisy).",
        f"Data: {gen['rows']:,} rows, {gen['hosts']:,} hosts, a Delta table of {gen['files']} Parquet files, "
        f"{gen['bytes'] / 1e9:.2f} GB on disk ({gen.get('layout', 'layout not recorded')}; "
        f"generated in {gen.get('seconds', float('nan')):.0f} s). "
        f"Each cell: median of {args.reps} runs, each in a fresh process; peak RSS = max VmHWM of the query process.",
        "",
        "| query | engine | median s | min s | peak RSS MB | vs Polars |",
        "|---|---|---|---|---|---|",
    ]
    for q in QUERIES:
        pol = by.get((q, "polars"), {}).get("median_s")
        for e in args.engines:
            r = by.get((q, e))
            if r is None:
                continue
            if "error" in r:
                lines.append(f"| {q} | {e} | error: {r['error']} | | | |")
                continue
            ratio = f"{r['median_s'] / pol:.2f}×" if pol else ""
            lines.append(
                f"| {q} | {e} | {r['median_s']:.2f} | {r['min_s']:.2f} | {r['peak_rss_mb']:.0f} | {ratio} |"
            )
    lines += [
        "",
        "## Targets",
        "",
        "| query | Polars engine | Polars / DuckDB (≤ 1.0) | pandas / Polars (≥ 10) | Polars / pyarrow read (≤ 2.0) |",
        "|---|---|---|---|---|",
    ]
    for q in QUERIES:

        def t(e: str, q: str = q) -> float | None:
            return by.get((q, e), {}).get("median_s")

        for pol_engine in ("polars", "polars-streaming"):
            pol, duck, pan, arrow = t(pol_engine), t("duckdb"), t("pandas"), t("pyarrow-read")
            if pol is None:
                continue
            cells = []
            checks = (
                (pol, duck, lambda x: x <= 1.0),
                (pan, pol, lambda x: x >= 10),
                (pol, arrow, lambda x: x <= 2.0),
            )
            for num, den, good in checks:
                cells.append(
                    f"{num / den:.2f} {'met' if good(num / den) else 'MISSED'}" if num and den else "n/a"
                )
            lines.append(f"| {q} | {pol_engine} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## The Delta reader: `pl.scan_delta` vs `pl.scan_parquet` over the same files",
        "",
        "| query | scan_delta median s | scan_parquet median s | scan_delta / scan_parquet |",
        "|---|---|---|---|",
    ]
    for q in QUERIES:
        delta, plain = (by.get((q, e), {}).get("median_s") for e in ("polars", "polars-parquet"))
        if delta and plain:
            lines.append(f"| {q} | {delta:.2f} | {plain:.2f} | {delta / plain:.2f}× |")
    lines += [
        "",
        "Engines agree on the results: " + ("yes" if not problems else "NO: " + "; ".join(problems)),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=Path("/tmp/fleetpulse-bench"))
    p.add_argument("--rows", type=int, default=100_000_000)
    p.add_argument("--hosts", type=int, default=6144)
    p.add_argument("--interval-s", type=int, default=60)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    p.add_argument("--queries", nargs="+", default=list(QUERIES), choices=QUERIES)
    p.add_argument("--regen", action="store_true", help="regenerate the data even if present")
    p.add_argument("--keep", action="store_true", help="keep the generated data afterwards")
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--md", type=Path, help="write the Markdown results here")
    p.add_argument("--child", nargs=2, metavar=("ENGINE", "QUERY"), help=argparse.SUPPRESS)
    args = p.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project, also when not installed
    if args.child:
        child(args.child[0], args.child[1], args.data)
        return
    stamp = args.data / "generated.json"
    gen = json.loads(stamp.read_text()) if stamp.is_file() and not args.regen else None
    if (
        gen is None
        or gen["rows"] < args.rows
        or gen["hosts"] != args.hosts
        or "Delta" not in gen.get("layout", "")
    ):
        print(f"generating {args.rows:,} rows into {args.data} ...", flush=True)
        gen = generate(args.data, args.rows, args.hosts, args.interval_s)
        stamp.write_text(json.dumps(gen))
    print(f"data: {gen}", flush=True)
    results = []
    for q in args.queries:
        for e in args.engines:
            r = measure(e, q, args.data, args.reps, args.timeout)
            results.append(r)
            print(json.dumps({k: v for k, v in r.items() if k != "result"}), flush=True)
    problems = agree(results)
    md = markdown(gen, results, args, problems)
    print(md)
    if args.md:
        args.md.parent.mkdir(parents=True, exist_ok=True)
        args.md.write_text(md)
    if not args.keep:
        shutil.rmtree(args.data, ignore_errors=True)


if __name__ == "__main__":
    main()
