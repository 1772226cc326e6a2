"""The event stream: agent sequence numbers, ids, signals per fault kind, late delivery."""

from collections import Counter, defaultdict
from typing import get_args

import pyarrow.parquet as pq

from producers.config import LLAMA3_CAUSE_MIX, LLAMA3_RATE_PER_GPU_DAY, FaultKind
from schemas import Codec
from tests.producers.conftest import config_with

FATAL_XIDS = {48, 62, 64, 74, 79, 94, 95, 119, 120}
FAULT_KINDS = set(get_args(FaultKind))


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
    # the envelope names the version its bytes are written with (the latest registered)
    assert {(r["event_type"], r["schema_version"]) for r in sink.records} == {
        (t, codec.registry.latest(t).version) for t in result.counts
    }


# every cause equally likely, each of its kinds too, and 30x the Llama 3 rate: all kinds within 20 days
ALL_KINDS_FLEET = config_with(
    "demo",
    failures={
        "interruptions_per_gpu_day": 30 * LLAMA3_RATE_PER_GPU_DAY,
        "cause_mix": dict.fromkeys(LLAMA3_CAUSE_MIX, 1.0),
    },
)
HARDWARE = {"XidRaised", "EccErrorObserved", "PcieAerReported", "LinkEventObserved"}


def test_every_fault_emits_its_contracted_signals(simulate, tmp_path) -> None:
    """The fault-kind table of producers/README.md, kind by kind."""
    result, sink = simulate(
        fleet=ALL_KINDS_FLEET,
        preset=None,
        days=20,
        interval_s=86400,
        keep_samples=False,
        truth_out=tmp_path / "t",
    )
    faults = pq.read_table(tmp_path / "t" / "faults.parquet").to_pylist()
    at: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for r in sink.records:
        at[(r["host_id"], r["ts"])].append(r)
    checked = Counter()
    for f in faults:
        events = at[(f["host_id"], f["ts"])]
        kind = f["kind"]
        hardware = [e for e in events if e["event_type"] in HARDWARE]
        types = {e["event_type"] for e in hardware}
        xids = {e["payload"]["xid"] for e in hardware if e["event_type"] == "XidRaised"}
        ecc = [e["payload"] for e in hardware if e["event_type"] == "EccErrorObserved"]
        links = [e["payload"] for e in hardware if e["event_type"] == "LinkEventObserved"]
        aer = [e["payload"] for e in hardware if e["event_type"] == "PcieAerReported"]
        if kind == "fell_off_bus":
            assert xids == {79} and types <= {"XidRaised", "PcieAerReported"}
            assert all(a["severity"] in ("fatal", "nonfatal") for a in aer)
        elif kind == "dram_uce":
            assert types == {"XidRaised", "EccErrorObserved"} and len(ecc) == 1
            assert ecc[0]["memory"] == "dram" and not ecc[0]["correctable"]
            assert xids == ({48, 63} if ecc[0]["row_remap"] == "remap_event" else {48})
        elif kind == "row_remap_failure":
            assert types == {"XidRaised", "EccErrorObserved"} and xids == {64}
            assert [(e["memory"], e["correctable"], e["row_remap"]) for e in ecc] == [
                ("dram", False, "remap_failure")
            ]
        elif kind == "sram_uce":
            assert types == {"XidRaised", "EccErrorObserved"} and len(xids) == 1 and xids <= {94, 95}
            assert [(e["memory"], e["correctable"]) for e in ecc] == [("sram", False)]
        elif kind == "gsp_error":
            assert types == {"XidRaised"} and len(xids) == 1 and xids <= {119, 120}
        elif kind == "nvlink":
            assert types == {"XidRaised"} and xids == {74}
        elif kind == "pmu_halt":
            assert types == {"XidRaised"} and xids == {62}
        elif kind == "link_down":
            assert types == {"LinkEventObserved"} and [e["kind"] for e in links] == ["down"]
        elif (
            kind == "nic"
        ):  # the NIC itself is gone, not its cable: told apart so it gets a NIC, not a cable crew
            assert types == {"LinkEventObserved"} and [e["kind"] for e in links] == ["nic_lost"]
        elif kind == "link_flap":
            assert types == {"LinkEventObserved"} and [e["kind"] for e in links] == ["flap"]
        else:  # software, host_maintenance, nccl_watchdog, silent_data_corruption, thermal, ssd, psu
            assert kind in FAULT_KINDS and not hardware, (kind, hardware)
        # the hardware signal names the faulty GPU or NIC port of the truth table
        assert all(
            e["payload"]["gpu"] == f["gpu"] for e in hardware if e["event_type"] != "LinkEventObserved"
        )
        assert all(e["port"] == f["port"] for e in links)
        ji = [e["payload"] for e in events if e["event_type"] == "JobInterrupted"]
        if f["interrupts_job"]:
            assert len(ji) == 1 and ji[0]["cause"] == f["cause"] and ji[0]["detail"] == kind
            assert ji[0]["gpu"] == f["gpu"]
        else:
            assert ji == []
        checked[kind] += 1
    assert result.counts["JobInterrupted"] == sum(f["interrupts_job"] for f in faults)
    assert set(checked) == FAULT_KINDS, sorted(FAULT_KINDS - set(checked))


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
        r["payload"]["count"]
        for r in sink.records
        if r["event_type"] == "EccErrorObserved" and r["payload"]["correctable"]
    )
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


