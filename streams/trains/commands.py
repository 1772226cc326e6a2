"""A person's steps on change campaigns as ``CampaignRecorded`` records: start, pause, resume, abort, roll back.

One builder for both ways in, ``fleetpulse train`` and the detector's ``POST /trains``, so both check
the same things against the folded campaigns and derive the same ids.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from schemas import FLEET, VERSION_COMPONENTS, CampaignRecorded, HostVersionsReported
from streams.core.errors import CampaignError
from streams.core.ids import stable_id
from streams.trains.campaign import Campaign, Trains

Step = Literal["paused", "resumed", "aborted"]
ALLOWED: dict[Step, frozenset[str]] = {
    "paused": frozenset({"running"}),
    "resumed": frozenset({"paused", "halted"}),
    "aborted": frozenset({"running", "paused", "halted"}),
}


class CampaignSpec(BaseModel):
    """What ``train start`` asks for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    change: str = Field(description="component=version, e.g. driver=560.35")
    scope: list[str] = []
    canary: int = Field(0, ge=0)
    max_parallel_domains: int = Field(1, ge=1)
    actor: str = Field(min_length=1)
    reason: str = ""

    @field_validator("change")
    @classmethod
    def _component_version(cls, value: str) -> str:
        parse_change(value)
        return value


def parse_change(text: str) -> tuple[str, str]:
    """``driver=560.35`` -> ("driver", "560.35"); ValueError naming the components for anything else."""
    component, sep, version = text.partition("=")
    if not sep or not version.strip() or component.strip() not in VERSION_COMPONENTS:
        raise ValueError(
            f"--change must be COMPONENT=VERSION with a component of {', '.join(VERSION_COMPONENTS)}"
        )
    return component.strip(), version.strip()


# every field of the payload, so a record reads back as it was written
PAYLOAD_DEFAULTS: dict[str, Any] = {
    "scope": [],
    "hosts": [],
    "canary": 0,
    "max_parallel_domains": 1,
    "rollback_of": None,
    "actor": "",
    "reason": "",
    "evidence": None,
}


def _record(campaign_id: str, kind: str, now_ms: int, payload: dict[str, Any]) -> dict[str, Any]:
    return CampaignRecorded(
        event_id=stable_id("cmp", campaign_id, kind, now_ms),
        host_id=FLEET,
        cluster=FLEET,
        ts=now_ms,
        payload={"campaign_id": campaign_id, "kind": kind, **PAYLOAD_DEFAULTS, **payload},
    ).to_record()


def start_record(
    spec: CampaignSpec, now_ms: int, *, hosts: list[str] | None = None, rollback_of: str | None = None
) -> dict[str, Any]:
    component, version = parse_change(spec.change)
    cid = stable_id("trn", component, version, sorted(spec.scope), sorted(hosts or []), spec.actor, now_ms)
    return _record(
        cid,
        "started",
        now_ms,
        {
            "component": component,
            "version": version,
            "scope": list(spec.scope),
            "hosts": sorted(hosts or []),
            "canary": spec.canary,
            "max_parallel_domains": spec.max_parallel_domains,
            "rollback_of": rollback_of,
            "actor": spec.actor,
            "reason": spec.reason,
        },
    )


def find(trains: Trains, campaign_id: str) -> Campaign:
    camp = trains.campaigns.get(campaign_id)
    if camp is None:
        known = ", ".join(sorted(trains.campaigns)) or "none"
        raise CampaignError(f"unknown campaign {campaign_id!r} (known: {known})")
    return camp


def step_record(
    trains: Trains, campaign_id: str, step: Step, *, actor: str, now_ms: int, reason: str = ""
) -> dict[str, Any]:
    """The record of a person's step; CampaignError when the campaign's status does not allow it."""
    camp = find(trains, campaign_id)
    if camp.status not in ALLOWED[step]:
        raise CampaignError(f"campaign {campaign_id} is {camp.status}: cannot be {step}")
    return _record(
        campaign_id,
        step,
        now_ms,
        {
            "component": camp.component,
            "version": camp.version,
            "actor": actor,
            "reason": reason,
        },
    )


def rollback_records(trains: Trains, campaign_id: str, *, actor: str, now_ms: int) -> list[dict[str, Any]]:
    """Abort the campaign and start one taking the hosts it changed back to the version they ran before."""
    camp = find(trains, campaign_id)
    out = (
        []
        if camp.status == "aborted"
        else [step_record(trains, campaign_id, "aborted", actor=actor, now_ms=now_ms, reason="rollback")]
    )
    previous, hosts = camp.previous_version(), camp.changed_hosts()
    if previous is None or not hosts:
        if not out:
            raise CampaignError(
                f"campaign {campaign_id} changed no host with a known previous version: nothing to roll back"
            )
        return out
    spec = CampaignSpec(
        change=f"{camp.component}={previous}",
        scope=camp.scope,
        actor=actor,
        max_parallel_domains=camp.max_parallel_domains,
        reason=f"rollback of {campaign_id}",
    )
    out.append(start_record(spec, now_ms, hosts=hosts, rollback_of=campaign_id))
    return out


def describe(camp: Campaign) -> dict[str, Any]:
    """A JSON-friendly view of a campaign (``train status``, ``GET /trains``)."""
    phases: dict[str, int] = {}
    for v in camp.visits.values():
        phases[v.phase] = phases.get(v.phase, 0) + 1
    return {
        "campaign_id": camp.campaign_id,
        "change": f"{camp.component}={camp.version}",
        "status": camp.status,
        "scope": camp.scope or ["fleet"],
        "canary": camp.canary,
        "max_parallel_domains": camp.max_parallel_domains,
        "rollback_of": camp.rollback_of,
        "started_ts": camp.started_ts,
        "visits": phases,
        "upgraded": camp.upgraded,
        "faults_seen": len(camp.faults),
        "gate_open": camp.accepted,
        "halted_reason": camp.halted_reason or None,
        "history": [{"ts": ts, "step": kind, "reason": reason} for ts, kind, reason in camp.history],
    }


def change_applied_record(
    host_id: str, component: str, version: str, *, actor: str, cluster: str, now_ms: int
) -> dict[str, Any]:
    """The host side's word that a change is on a host (``ops record HOST change_applied --version``): a
    version report on ``fleet.actions`` naming only that component."""
    if component not in VERSION_COMPONENTS:
        raise CampaignError(f"--component must be one of {', '.join(VERSION_COMPONENTS)}")
    if not version.strip():
        raise CampaignError("change_applied needs --version")
    return HostVersionsReported(
        event_id=stable_id("ver", host_id, component, version, now_ms),
        host_id=host_id,
        cluster=cluster,
        ts=now_ms,
        payload={component: version.strip(), "reason": "change_applied", "actor": actor},
    ).to_record()
