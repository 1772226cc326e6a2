"""deploy/grafana: every panel's PromQL parses (the real promtool) and names only metrics the parts export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from prometheus_client import generate_latest

from tests.deploy.exported import exported_names, registries, scraped_names
from tests.deploy.panels import DASHBOARDS, GRAFANA, load, missing, panel_metrics, targets
from tests.deploy.promtool import run
from tests.deploy.test_compose import SERVICES


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
    unexported = missing(panel_metrics([path]), exported_names())
    assert not unexported, f"panels query metrics no part exports: {unexported}"


def test_a_metric_no_part_exports_is_reported_missing_from_a_scrape(tmp_path: Path) -> None:
    """The scrape test's check can fail: a panel naming a made-up metric is reported, with its panel."""
    texts = [generate_latest(r).decode() for r in registries().values()]
    present = scraped_names(texts)
    assert "fleetpulse_archiver_flush_duration_seconds_bucket" in present  # a histogram's samples
    assert "fleetpulse_detect_events_total" in present  # a counter's
    panel = {"title": "made up", "targets": [{"expr": "rate(fleetpulse_made_up_events_total[5m])"}]}
    board = load(DASHBOARDS[0])
    board["panels"] = [*board["panels"], panel]
    (tmp_path / "board.json").write_text(json.dumps(board))
    assert missing(panel_metrics([tmp_path / "board.json"]), present) == [
        ("board", "made up", "fleetpulse_made_up_events_total")
    ]
    # and a part whose scrape lacks a family the panels name (here: no archiver at all)
    without = scraped_names(t for t in texts if "fleetpulse_archiver_" not in t)
    assert ("pipeline", "Archiver lag (records)", "fleetpulse_archiver_lag_records") in missing(
        panel_metrics(), without
    )


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
