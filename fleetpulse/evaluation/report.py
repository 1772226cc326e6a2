"""What scoring returns: per detector a ``DetectorScore`` (hosts found, missed, false; precision,
recall, time to detect), and the ``ScoreReport`` of a run; the helpers every detector's scoring shares.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import polars as pl


@dataclass(frozen=True)
class DetectorScore:
    detector: str
    truth: int  # hosts with the latent condition
    detectable: int  # ... that the truth makes material, to be found (recall's denominator; not the policy's)
    predicted: int  # hosts with at least one finding of this detector
    tp: int
    fp: int
    fn: int  # detectable hosts without a finding
    tp_undetectable: int  # found although the truth alone would not reach the threshold
    precision: float | None
    recall: float | None
    ttd_median_s: float | None  # first finding ts - onset (onset clipped to the period start)
    ttd_p90_s: float | None
    ttd_median_windows: float | None = None
    ttd_p90_windows: float | None = None
    # windows after onset in which the host ran a job (the truth's jobs): idle gaps not counted
    ttd_busy_median_windows: float | None = None
    ttd_busy_p90_windows: float | None = None
    window_s: float | None = None
    window_source: str | None = None
    truth_definition: str | None = None  # what made a host one to be found (the truth's materiality)
    lag_median_s: float | None = None  # first finding ts - moment the truth reached the threshold
    lag_p90_s: float | None = None
    rule_met: int | None = None  # healthy hosts flagged whose own faults do meet a rule: neither TP nor FP
    rule_met_hosts: list[str] = field(default_factory=list)
    fp_findings: int | None = None  # findings on FP hosts
    fp_per_day_per_1k_hosts: float | None = None  # fp_findings per day of the period per 1,000 hosts
    breakdown: dict[str, dict[str, int]] = field(default_factory=dict)
    fp_hosts: list[str] = field(default_factory=list)
    fn_hosts: list[str] = field(default_factory=list)
    tp_hosts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PageScore:
    """Pages against true incidents (a true-positive host's fault, and its relapses found: ``fleetpulse.evaluation.pages``).

    A page is one notification of an alert group (``group_key``): Alertmanager sends the alerts of a
    group together and later ones as updates of it, so two alerts of one group are one page.
    """

    incidents: int  # true incidents found: each true-positive host's fault, and each relapse found since
    alerts_on_incidents: int  # firing alerts on those hosts, each alert id once
    pages_on_incidents: int  # alert groups that fired on those hosts
    pages_per_incident: float | None  # the goal's figure (fleetpulse.evaluation.pages)
    max_pages_per_incident: int
    after_repair_pages: int  # of those, groups a RepeatAfterRepair alert opened (the planner's judgement)
    first_pages_per_incident: float | None  # without those, per true-positive host
    pages_elsewhere: int  # groups on hosts that were no true incident (FP or rule met)
    resolved: int  # resolved notifications sent
    fleet_pages: int  # alerts about the fleet, not a host (train halted, dead-letter surge)
    hosts: int = 0  # true-positive hosts, any detector
    pages_per_host: float | None = None  # every page on a true host counted against one incident
    relapses_found: int = 0  # incidents after a repair that did not cure, a finding on the host followed
    relapses: int = 0  # such returns of those hosts in the fleet's truth


@dataclass(frozen=True)
class ScoreReport:
    detectors: dict[str, DetectorScore]
    period: dict[str, int]
    params: dict[str, Any]
    live: ScoreReport | None = None  # a history continued live: the live segment on its own
    pages: PageScore | None = None  # the alerts sent for the run, per true incident (when they were read)
    fleet_answer: dict[str, Any] | None = (
        None  # closed loop: what the simulated fleet did in answer (manifest)
    )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; times to detect also in hours (``ttd_median_h``, ``ttd_p90_h``) for reports."""
        detectors = {}
        for name, d in self.detectors.items():
            row = asdict(d)
            for q in ("median", "p90"):
                seconds = row[f"ttd_{q}_s"]
                row[f"ttd_{q}_h"] = None if seconds is None else seconds / 3600
            detectors[name] = row
        out = {"detectors": detectors, "period": self.period, "params": self.params}
        if self.live is not None:
            out["live"] = self.live.to_dict()
        if self.pages is not None:
            out["pages"] = asdict(self.pages)
        if self.fleet_answer is not None:
            out["fleet_answer"] = self.fleet_answer
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


def pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def first_findings(findings: pl.DataFrame, detector: str) -> dict[str, int]:
    rows = findings.filter(pl.col("detector") == detector).group_by("host_id").agg(pl.col("ts").min())
    return dict(zip(rows["host_id"].to_list(), rows["ts"].to_list(), strict=True))


def assemble(
    detector: str,
    first: Mapping[str, int],
    truth: set[str],
    detectable: set[str],
    fp_hosts: list[str],
    ttd: list[float],
    breakdown: dict[str, dict[str, int]],
    *,
    lag: list[float] | None = None,
    **extra: Any,
) -> DetectorScore:
    found = set(first)
    tp = found & truth
    fn_hosts = sorted(detectable - found)
    lag = lag or []
    return DetectorScore(
        detector=detector,
        truth=len(truth),
        detectable=len(detectable),
        predicted=len(found),
        tp=len(tp),
        fp=len(fp_hosts),
        fn=len(fn_hosts),
        tp_undetectable=len(tp - detectable),
        precision=ratio(len(tp), len(tp) + len(fp_hosts)),
        recall=ratio(len(tp & detectable), len(detectable)),
        ttd_median_s=pct(ttd, 50),
        ttd_p90_s=pct(ttd, 90),
        lag_median_s=pct(lag, 50) if detector == "repeat_offender" else None,
        lag_p90_s=pct(lag, 90) if detector == "repeat_offender" else None,
        breakdown=breakdown,
        fp_hosts=fp_hosts,
        fn_hosts=fn_hosts,
        tp_hosts=sorted(tp),
        **extra,
    )
