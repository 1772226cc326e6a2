"""The Grafana dashboards' panels and the fleetpulse metrics their queries name (shared by the deploy and scrape tests)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

GRAFANA = Path(__file__).resolve().parents[2] / "deploy" / "grafana"
DASHBOARDS = sorted((GRAFANA / "dashboards").glob("*.json"))
METRIC = re.compile(r"\bfleetpulse_[a-z0-9_]+\b")

Named = tuple[str, str, str]  # (dashboard file stem, panel title, metric)


def load(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def targets(dashboard: dict[str, Any]) -> list[tuple[str, str]]:
    """(panel title, expr) of every query of every panel."""
    return [(p["title"], t["expr"]) for p in dashboard["panels"] for t in p.get("targets", [])]


def panel_metrics(paths: Iterable[Path] = DASHBOARDS) -> set[Named]:
    """Every fleetpulse metric a panel's query names, with the dashboard and panel that name it."""
    return {
        (p.stem, title, m) for p in paths for title, expr in targets(load(p)) for m in METRIC.findall(expr)
    }


def missing(named: Iterable[Named], present: set[str]) -> list[Named]:
    """The named metrics not in ``present`` (sample names), sorted."""
    return sorted(n for n in named if n[2] not in present)
