"""The slow-host detector's messages and stored state are typed and versioned, and read every older shape."""

from __future__ import annotations

import json

import msgspec
import pytest

from streams.core.messages import MESSAGE_VERSION
from streams.core.peers.messages import (
    HostSummary,
    SourceIdle,
    SourceProgress,
    SummaryBundle,
    cluster_message,
    encode,
    items_of,
)
from streams.core.peers.state import ClusterHistory, ClusterMeta, HostHistory, HostWindows, Window, emitted_of
from streams.core.samples.checkpoint import CHECKPOINT_VERSION, PartitionState

MIN = 60_000
T = 1_700_000_100_000

# What workers wrote before the messages were typed (json.dumps of dicts: no ``v``).
OLD_SUMMARY = {
    "host_id": "h1",
    "cluster": "c0",
    "window_start": T,
    "window_end": T + 5 * MIN,
    "step_ms": 1001.5,
    "bus_bw": 380.0,
    "job": "j1",
    "n": 30,
    "wm": T + 6 * MIN,
    "type": "summary",
    "src": 2,
    "nsrc": 4,
}
OLD_WM = {"type": "wm", "cluster": "c0", "src": 2, "nsrc": 4, "wm": T + 6 * MIN}
OLD_IDLE = {"type": "idle", "cluster": "c1", "src": 3, "nsrc": 4, "wm": -1}
OLD_BUNDLE = {"type": "bundle", "cluster": "c0", "items": [OLD_SUMMARY, OLD_WM, OLD_IDLE]}

SUMMARY = HostSummary("h1", "c0", T, T + 5 * MIN, 1001.5, 380.0, 30, T + 6 * MIN, "j1", 2, 4)
WM = SourceProgress("c0", 2, 4, T + 6 * MIN)
IDLE = SourceIdle("c1", 3, 4, -1)


def _wire(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    ("old", "typed"),
    [
        (OLD_SUMMARY, SUMMARY),
        (OLD_WM, WM),
        (OLD_IDLE, IDLE),
        (OLD_BUNDLE, SummaryBundle("c0", (SUMMARY, WM, IDLE))),
    ],
    ids=["summary", "wm", "idle", "bundle"],
)
def test_messages_older_workers_sent_decode_as_version_1(old: dict[str, object], typed: object) -> None:
    for value in (_wire(old), old):  # the bytes on the topic, or JSON already parsed
        assert cluster_message(value) == typed
    assert cluster_message(_wire(old)).v == MESSAGE_VERSION


def test_a_summary_from_before_jobs_and_partitions_were_sent_still_reads() -> None:
    oldest = {k: v for k, v in OLD_SUMMARY.items() if k not in ("job", "src", "nsrc")}
    summary = cluster_message(_wire(oldest))
    assert isinstance(summary, HostSummary) and (summary.job, summary.src, summary.nsrc) == (None, 0, 1)
    assert items_of(summary) == (summary,)  # sent alone, as before bundles


def test_the_wire_keeps_the_keys_older_workers_read_plus_the_version() -> None:
    """Plus a summary's ``degraded`` share (job-independent telemetry), which an older worker ignores."""
    body = json.loads(encode(SummaryBundle("c0", (SUMMARY, WM, IDLE))))
    assert set(body) == {*OLD_BUNDLE, "v"}
    assert [set(item) for item in body["items"]] == [
        {*OLD_SUMMARY, "v", "degraded"},
        {*OLD_WM, "v"},
        {*OLD_IDLE, "v"},
    ]
    older = msgspec.json.decode(encode(SummaryBundle("c0", (SUMMARY,))), type=_OlderBundle)
    assert older.items[0].host_id == SUMMARY.host_id  # an older worker's summary type reads the new wire
    assert cluster_message(encode(SummaryBundle("c0", (SUMMARY,)))) == SummaryBundle("c0", (SUMMARY,))


