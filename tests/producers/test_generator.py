"""The event stream: agent sequence numbers, ids, signals per fault kind, late delivery."""

from collections import Counter, defaultdict

import pyarrow.parquet as pq

from schemas import Codec

FATAL_XIDS = {48, 62, 64, 74, 79, 94, 95, 119, 120}


def test_agent_seq_is_strictly_increasing_per_host_and_starts_with_inventory(simulate) -> None:
    result, sink = simulate(days=5, interval_s=3600)
    by_host: dict[str, list[dict]] = defaultdict(list)
    for r in sink.records:
        by_host[r["host_id"]].append(r)
    assert len(by_host) == result.manifest["hosts_installed_by_end"]
    for events in by_host.values():
        seqs = [e["agent_seq"] for e in events]
        assert seqs == list(range(1, len(seqs) + 1))
        assert events[0]["event_type"] == "HostInventoried"
        assert sum(e["event_type"] == "HostInventoried" for e in events) == 1
        ts = [e["ts"] for e in events]
        assert ts == sorted(ts)
    ids = [r["event_id"] for r in sink.records]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith(result.run_id + "-") for i in ids)


def test_counts_match_the_stream_and_everything_decodes(simulate) -> None:
    result, sink = simulate(days=3, interval_s=3600)
    assert Counter(r["event_type"] for r in sink.records) == result.counts
    assert result.manifest["counts"] == result.counts
    assert sum(result.counts_by_topic.values()) == result.total == sink.count
    codec = Codec()
    for record in sink.records[:500]:
        assert codec.decode(codec.encode(record)).record == record


def test_every_fault_emits_its_contracted_signals(simulate, tmp_path) -> None:
    result, sink = simulate(
        preset="demo", days=20, interval_s=86400, keep_samples=False, truth_out=tmp_path / "t"
    )
    faults = pq.read_table(tmp_path / "t" / "faults.parquet").to_pylist()
    at: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for r in sink.records:
        at[(r["host_id"], r["ts"])].append(r)
    checked = Counter()
    for f in faults:
        events = at[(f["host_id"], f["ts"])]
        types = Counter(e["event_type"] for e in events)
        xids = {e["payload"]["xid"] for e in events if e["event_type"] == "XidRaised"}
        kind = f["kind"]
        if kind == "fell_off_bus":
            assert 79 in xids
        elif kind == "dram_uce":
            assert 48 in xids and any(
                e["payload"]["memory"] == "dram" and not e["payload"]["correctable"]
                for e in events if e["event_type"] == "EccErrorObserved"
            )  # fmt: skip
        elif kind == "row_remap_failure":
            assert 64 in xids
        elif kind == "sram_uce":
            assert xids & {94, 95}
        elif kind == "gsp_error":
            assert xids & {119, 120}
        elif kind in ("link_down", "nic"):
            assert any(
                e["payload"]["kind"] == "down" for e in events if e["event_type"] == "LinkEventObserved"
            )
        elif kind == "link_flap":
            assert any(
                e["payload"]["kind"] == "flap" for e in events if e["event_type"] == "LinkEventObserved"
            )
        if f["interrupts_job"]:
            ji = [e for e in events if e["event_type"] == "JobInterrupted"]
            assert ji and ji[0]["payload"]["cause"] == f["cause"] and ji[0]["payload"]["detail"] == kind
        else:
            assert types["JobInterrupted"] == 0
        checked[kind] += 1
    assert result.counts["JobInterrupted"] == sum(f["interrupts_job"] for f in faults)
    assert {"fell_off_bus", "dram_uce", "link_flap"} <= set(checked)


def test_noise_never_looks_like_a_fault(simulate, tmp_path) -> None:
    _, sink = simulate(preset="demo", days=10, interval_s=86400, keep_samples=False, truth_out=tmp_path / "t")
    fault_keys = {
        (f["host_id"], f["ts"]) for f in pq.read_table(tmp_path / "t" / "faults.parquet").to_pylist()
    }
    noise = [r for r in sink.records if (r["host_id"], r["ts"]) not in fault_keys]
    kinds = Counter(r["event_type"] for r in noise)
    assert kinds["EccErrorObserved"] > 0 and kinds["XidRaised"] > 0 and kinds["PcieAerReported"] > 0
    for r in noise:
        p = r["payload"]
        if r["event_type"] == "XidRaised":
            assert p["xid"] not in FATAL_XIDS
        elif r["event_type"] == "EccErrorObserved":
            assert p["correctable"]
        elif r["event_type"] == "PcieAerReported":
            assert p["severity"] == "correctable"
        elif r["event_type"] == "LinkEventObserved":
            assert p["kind"] == "flap" and p["count"] == 1
        else:
            assert r["event_type"] == "HostInventoried"


def test_sample_counters_carry_the_interval_events(simulate) -> None:
    _, sink = simulate(days=20, interval_s=86400)
    sbe_events = sum(
        r["payload"]["count"] for r in sink.records
        if r["event_type"] == "EccErrorObserved" and r["payload"]["correctable"]
    )  # fmt: skip
    sbe_samples = sum(
        g["ecc_sbe"] for r in sink.records if r["event_type"] == "HostSampled" for g in r["payload"]["gpus"]
    )
    assert sbe_events == sbe_samples > 0


def test_late_delivery_is_bounded_and_loses_nothing(simulate, settings) -> None:
    from producers.runner import SimulationRequest, run_simulation
    from producers.sinks.base import MemorySink

    on_time, a = simulate(days=1, interval_s=1800)
    simulator = settings.simulator.model_copy(update={"late_fraction": 0.2, "late_max_delay_s": 5400})
    late_settings = settings.model_copy(update={"simulator": simulator})
    b = MemorySink()
    request = SimulationRequest(
        preset="small", days=1, interval_s=1800, start_ts=on_time.start_ts, sink="null"
    )
    late = run_simulation(late_settings, request, sink=b)
    assert late.counts == on_time.counts
    assert sorted(r["event_id"] for r in a.records) == sorted(r["event_id"] for r in b.records)
    assert [r["event_id"] for r in a.records] != [r["event_id"] for r in b.records]
    # late events keep their seq: per host, some arrive after a higher seq
    out_of_order = 0
    highest: dict[str, int] = {}
    for r in b.records:
        if r["agent_seq"] < highest.get(r["host_id"], 0):
            out_of_order += 1
        highest[r["host_id"]] = max(highest.get(r["host_id"], 0), r["agent_seq"])
    assert out_of_order > 0.05 * len(b.records)
    # bounded: delivered at most ceil(5400 / 1800) = 3 ticks after its interval ended
    newest_sample, worst = 0, 0
    for r in b.records:
        if r["event_type"] == "HostSampled":
            newest_sample = max(newest_sample, r["ts"])
        worst = max(worst, newest_sample - r["ts"])
    assert 1_800_000 <= worst <= (3 + 1) * 1_800_000
