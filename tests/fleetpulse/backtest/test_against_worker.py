"""The backtest raises exactly the findings and decides exactly the actions a real detect worker does.

Same history, the worker on the real broker: the same records, ids and event times included.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from analytics.lake import Lake
from fleetpulse.backtest.events import (
    INVENTORY_TABLE,
    OUTAGE_TABLES,
    REPLAYED_TABLES,
    Period,
    read_history,
    read_tables,
)
from fleetpulse.backtest.replay import replay
from ground.kafka import admin
from schemas import Codec, MaintenanceActionRecorded
from schemas.events import topic_family
from streams.core.policy import load_policy
from streams.worker import spawn_worker
from tests.conftest import free_ports
from tests.fleetpulse.backtest.simulated import simulated_lake
from tests.streams.kafka_io import decoded, isolated_settings, produce, wait_for

pytestmark = pytest.mark.integration

MAINTENANCE_ACTION = MaintenanceActionRecorded.EVENT_TYPE


@pytest.mark.parametrize("seed", [21, 4057])
def test_the_backtest_finds_what_the_worker_finds(kafka: Any, tmp_path: Path, seed: int) -> None:
    lake = Lake(simulated_lake(tmp_path / "lake", seed))
    result = replay(read_history(lake), load_policy())
    ours = {f.finding_id for f in result.findings}
    assert ours, "the simulated history raises findings"
    our_findings = {f.finding_id: f.to_record() for f in result.findings}
    our_actions = {a.action_id: a.to_record() for a in result.actions}
    assert our_actions, "the simulated history's findings are acted on"

    settings = isolated_settings(kafka.settings)
    admin.create_topics(settings)
    codec = Codec()
    records = [
        *read_tables(lake, (INVENTORY_TABLE, *OUTAGE_TABLES), Period()),
        *read_tables(lake, REPLAYED_TABLES, Period()),
    ]
    produce(
        settings, [(topic_family(r["event_type"]), r["host_id"].encode(), codec.encode(r)) for r in records]
    )

    (port,) = free_ports(1)
    worker = spawn_worker(settings, web_port=port, data_dir=tmp_path / "w", log_path=tmp_path / "w.log")
    try:
        worker.wait_ready(90)

        def found() -> set[str]:
            return {r["payload"]["finding_id"] for r in decoded(settings, "findings")}

        def decided() -> dict[str, dict[str, Any]]:
            actions = [r for r in decoded(settings, "actions") if r["event_type"] == MAINTENANCE_ACTION]
            return {r["payload"]["action_id"]: r for r in actions}

        wait_for(lambda: len(found()) >= len(ours), 180, f"{len(ours)} findings from the worker")
        wait_for(
            lambda: len(decided()) >= len(our_actions), 120, f"{len(our_actions)} actions from the worker"
        )
        # the last windows close once the samples partitions are declared idle: any later finding shows by then
        time.sleep(load_policy().slow_host.idle_partition_timeout / 1000 + 5)
        theirs = found()
        their_findings = {r["payload"]["finding_id"]: r for r in decoded(settings, "findings")}
        their_actions = decided()
    finally:
        worker.stop()
    assert theirs == ours
    assert their_findings == our_findings  # every field: ids, event times, windows, evidence
    assert their_actions == our_actions  # every field: ids, event times, kinds, reasons
