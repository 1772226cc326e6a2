"""deploy/prometheus: the config and alert rules pass the real promtool, and name only exported metrics."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tests.deploy.exported import exported_names
from tests.deploy.promtool import run
from tests.deploy.test_compose import SERVICES, option

PROM = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
METRIC = re.compile(r"\bfleetpulse_[a-z0-9_]+\b")
ALERTS = {
    "FleetpulsePipelineStalled",
    "FleetpulseDetectLagGrowing",
    "FleetpulseArchiverLagGrowing",
    "FleetpulseDlqSurge",
    "FleetpulseTrainHalted",
    "FleetpulseDomainOverBuffer",
    "FleetpulseDeferredWorkOld",
    "FleetpulseAgentSilent",
}


def rules() -> list[dict[str, str]]:
    return [r for g in yaml.safe_load((PROM / "rules.yml").read_text())["groups"] for r in g["rules"]]


def test_the_config_and_its_rules_pass_promtool_check() -> None:
    out = run("check", "config", PROM / "prometheus.yml").stdout
    assert "SUCCESS: 1 rule files found" in out


def test_the_alert_rules_pass_their_unit_tests() -> None:
    run("test", "rules", "rules.test.yml", cwd=PROM)


def test_every_alert_the_operators_asked_for_is_there_and_unit_tested() -> None:
    names = {r["alert"] for r in rules() if "alert" in r}
    assert names >= ALERTS
    tested = set(re.findall(r"alertname: (\w+)", (PROM / "rules.test.yml").read_text()))
    assert names <= tested, f"alerts without a unit test: {sorted(names - tested)}"


def test_rules_name_only_metrics_the_parts_export() -> None:
    recorded = {r["record"] for r in rules() if "record" in r}
    named = {m for r in rules() for m in METRIC.findall(r["expr"])}
    assert named, "no fleetpulse metric in the rules"
    missing = named - exported_names()
    assert not missing, f"rules query metrics no part exports: {sorted(missing)}"
    assert all(name.startswith("fleetpulse:") for name in recorded)


def test_every_rule_says_what_to_do() -> None:
    for rule in rules():
        if "alert" in rule:
            notes = rule["annotations"]  # type: ignore[index]
            assert {"summary", "description", "runbook"} <= set(notes), rule["alert"]
            assert rule["labels"]["severity"] in {"critical", "warning"}  # type: ignore[index]


def test_compose_prometheus_scrapes_each_part_where_it_serves_metrics() -> None:
    prom = SERVICES["prometheus"]
    assert "./deploy/prometheus:/etc/prometheus:ro" in prom["volumes"]
    assert all(str(p).startswith("127.0.0.1:") for p in prom["ports"])
    config = yaml.safe_load((PROM / "prometheus.yml").read_text())
    targets = {
        job["job_name"]: target
        for job in config["scrape_configs"]
        for sc in job["static_configs"]
        for target in sc["targets"]
    }
    for part in ("dispatcher", "archiver", "agent"):
        argv = SERVICES[part]["command"]
        assert option(argv, "--metrics-host") == "0.0.0.0", part  # reachable from the prometheus container
        assert targets[f"fleetpulse-{part}"] == f"{part}:{option(argv, '--metrics-port')}"
    assert (
        targets["fleetpulse-detector"] == f"detector:{option(SERVICES['detector']['command'], '--web-port')}"
    )


def test_every_runbook_link_has_its_section_in_the_operations_guide() -> None:
    guide = (PROM.parents[1] / "docs" / "OPERATIONS.md").read_text()
    anchors = {line[4:].strip().lower() for line in guide.splitlines() if line.startswith("### ")}
    for rule in rules():
        if "alert" in rule:
            path, _, anchor = rule["annotations"]["runbook"].partition("#")  # type: ignore[index]
            assert path == "docs/OPERATIONS.md" and anchor in anchors, rule["alert"]
