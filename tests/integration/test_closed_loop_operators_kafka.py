"""The closed loop on the real broker honours operators: a host taken out with ``fleetpulse ops record``'s
record sends no fault until an operator returns it; one never returned sends none to the end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from fleetpulse.twin.live import BrokerLoop, Lockstep
from fleetpulse.twin.settings import twin_settings
from ground.kafka.admin import create_topics
from producers.runner import SimulationRequest, run_simulation
from streams.operator_events import operator_record, parse_step
from streams.ops_cli import send_step
from tests.fleetpulse.twin.conftest import START_TS, fleet_config
from tests.streams.kafka_io import isolated_settings

pytestmark = pytest.mark.integration

DAY = 86_400_000
DAYS = 8
SEED = 11


def day(d: float) -> int:
    return START_TS + int(d * DAY)


@pytest.fixture
def settings(kafka):  # type: ignore[no-untyped-def]
    return isolated_settings(kafka.settings)


def record_step(settings: Any, host: str, kind: str, ts: int) -> None:
    """What ``fleetpulse ops record HOST KIND --at …`` sends: the same builder and the same producer."""
    step = parse_step({"host_id": host, "kind": kind, "actor": "dc-ops", "ts": ts}, now_ms=day(DAYS + 1))
    send_step(settings, operator_record(step, cluster="c", now_ms=day(DAYS + 1)))


def test_a_host_an_operator_took_out_sends_no_fault_while_out(settings: Any, tmp_path: Path) -> None:
    create_topics(settings)
    record_step(settings, "c-h00000", "out_of_service", day(2))
    record_step(settings, "c-h00000", "returned_to_service", day(5))
    record_step(settings, "c-h00001", "out_of_service", day(3))  # never returned
    config = fleet_config(hosts=16, job_hosts=4, rate_per_gpu_day=0.25)  # about 2 faults per host and day
    loop = BrokerLoop(settings, twin_settings(), SEED, Lockstep(timeout_s=None))  # no pipeline to wait for
    try:
        request = SimulationRequest(
            mode="fast-forward",
            days=DAYS,
            interval_s=3600,
            fleet=config,
            seed=SEED,
            start_ts=START_TS,
            truth_out=tmp_path / "truth",
            create_topics=False,
        )
        result = run_simulation(settings, request, answer=loop)
    finally:
        loop.close()
    sent = pl.read_parquet(tmp_path / "truth" / "faults.parquet")
    times = {
        h: sent.filter(pl.col("host_id") == h)["ts"].to_list() for h in ("c-h00000", "c-h00001", "c-h00002")
    }
    assert any(ts <= day(2) for ts in times["c-h00000"]) and any(ts > day(5) for ts in times["c-h00000"])
    assert not [ts for ts in times["c-h00000"] if day(2) < ts <= day(5)]  # out: no fault
    assert any(ts <= day(3) for ts in times["c-h00001"]) and not [
        ts for ts in times["c-h00001"] if ts > day(3)
    ]
    assert any(day(2) < ts <= day(5) for ts in times["c-h00002"])  # a host no one took out kept failing
    report = result.manifest["closed_loop"]
    gpus = config.gpus_per_host
    assert report["held_by_operators_at_end"] == ["c-h00001"]
    assert report["gpu_h_out_of_service"] == {"operators": round((3 + DAYS - 3) * 24.0 * gpus, 1)}
