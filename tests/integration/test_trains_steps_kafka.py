"""A change that slows its hosts halts a live campaign from their step time: the worker's cluster stage forwards
each scored window (``streams.trains.step_forward``) to the campaign's step-time test through ``fleet.actions``."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from ground.kafka import admin
from schemas import Codec, HostSampled, kafka_key
from streams.core.policy import DEFAULT_POLICY_FILE
from streams.worker import spawn_worker
from tests.conftest import free_ports
from tests.integration.test_trains_kafka import HOSTS, answer_changes, campaign_of, start_campaign
from tests.streams.kafka_io import decoded, isolated_settings, produce

pytestmark = pytest.mark.integration
CODEC = Codec()
WINDOW_MS = 5 * 60_000  # the slow-host stage's window: one sample a host and window
SLOWER = 1.05  # the new version's steps take 5 % longer (the test's H1: 3 %)


def samples(ts: int, slow: set[str], rng: random.Random) -> list[tuple[str, bytes, bytes]]:
    """Every host's sample of one window, all in one job; a host on the new version is slower."""
    out = []
    for host, cluster, _ in HOSTS:
        step = 1000.0 * (1 + 0.004 * rng.gauss(0, 1)) * (SLOWER if host in slow else 1.0)
        record = HostSampled(
            event_id=f"smp-{host}-{ts}",
            host_id=host,
            cluster=cluster,
            ts=ts,
            agent_seq=ts // WINDOW_MS,
            payload={
                "interval_s": WINDOW_MS // 1000,
                "job_id": "j1",
                "step_time_ms": step,
                "bus_bw_gbps": 380.0,
                "gpus": [],
                "nics": [],
            },
        ).to_record()
        out.append(("samples", kafka_key(record["event_type"], host), CODEC.encode(record)))
    return out


def test_a_change_that_slows_its_hosts_halts_the_live_worker_from_their_step_time(
    kafka, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """The canaries run 5 % slower once their change is applied; no error, no finding is needed: the
    windows' step times reach the campaign's SPRT and the train halts by itself, with the evidence."""
    settings = isolated_settings(kafka.settings, partitions=2)
    admin.create_topics(settings)
    policy = tmp_path / "policy.toml"
    text = DEFAULT_POLICY_FILE.read_text()
    assert 'idle_partition_timeout = "30s"' in text
    policy.write_text(text.replace('idle_partition_timeout = "30s"', 'idle_partition_timeout = "2s"'))
    day = 86_400_000
    t0 = (int(time.time() * 1000) // day - 2) * day  # the steps stay behind the worker's clock
    (port,) = free_ports(1)
    worker = spawn_worker(
        settings, web_port=port, data_dir=tmp_path / "w", policy_file=policy, log_path=tmp_path / "w.log"
    )
    rng = random.Random(39)
    try:
        cid = start_campaign(settings, worker, t0)
        upgraded: set[str] = set()
        status, camp = "running", {}
        for step in range(1, 60):
            ts = t0 + step * WINDOW_MS
            produce(settings, samples(ts, upgraded, rng))
            time.sleep(1.0)
            answer_changes(settings, cid, upgraded, ts + 1_000)
            camp = campaign_of(worker, cid)
            status = camp["status"]
            if status != "running":
                break
        assert status == "halted", camp
        reason = camp["halted_reason"]
        assert "step time:" in reason and f"abort {cid} --rollback" in reason, reason
        actions = [a for a in decoded(settings, "actions") if a["event_type"] == "MaintenanceActionRecorded"]
        counted = [a for a in actions if a["payload"]["kind"] == "steps_counted"]
        assert counted and {a["payload"]["finding_id"] for a in counted} == {cid}
        assert not [a for a in actions if a["payload"]["kind"] == "errors_counted"]  # no error took part
        assert len([a for a in actions if a["payload"]["kind"] == "campaign_halted"]) == 1
    finally:
        assert worker.stop() == 0, (tmp_path / "w.log").read_text()[-3000:]
        admin.delete_topics(settings, [s.name for s in settings.topics.all()])
