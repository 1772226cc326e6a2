from __future__ import annotations

from pathlib import Path
from typing import Any

from producers.agent.build import build_agent
from producers.agent.spool import Spool
from producers.agent.testing import FixtureHost
from schemas import Codec


class Clock:
    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


def run_rounds(
    host: FixtureHost, state: Path, rounds: int, saved: dict[str, Any] | None = None, **kw: Any
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    out: list[dict[str, Any]] = []
    last: dict[str, Any] = {}

    def commit(records: list[dict[str, Any]], st: dict[str, Any]) -> None:
        out.extend(records)
        last.clear()
        last.update(st)

    agent = build_agent(host.agent_settings(state, **kw), commit, saved)
    clock = Clock()
    agent.clock = clock
    for _ in range(rounds):
        agent.round()
        clock.t += 1
    agent.close()
    return out, last


def test_events_have_the_simulators_envelope_and_encode(host: FixtureHost, tmp_path: Path) -> None:
    host.fall_off_bus(1)
    records, _ = run_rounds(host, tmp_path / "s", 11)
    types = [r["event_type"] for r in records]
    assert types == ["HostInventoried", "XidRaised", "HostSampled"]
    codec = Codec()
    for r in records:
        assert codec.decode(codec.encode(r)).record == r
    seqs = [r["agent_seq"] for r in records]
    assert seqs == [1, 2, 3]
    assert all(r["event_id"].endswith(f"-fx-h00001-{r['agent_seq']}") for r in records)
    inv = records[0]["payload"]
    assert (inv["gpu_count"], inv["nic_ports"], inv["fabric"]) == (8, 8, "infiniband")
    sample = records[2]["payload"]
    assert sample["interval_s"] == 10 and len(sample["nics"]) == 8
    assert sample["job_id"] is None and sample["step_time_ms"] is None  # no job (v2: null): not comparable
    assert (
        records[2]["schema_version"] == 2 and records[1]["schema_version"] == 2
    )  # XidRaised v2: gpu nullable
    gpus = sample["gpus"]  # NVML is off here: nothing read the v2 GPU fields
    assert gpus == [] or all(g["throttle_reasons"] is None for g in gpus)


def test_restart_resumes_ids_positions_and_inventory(host: FixtureHost, tmp_path: Path) -> None:
    host.fall_off_bus(0)
    first, state = run_rounds(host, tmp_path / "s", 2)
    host.fall_off_bus(2)
    host.flap(4, 3)
    second, _ = run_rounds(host, tmp_path / "s", 2, saved=state)
    assert [r["event_type"] for r in second] == ["XidRaised", "LinkEventObserved"]  # no inventory, no replay
    assert second[0]["payload"]["gpu"] == 2
    assert second[1]["payload"] == {"port": 4, "kind": "flap", "count": 3, "peer": None}
    ids = [r["event_id"] for r in first + second]
    assert len(set(ids)) == len(ids)
    assert second[0]["agent_seq"] == first[-1]["agent_seq"] + 1


def test_inventory_is_sent_again_when_it_changes(host: FixtureHost, tmp_path: Path) -> None:
    _, state = run_rounds(host, tmp_path / "s", 1)
    host.log("NVRM: GPU at PCI:0000:18:00: GPU-00000000-aaaa-bbbb-cccc-000000000001")
    records, _ = run_rounds(host, tmp_path / "s", 1, saved=state)
    assert [r["event_type"] for r in records] == ["HostInventoried"]


def test_a_failing_collector_is_counted_and_the_others_go_on(host: FixtureHost, tmp_path: Path) -> None:
    out: list[dict[str, Any]] = []
    agent = build_agent(host.agent_settings(tmp_path / "s"), lambda r, s: out.extend(r), None)

    def broken(now_ms: int) -> Any:
        raise RuntimeError("boom")

    agent.collectors[0].collect = broken  # type: ignore[method-assign]
    host.fall_off_bus(0)
    agent.round(force=True)
    assert "XidRaised" in [r["event_type"] for r in out]
    assert agent.problems.counts[(agent.collectors[0].name, "collector_failed")] == 1


def test_spooled_state_round_trip(host: FixtureHost, tmp_path: Path) -> None:
    spool = Spool(tmp_path / "agent.db", 1 << 20)
    codec = Codec()
    from producers.agent.spool import Entry

    agent = build_agent(
        host.agent_settings(tmp_path),
        lambda rs, st: spool.commit([Entry(True, r["event_type"], b"k", codec.encode(r)) for r in rs], st),
        spool.state(),
    )
    agent.round(force=True)
    agent.close()
    assert spool.state()["seq"] == len(spool) == 2