def test_by_default_samples_drop_out_and_events_arrive_twice(simulate, noisy_settings) -> None:
    from collections import Counter

    from producers.runner import SimulationRequest, run_simulation
    from producers.sinks.base import MemorySink

    exact, a = simulate(days=2, interval_s=600)
    b = MemorySink()
    request = SimulationRequest(preset="small", days=2, interval_s=600, start_ts=exact.start_ts, sink="null")
    noisy = run_simulation(noisy_settings, request, sink=b)
    delivery = noisy.manifest["delivery"]
    assert delivery["samples_dropped"] > 0 and delivery["events_duplicated"] > 0
    sent = Counter(r["event_id"] for r in b.records)
    twice = {e for e, n in sent.items() if n == 2}
    assert len(twice) == delivery["events_duplicated"] and max(sent.values()) == 2
    lost = {r["event_id"] for r in a.records} - set(sent)
    assert len(lost) == delivery["samples_dropped"]
    assert all(r["event_type"] == "HostSampled" for r in a.records if r["event_id"] in lost)
    # the same event: a duplicate is a second delivery of the record, not a new one
    kept = {r["event_id"]: r for r in a.records}
    assert all(r == kept[r["event_id"]] for r in b.records)
    assert noisy.counts["HostSampled"] == exact.counts["HostSampled"] - len(lost) + sum(
        1 for e in twice if kept[e]["event_type"] == "HostSampled"
    )


def test_hosts_reporting_only_the_host_send_the_same_faults_without_their_part(simulate, tmp_path) -> None:
    """``failures.host_only_fraction``: those hosts' fault events name no GPU, port or bus id; the
    rest of the run (which faults, when, on which host) is the same as without them."""
    plain_cfg = config_with("small", lemons={"fraction": 0.2})
    some_cfg = config_with(plain_cfg, failures={"host_only_fraction": 0.5})
    _, plain = simulate(
        fleet=plain_cfg, preset=None, days=20, interval_s=86400, keep_samples=False, truth_out=tmp_path / "a"
    )
    _, some = simulate(
        fleet=some_cfg, preset=None, days=20, interval_s=86400, keep_samples=False, truth_out=tmp_path / "b"
    )
    hosts = pq.read_table(tmp_path / "b" / "hosts.parquet").to_pylist()
    only = {h["host_id"] for h in hosts if h["host_only"]}
    assert 0 < len(only) < len(hosts)
    assert not any(h["host_only"] for h in pq.read_table(tmp_path / "a" / "hosts.parquet").to_pylist())

    def same(r: dict) -> tuple:  # type: ignore[type-arg]  # ids carry the run's id, which hashes its config
        return r["event_id"].split("-", 1)[1], r["event_type"], r["host_id"], r["ts"], r["agent_seq"]

    assert [same(r) for r in plain.records] == [same(r) for r in some.records]
    parts = ("gpu", "port", "pci_bus_id", "device", "peer")
    seen = 0
    for a, b in zip(plain.records, some.records, strict=True):
        if b["event_type"] not in HARDWARE or b["host_id"] not in only:
            assert a["payload"] == b["payload"]
            continue
        seen += 1
        assert all(b["payload"][k] in (None, "") for k in parts if k in b["payload"])
        assert {k: v for k, v in a["payload"].items() if k not in parts} == {
            k: v for k, v in b["payload"].items() if k not in parts
        }
    assert seen > 0
