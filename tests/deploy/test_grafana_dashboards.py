"""deploy/grafana: every panel's PromQL parses (the real promtool) and names only metrics the parts export."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.exported import exported_names
from tests.deploy.promtool import run
from tests.deploy.test_compose import SERVICES

GRAFANA = Path(__file__).resolve().parents[2] / "deploy" / "grafana"
DASHBOARDS = sorted((GRAFANA / "dashboards").glob("*.json"))
METRIC = re.compile(r"\bfleetpulse_[a-z0-9_]+\b")


def load(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def targets(dashboard: dict[str, Any]) -> list[tuple[str, str]]:
    """(panel title, expr) of every query of every panel."""
    return [(p["title"], t["expr"]) for p in dashboard["panels"] for t in p.get("targets", [])]


def test_the_three_dashboards_are_there_with_distinct_uids() -> None:
    titles = {load(p)["title"] for p in DASHBOARDS}
    assert {"fleetpulse / Fleet health", "fleetpulse / Detection", "fleetpulse / Pipeline"} <= titles
    uids = [load(p)["uid"] for p in DASHBOARDS]
    assert len(set(uids)) == len(uids)


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.stem)
def test_every_panel_query_parses_with_promtool(path: Path, tmp_path: Path) -> None:
    queries = targets(load(path))
    assert queries and all(expr.strip() for _, expr in queries)
    # promtool parses PromQL when it checks rules: one recording rule per panel query
    rules = {
        "groups": [
            {
                "name": path.stem,
                "rules": [{"record": f"panel:{n}", "expr": expr} for n, (_, expr) in enumerate(queries)],
            }
        ]
    }
    (tmp_path / "panels.yml").write_text(yaml.safe_dump(rules))
    out = run("check", "rules", tmp_path / "panels.yml").stdout
    assert f"SUCCESS: {len(queries)} rules found" in out


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.stem)
def test_every_metric_a_panel_names_is_exported(path: Path) -> None:
    exported = exported_names()
    missing = {
        (title, m) for title, expr in targets(load(path)) for m in METRIC.findall(expr) if m not in exported
    }
    assert not missing, f"panels query metrics no part exports: {sorted(missing)}"


def test_panels_use_the_provisioned_datasource_and_do_not_overlap() -> None:
    source = yaml.safe_load((GRAFANA / "provisioning" / "datasources" / "prometheus.yml").read_text())
    uid = source["datasources"][0]["uid"]
    for path in DASHBOARDS:
        taken: set[tuple[int, int]] = set()
        for panel in load(path)["panels"]:
            assert panel["datasource"]["uid"] == uid, (path.stem, panel["title"])
            g = panel["gridPos"]
            cells = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
            assert not cells & taken, (path.stem, panel["title"])
            assert g["x"] + g["w"] <= 24
            taken |= cells


def test_compose_grafana_provisions_these_files() -> None:
    grafana = SERVICES["grafana"]
    assert "./deploy/grafana/provisioning:/etc/grafana/provisioning:ro" in grafana["volumes"]
    provider = yaml.safe_load((GRAFANA / "provisioning" / "dashboards" / "fleetpulse.yml").read_text())
    path = provider["providers"][0]["options"]["path"]
    assert f"./deploy/grafana/dashboards:{path}:ro" in grafana["volumes"]
    assert all(str(p).startswith("127.0.0.1:") for p in grafana["ports"])
