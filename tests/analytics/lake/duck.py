"""DuckDB as a second reader of the lake: its delta extension from the ``duckdb_extension_delta`` package.

The extension is loaded from the wheel's file (``LOAD '<path>'``), never downloaded, so the tests
run offline. ``delta_scan`` follows the Delta log itself: a table it reads the same as ``Lake.scan``
is readable by any engine that speaks Delta, not only by fleetpulse.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import duckdb_extension_delta


def delta_extension() -> Path:
    """The delta extension built for the installed DuckDB (the wheel ships one folder per DuckDB version)."""
    found = sorted(Path(duckdb_extension_delta.__file__).parent.glob("extensions/*/delta.duckdb_extension"))
    assert found, "duckdb_extension_delta ships no delta.duckdb_extension"
    for path in found:
        if path.parent.name == f"v{duckdb.__version__}":
            return path
    return found[-1]


def connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(f"LOAD '{delta_extension()}'")
    return con


def scan_ids(con: duckdb.DuckDBPyConnection, uri: str) -> tuple[int, set[tuple[str, str]]]:
    """Row count and ``(event_id, date)`` set of the Delta table at ``uri``, as DuckDB's ``delta_scan`` reads it."""
    rows = con.execute("SELECT event_id, CAST(date AS VARCHAR) FROM delta_scan(?)", [uri]).fetchall()
    return len(rows), {(r[0], r[1]) for r in rows}


def count(con: duckdb.DuckDBPyConnection, uri: str) -> int:
    found = con.execute("SELECT count(*) FROM delta_scan(?)", [uri]).fetchone()
    assert found is not None
    return int(found[0])