@pytest.mark.parametrize(
    "value",
    [
        b"{not json",
        b"[]",
        _wire({"type": "bundle", "cluster": "c0"}),  # no items
        _wire({"type": "bundle", "cluster": "c0", "items": [{"type": "tick", "domain": "d", "ts": 1}]}),
        _wire({**OLD_WM, "src": "two"}),
        _wire({k: v for k, v in OLD_SUMMARY.items() if k != "type"}),  # untagged
        _wire({"type": "finding", "domain": "d", "finding": {}}),  # the planner's kind
    ],
)
def test_anything_else_is_refused_with_the_reason(value: bytes) -> None:
    with pytest.raises(msgspec.DecodeError):
        cluster_message(value)


# -- stored state -------------------------------------------------------------------------------------------

OLD_CHECKPOINT = {
    "v": 1,
    "partition": 3,
    "next_offset": 48,
    "wm": T + 9 * MIN,
    "wm_window": T + 5 * MIN,
    "hosts": {
        "h1": {
            "wm": T + 9 * MIN,
            "closed": T + 5 * MIN,
            "w": {str(T + 5 * MIN): [4004.0, 1520.0, 4, T + 10 * MIN, "j1"]},
        },
        "h2": {
            "wm": T + 4 * MIN,
            "closed": None,
            "w": {str(T): [2000.0, 760.0, 2, T + 5 * MIN]},
        },  # no job kept yet
    },
}


class _OlderSummary(msgspec.Struct, tag="summary", tag_field="type"):
    """The summary an older worker decodes (no ``degraded``)."""

    host_id: str
    cluster: str
    window_start: int
    window_end: int
    step_ms: float
    bus_bw: float
    n: int
    wm: int
    job: str | None = None
    src: int = 0
    nsrc: int = 1
    v: int = 1


class _OlderBundle(msgspec.Struct, tag="bundle", tag_field="type"):
    cluster: str
    items: list[_OlderSummary]
    v: int = 1


def test_a_checkpoint_an_older_worker_wrote_resumes_unchanged() -> None:
    state = PartitionState.from_bytes(_wire(OLD_CHECKPOINT))
    assert (state.partition, state.next_offset, state.wm, state.wm_window) == (
        3,
        48,
        T + 9 * MIN,
        T + 5 * MIN,
    )
    assert state.hosts["h1"] == HostWindows(
        T + 9 * MIN, T + 5 * MIN, {str(T + 5 * MIN): Window(4004.0, 1520.0, 4, T + 10 * MIN, "j1")}
    )
    assert state.hosts["h2"].w[str(T)] == Window(2000.0, 760.0, 2, T + 5 * MIN, None)
    again = json.loads(state.to_bytes())
    assert again["v"] == CHECKPOINT_VERSION and set(again) == set(OLD_CHECKPOINT)
    assert again["hosts"]["h1"] == OLD_CHECKPOINT["hosts"]["h1"]  # type: ignore[index]


def test_cluster_meta_without_a_version_reads_as_version_1() -> None:
    unversioned = {
        "pwm": {"0": MIN},
        "idle": ["1"],
        "nsrc": 2,
        "closed": T,
        "open": {str(T + 5 * MIN): T + 10 * MIN},
    }
    meta = ClusterMeta.from_stored(unversioned)
    assert meta.v == 1 and meta.idle == ("1",) and meta.open == {str(T + 5 * MIN): T + 10 * MIN}
    assert meta.stored() == {**unversioned, "v": 1}
    assert ClusterMeta.from_stored(None) == ClusterMeta()


def test_cluster_history_without_a_version_reads_as_version_1() -> None:
    entry = [T, 1, 9.0, 0.0]
    hosts = {"h5": {"hist": [entry], "flagged": True}}
    finding = {"event_id": "f1", "host_id": "h5"}
    unversioned = {"hosts": hosts, "evaluated": T, "emitted": [["0.7", T, [finding]]]}
    hist = ClusterHistory.from_stored(unversioned)
    assert hist.hosts == {"h5": HostHistory(hist=((T, 1, 9.0, 0.0),), flagged=True)}
    assert hist.evaluated == T and hist.emitted == (("0.7", T, (finding,)),) and hist.v == 1
    assert hist.stored() == {**unversioned, "v": 1}
    assert emitted_of(unversioned) == hist.emitted
    with pytest.raises(msgspec.ValidationError):
        ClusterHistory.from_stored({"hosts": {"h5": {"hist": "slow"}}})
