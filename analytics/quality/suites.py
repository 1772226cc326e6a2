"""The versioned expectation suites, one JSON file per lake table under ``analytics/quality/suites/``.

Files use great-expectations' suite JSON shape plus ``meta.fleetpulse`` (table, suite_version).
Runtime values enter as GX suite parameters: ``max_ts_ms`` (now + tolerance) and ``known_hosts``;
expectations marked ``meta.fleetpulse.requires`` are dropped when that parameter is not given.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analytics.errors import QualityError

SUITES_DIR = Path(__file__).parent / "suites"
PARAMETERS = ("max_ts_ms", "known_hosts")


@dataclass(frozen=True)
class SuiteSpec:
    """A suite as stored: its table, version and raw expectation dicts."""

    table: str
    version: int
    expectations: tuple[dict[str, Any], ...]
    raw: dict[str, Any]

    def requires(self, expectation: dict[str, Any]) -> str | None:
        return ((expectation.get("meta") or {}).get("fleetpulse") or {}).get("requires")

    def expectations_for(self, available: frozenset[str]) -> list[dict[str, Any]]:
        """The expectations whose optional parameters are ``available``."""
        out = []
        for e in self.expectations:
            needed = self.requires(e)
            if needed is None or needed in available:
                out.append(e)
        return out

    def columns_checked_against(self, parameter: str) -> tuple[str, ...]:
        """The columns whose values an expectation compares with the runtime ``parameter`` (a value set)."""
        out = []
        for e in self.expectations:
            kwargs = e.get("kwargs") or {}
            if kwargs.get("value_set") == {"$PARAMETER": parameter} and kwargs.get("column"):
                out.append(kwargs["column"])
        return tuple(dict.fromkeys(out))

    @property
    def column_set(self) -> list[str]:
        for e in self.expectations:
            if e["type"] == "expect_table_columns_to_match_set":
                return list(e["kwargs"]["column_set"])
        return []


def suite_path(table: str, suites_dir: Path | None = None) -> Path:
    return (suites_dir or SUITES_DIR) / f"{table}.json"


def load_suite(table: str, suites_dir: Path | None = None) -> SuiteSpec:
    """Load and sanity-check one suite; QualityError says which file and what is wrong."""
    path = suite_path(table, suites_dir)
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        raise QualityError(f"no expectation suite for table {table!r} at {path}", table) from None
    except json.JSONDecodeError as exc:
        raise QualityError(f"suite {path} is not valid JSON: {exc}", table) from exc
    meta = (raw.get("meta") or {}).get("fleetpulse") or {}
    if raw.get("name") != table or meta.get("table") != table:
        raise QualityError(f"suite {path} is named {raw.get('name')!r}, expected {table!r}", table)
    expectations = raw.get("expectations")
    if not isinstance(expectations, list) or not expectations:
        raise QualityError(f"suite {path} has no expectations", table)
    for i, e in enumerate(expectations):
        if (
            not isinstance(e, dict)
            or not isinstance(e.get("type"), str)
            or not isinstance(e.get("kwargs"), dict)
        ):
            raise QualityError(f"suite {path}: expectation #{i} needs a 'type' and 'kwargs'", table)
        for value in e["kwargs"].values():
            if isinstance(value, dict) and "$PARAMETER" in value and value["$PARAMETER"] not in PARAMETERS:
                raise QualityError(
                    f"suite {path}: expectation #{i} uses unknown parameter {value['$PARAMETER']!r}", table
                )
    return SuiteSpec(table, int(meta.get("suite_version", 1)), tuple(expectations), raw)


def suite_tables(suites_dir: Path | None = None) -> list[str]:
    """Tables that have a suite file."""
    return sorted(p.stem for p in (suites_dir or SUITES_DIR).glob("*.json"))
