"""A hand-built lake whose findings are known by construction, for backtests that change one threshold.

Ten hosts of one job in cluster ``c1`` (domains ``md0``, ``md1``), sampled every 5 minutes for three hours:
``h03`` runs 3 % slower than its peers, ``h04`` 1.5 %. Two DRAM UCEs on GPU 0 of ``h01`` three days
apart (the packaged 2-in-7d rule fires) and of ``h02`` ten days apart (only a 14-day window fires).
The lake also holds the two findings a live run with the packaged policy raised (ids computed here,
the way the detectors name them), written as Delta tables like the simulator's lake sink writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ground.delta import DATE, DAY_MS, DeltaTables, with_date
from schemas import EccErrorObserved, HostInventoried, HostSampled, IncidentReported
from schemas.arrow import table_name, to_table
from streams.core.findings import Finding
from streams.core.ids import finding_id

START = 1_735_689_600_000  # 2025-01-01T00:00:00Z
MINUTE = 60_000
HOSTS = [f"h{i:02d}" for i in range(10)]
STEP_MS = {"h03": 1030.0, "h04": 1015.0}
UCE = {"h01": (START + 1 * DAY_MS, START + 4 * DAY_MS), "h02": (START + 1 * DAY_MS, START + 11 * DAY_MS)}
SAMPLES = 36  # three hours of 5-minute samples


def inventory() -> list[dict[str, Any]]:
    return [
        HostInventoried(
            event_id=f"inv-{h}",
            host_id=h,
            cluster="c1",
            ts=START - DAY_MS,
            payload={
                "rack": f"r{i // 2}",
                "fabric": "roce",
                "maintenance_domain": f"md{i // 5}",
                "sku": "H100-SXM5-80GB",
                "install_ts": START - 90 * DAY_MS,
                "gpu_count": 8,
                "nic_ports": 8,
            },
        ).to_record()
        for i, h in enumerate(HOSTS)
    ]


def samples() -> list[dict[str, Any]]:
    out = []
    for n in range(SAMPLES):
        for i, h in enumerate(HOSTS):
            jitter = ((i * 7 + n * 3) % 5 - 2) * 0.2  # +-0.4 ms: peers are not identical
            out.append(
                HostSampled(
                    event_id=f"s-{n:03d}-{h}",
                    host_id=h,
                    cluster="c1",
                    ts=START + n * 5 * MINUTE + i * 1000,
                    agent_seq=n,
                    payload={
                        "interval_s": 300,
                        "job_id": "j1",
                        "step_time_ms": STEP_MS.get(h, 1000.0) + jitter,
                        "bus_bw_gbps": 350.0,
                        "gpus": [],
                        "nics": [],
                    },
                ).to_record()
            )
    return out


def uces() -> list[dict[str, Any]]:
    return [
        EccErrorObserved(
            event_id=f"uce-{h}-{j}",
            host_id=h,
            cluster="c1",
            ts=ts,
            agent_seq=1000 + j,
            payload={
                "gpu": 0,
                "memory": "dram",
                "correctable": False,
                "count": 1,
                "row_remap": "none",
                "remapped_rows_total": 0,
            },
        ).to_record()
        for h, times in UCE.items()
        for j, ts in enumerate(times)
    ]


def dram_finding_id(host: str) -> str:
    """The id names the rule and its evidence (both UCEs), not the window that counted them."""
    return finding_id(
        "repeat_offender", "dram_uce_repeat_gpu", f"{host}/0", *sorted(f"uce-{host}-{j}" for j in (0, 1))
    )


def slow_finding_id(host: str) -> str:
    """Slow in the first two windows: the finding is named by the first slow window's start."""
    return finding_id("slow_host", "slow_host", host, START)


def live_findings() -> list[dict[str, Any]]:
    """What the live detectors raised with the packaged policy: h01's repeated UCE and h03's slowness."""
    common: dict[str, Any] = {"cluster": "c1", "scope": "gpu", "count": 2, "severity": "critical"}
    dram = Finding(
        finding_id=dram_finding_id("h01"),
        detector="repeat_offender",
        rule="dram_uce_repeat_gpu",
        scope_key="h01/0",
        host_id="h01",
        ts=UCE["h01"][1],
        error_class="dram_uce",
        window_start=UCE["h01"][0],
        window_end=UCE["h01"][1],
        recommended_action="rma",
        **common,
    )
    slow = Finding(
        finding_id=slow_finding_id("h03"),
        detector="slow_host",
        rule="slow_host",
        scope="host",
        scope_key="h03",
        host_id="h03",
        cluster="c1",
        ts=START + 10 * MINUTE,
        error_class="slow_host",
        count=2,
        window_start=START,
        window_end=START + 10 * MINUTE,
        recommended_action="diagnostics",
        severity="warning",
    )
    return [dram.to_record(), slow.to_record()]


def incident(host: str, start: int, end: int) -> dict[str, Any]:
    """An incident that kept ``host`` out: the planner counts it, whatever the policy."""
    return IncidentReported(
        event_id=f"inc-{host}-{start}",
        host_id=host,
        cluster="c1",
        ts=start,
        payload={
            "cause": "network",
            "source_class": "link down",
            "source_text": "",
            "component": None,
            "component_kind": None,
            "start_ts": start,
            "end_ts": end,
        },
    ).to_record()


def write(lake: Path, records: Iterable[dict[str, Any]]) -> None:
    """Records into the lake's Delta tables, one commit per table, as the simulator's lake sink writes them."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault(r["event_type"], []).append(r)
    tables = DeltaTables(lake)
    for event_type, rows in sorted(groups.items()):
        tables.append(table_name(event_type), with_date(to_table(event_type, rows)), partition_by=[DATE])


def build(lake: Path, *, extra: Iterable[dict[str, Any]] = ()) -> Path:
    write(lake, [*inventory(), *samples(), *uces(), *live_findings(), *extra])
    return lake
