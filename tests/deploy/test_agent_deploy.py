"""The agent's systemd unit and DaemonSet cannot run here; their structure and settings are checked instead."""

from __future__ import annotations

import configparser
from pathlib import Path

import pytest
import typer
import yaml

from ground.settings import Settings
from producers.agent.main import app as light
from tests.deploy.test_compose import resolve

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "agent"
DOCS = {d["kind"]: d for d in yaml.safe_load_all((DEPLOY / "daemonset.yaml").read_text())}


def test_daemonset_runs_the_agent_with_least_privilege() -> None:
    pod = DOCS["DaemonSet"]["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert container["command"] == ["fleetpulse-agent"] and container["image"].startswith("fleetpulse-agent:")
    sc = container["securityContext"]
    assert (
        sc["privileged"] is False and sc["allowPrivilegeEscalation"] is False and sc["readOnlyRootFilesystem"]
    )
    assert sc["capabilities"] == {"drop": ["ALL"], "add": ["SYSLOG"]}
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/host/sys"]["readOnly"] and mounts["/dev/kmsg"]["readOnly"]
    assert pod["runtimeClassName"] == "nvidia" and pod["automountServiceAccountToken"] is False
    env = {e["name"]: e for e in container["env"]}
    assert env["NVIDIA_DRIVER_CAPABILITIES"]["value"] == "utility"


def test_daemonset_settings_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toml = tmp_path / "fleetpulse.toml"
    toml.write_text(DOCS["ConfigMap"]["data"]["fleetpulse.toml"])
    monkeypatch.setenv("FLEETPULSE_KAFKA__SASL_PASSWORD", "x")
    settings = Settings.load(toml)
    assert settings.agent.sysfs_root == Path("/host/sys")
    pod = DOCS["DaemonSet"]["spec"]["template"]["spec"]
    mounted = {m["mountPath"] for m in pod["containers"][0]["volumeMounts"]}
    assert {str(settings.agent.sysfs_root), str(settings.agent.state_dir)} <= mounted


def test_systemd_unit_is_hardened_and_runs_the_agent() -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read(DEPLOY / "fleetpulse-agent.service")
    service = unit["Service"]
    exec_start = service["ExecStart"].split()
    assert exec_start == ["/opt/fleetpulse-agent/bin/fleetpulse-agent"]  # the light install (packaging/agent)
    assert service["DynamicUser"] == "yes" and service["NoNewPrivileges"] == "yes"
    assert service["CapabilityBoundingSet"] == "CAP_SYSLOG" and service["ProtectSystem"] == "strict"
    assert service["DevicePolicy"] == "closed"


def test_the_light_agent_is_the_agent_command() -> None:
    """``fleetpulse-agent`` takes the options of ``fleetpulse agent`` (the units pass none; settings do)."""
    full = {o for p in resolve(["agent"]).params for o in p.opts}
    assert {o for p in typer.main.get_command(light).params for o in p.opts} == full
