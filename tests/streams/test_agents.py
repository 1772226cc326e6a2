"""The detect worker's Faust agents under ``agent.test_context()``: no broker, memory tables.

The pure rules have their own tests; these check the wiring around them — what an agent
decodes, keeps in its table, and sends where — with Faust's test harness and a producer
that records instead of sending.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest.mock import AsyncMock, MagicMock

import msgspec
import pytest

from ground.settings import Settings
from schemas import Codec
from streams.app import DetectApp
from streams.core.peers.messages import (
    ClusterItem,
    HostSummary,
    SourceIdle,
    SourceProgress,
    SummaryBundle,
    encode,
)
from streams.core.policy import Policy
from streams.testing import START_TS
from tests.streams import factories as f


class Sent:
    """Records what the app's producer was asked to send, per topic."""

    def __init__(self) -> None:
        self.by_topic: dict[str, list[tuple[bytes | None, Any]]] = {}

    async def send(self, topic: str, key: bytes | None, value: Any, *args: Any, **kwargs: Any) -> Any:
        self.by_topic.setdefault(topic, []).append((key, value))
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        done.set_result(MagicMock())
        return done

    def decoded(self, topic: str) -> list[dict[str, Any]]:
        codec = Codec()
        return [codec.decode(v).record for _, v in self.by_topic.get(topic, [])]


def run(app: DetectApp, body: Any) -> None:
    """Run a test body on the Faust app's own event loop."""
    app.app.loop.run_until_complete(body)


@pytest.fixture()
def detect(tmp_path: Path, policy: Policy) -> Iterator[tuple[DetectApp, Sent]]:
    settings = Settings.load(detect={"store": "memory", "app_id": "agents-test"})
    app = DetectApp(settings, policy, data_dir=tmp_path, clock=lambda: (START_TS + 3_600_000) / 1000)
    sent = Sent()
    app.app.producer = MagicMock(
        name="producer", maybe_start=AsyncMock(), start=AsyncMock(), send=sent.send, send_and_wait=AsyncMock()
    )
    app.logs.inventory.catch_up = AsyncMock()  # type: ignore[method-assign]
    app.app.finalize()
    app.app.flow_control.resume()
    yield app, sent


def test_second_dram_uce_on_a_gpu_raises_one_finding(detect: tuple[DetectApp, Sent]) -> None:
    app, sent = detect
    codec = Codec()
    run(app, _errors_twice(app, codec))
    findings = sent.decoded(app.settings.topics.findings.name)
    assert [(r["host_id"], r["payload"]["scope_key"], r["payload"]["count"]) for r in findings] == [
        ("lemon-1", "lemon-1/3", 2)
    ]
    assert app.metrics.events.labels(app.settings.topics.errors.name, "EccErrorObserved")._value.get() == 2


async def _errors_twice(app: DetectApp, codec: Codec) -> None:
    async with app.agents["errors"].test_context() as agent:
        for minutes in (0, 30):
            record = f.ecc(host="lemon-1", gpu=3, ts=START_TS + minutes * 60_000)
            await agent.put(codec.encode(record), key=b"lemon-1")


def test_undecodable_error_record_goes_to_the_dlq_and_the_agent_goes_on(
    detect: tuple[DetectApp, Sent],
) -> None:
    app, sent = detect
    codec = Codec()

    async def feed() -> None:
        async with app.agents["errors"].test_context() as agent:
            await agent.put(b"\x00\x00\x00\x00\x63garbage", key=b"h1")
            await agent.put(codec.encode(f.xid(79, host="h2", ts=START_TS)), key=b"h2")

    run(app, feed())
    dead = sent.decoded(app.settings.topics.dlq.name)
    assert len(dead) == 1 and dead[0]["payload"]["source_topic"] == app.settings.topics.errors.name
    assert app.metrics.events.labels(app.settings.topics.errors.name, "XidRaised")._value.get() == 1


def _bundle() -> SummaryBundle:
    window = 5 * 60_000
    items: list[ClusterItem] = []
    for w in range(4):
        start = START_TS + w * window
        for h in range(10):
            step = 1100.0 if h == 7 else 1000.0 + h * 0.5
            items.append(
                HostSummary(
                    host_id=f"h{h}",
                    cluster="c0",
                    window_start=start,
                    window_end=start + window,
                    step_ms=step,
                    bus_bw=380.0,
                    n=30,
                    wm=start + window,
                    src=0,
                    nsrc=1,
                )
            )
    items.append(SourceProgress(cluster="c0", src=0, nsrc=1, wm=START_TS + 12 * window))
    return SummaryBundle("c0", tuple(items))


def _as_older_workers_wrote_it(bundle: SummaryBundle) -> bytes:
    """The same bundle as JSON of plain dicts, without the version fields (before messages were typed)."""
    body = msgspec.to_builtins(bundle)
    for item in [body, *body["items"]]:
        del item["v"]
    return json.dumps(body).encode()


@pytest.mark.parametrize("wire", [encode, _as_older_workers_wrote_it])
def test_cluster_agent_scores_a_bundle_and_reports_the_slow_host(
    detect: tuple[DetectApp, Sent], wire: Callable[[SummaryBundle], bytes]
) -> None:
    app, sent = detect

    async def feed() -> None:
        async with app.agents["cluster"].test_context() as agent:
            await agent.put(wire(_bundle()), key=b"c0")

    run(app, feed())
    findings = sent.decoded(app.settings.topics.findings.name)
    assert [r["host_id"] for r in findings] == ["h7"]
    assert findings[0]["payload"]["evidence"]["slow_windows"].startswith("2/")


def test_the_cluster_agent_tells_the_planner_shell_when_every_samples_partition_is_idle(
    detect: tuple[DetectApp, Sent],
) -> None:
    app, _ = detect

    async def feed(item: ClusterItem) -> None:
        async with app.agents["cluster"].test_context() as agent:
            await agent.put(encode(SummaryBundle("c0", (item,))), key=b"c0", partition=0)

    run(app, feed(SourceProgress(cluster="c0", src=0, nsrc=1, wm=START_TS)))
    assert not app.plans.source_times.upstream_idle(0)
    run(app, feed(SourceIdle(cluster="c0", src=0, nsrc=1, wm=START_TS)))
    assert app.plans.source_times.upstream_idle(0)


def test_a_malformed_cluster_stage_message_is_dead_lettered_and_the_agent_goes_on(
    detect: tuple[DetectApp, Sent],
) -> None:
    app, sent = detect
    topic = app.summaries_topic.get_topic_name()
    bad = [
        b"{not json",
        json.dumps({"type": "bundle", "cluster": "c0"}).encode(),  # no items
        json.dumps({"type": "wm", "cluster": "c0", "src": "zero", "nsrc": 1, "wm": 5}).encode(),
        json.dumps({"type": "planner", "cluster": "c0"}).encode(),  # another stage's kind
    ]

    async def feed() -> None:
        async with app.agents["cluster"].test_context() as agent:
            for value in bad:
                await agent.put(value, key=b"c0")
            await agent.put(encode(_bundle()), key=b"c0")

    run(app, feed())
    dead = sent.decoded(app.settings.topics.dlq.name)
    assert [d["payload"]["original_value"] for d in dead] == bad
    assert all(d["payload"]["reason"].startswith("not a cluster-stage message: ") for d in dead)
    assert {d["payload"]["source_topic"] for d in dead} == {topic}
    assert [r["host_id"] for r in sent.decoded(app.settings.topics.findings.name)] == ["h7"]


def _raised_by(topic: str = "fleet.errors", partition: int = 0, offset: int = 7) -> Any:
    """The coordinates of the message a finding came from (as a Faust message carries them)."""
    return MagicMock(topic=topic, partition=partition, offset=offset, key=b"h1", timestamp=None)


def test_a_finding_the_planner_cannot_act_on_is_published_and_dead_lettered_not_planned(
    detect: tuple[DetectApp, Sent],
) -> None:
    """An unknown recommended_action would raise in the planner and jam its whole domain."""
    app, sent = detect
    app.logs.inventory.catch_up = AsyncMock()  # type: ignore[method-assign]
    planned = app.planner_topic.send = AsyncMock()  # type: ignore[method-assign]
    run(app, app.outputs.send_finding(f.finding("h1", fid="bad", action="bogus"), _raised_by()))
    run(app, app.outputs.send_finding(f.finding("h2", fid="good"), _raised_by(offset=8)))
    dead = sent.decoded(app.settings.topics.dlq.name)
    assert [d["payload"]["reason"] for d in dead] == [
        "unplannable_finding: unknown recommended_action 'bogus'"
    ]
    assert dead[0]["payload"]["source_offset"] == 7
    assert [r["event_id"] for r in sent.decoded(app.settings.topics.findings.name)] == ["bad", "good"]
    assert [c.kwargs["value"]["finding"]["host_id"] for c in planned.await_args_list] == ["h2"]
    assert all(c.kwargs["force"] for c in planned.await_args_list)  # ahead of the source's progress


def test_a_catch_up_timeout_delays_a_finding_instead_of_dropping_it(
    detect: tuple[DetectApp, Sent], monkeypatch: pytest.MonkeyPatch
) -> None:
    """faust-streaming acks an event whose processing raised: a timeout must be retried, not raised."""
    import streams.tailer

    app, _ = detect
    monkeypatch.setattr(streams.tailer, "CATCH_UP_RETRY_S", 0.01)
    app.logs.inventory.catch_up = AsyncMock(side_effect=[TimeoutError(), None])  # type: ignore[method-assign]
    planned = app.planner_topic.send = AsyncMock()  # type: ignore[method-assign]
    run(app, app.outputs.send_finding(f.finding("h1", fid="ok"), _raised_by()))
    assert app.logs.inventory.catch_up.await_count == 2
    assert [c.kwargs["value"]["finding"]["host_id"] for c in planned.await_args_list] == ["h1"]


def test_the_errors_agent_plans_its_finding_before_it_reports_the_partition_past_it(
    detect: tuple[DetectApp, Sent],
) -> None:
    app, _ = detect
    app.logs.inventory.catch_up = AsyncMock()  # type: ignore[method-assign]
    order: list[str] = []

    async def planned(*args: Any, **kwargs: Any) -> None:
        order.append(f"plan@{app.plans.source_times.errors.get(0)}")

    app.planner_topic.send = planned  # type: ignore[method-assign]
    codec = Codec()

    async def feed() -> None:
        async with app.agents["errors"].test_context() as agent:
            for i in range(2):
                ecc = f.ecc(host="h1", ts=START_TS + i * 1000, gpu=0)
                await agent.put(codec.encode(ecc), key=b"h1", partition=0)

    run(app, feed())
    assert order == [f"plan@{START_TS - 1}"]  # sent while the partition was still before it
    assert app.plans.source_times.errors[0] == START_TS + 1000 - 1


def test_a_revoked_partition_is_forgotten_by_the_progress_it_reports(detect: tuple[DetectApp, Sent]) -> None:
    """Back after a rebalance, another worker may have handled its records: only its commit says how far."""
    from faust.types import TP

    app, _ = detect
    codec = Codec()
    topic = app.errors_topic.get_topic_name()

    async def feed() -> None:
        async with app.agents["errors"].test_context() as agent:
            await agent.put(codec.encode(f.ecc(host="h1", ts=START_TS)), key=b"h1", partition=0)

    run(app, feed())
    tp = TP(topic, 0)
    app.plans._quiet[tp] = (0, 0.0)
    assert (topic, 0) in app.last_offsets
    run(app, app.app.on_partitions_revoked.send({tp}))
    assert (topic, 0) not in app.last_offsets and tp not in app.plans._quiet


def test_the_planner_holds_a_finding_until_every_source_has_passed_it(detect: tuple[DetectApp, Sent]) -> None:
    from streams.core.messages import PlanFinding, PlanProgress, SourceMark, to_wire

    app, _ = detect
    app.plans.ordered = True
    app.logs.actions.catch_up = AsyncMock()  # type: ignore[method-assign]
    published: list[list[Any]] = []
    app.outputs.publish = AsyncMock(side_effect=lambda actions: published.append(actions))  # type: ignore[method-assign]
    finding = f.finding("h1", ts=START_TS + 10).to_record()
    domain = "d0"
    partition = app.plans.partition_of(domain)
    sources = sorted(app.plans.sources)
    behind = [SourceMark(s, START_TS, False) for s in sources]
    past = [SourceMark(s, START_TS + 10, False) for s in sources]

    async def feed() -> None:
        async with app.agents["planner"].test_context() as agent:
            await agent.put(to_wire(PlanFinding(domain, finding)), key=domain.encode(), partition=partition)
            await agent.put(to_wire(PlanProgress(behind)), partition=partition)
            await agent.put(to_wire(PlanProgress(past)), partition=partition)

    run(app, feed())
    kinds = [[a.kind for a in actions] for actions in published]
    assert kinds[:2] == [[], []]  # held: one source or more not past it yet
    assert kinds[2][0] == "suspected" and "rma_opened" in kinds[2]
    assert len(app.held_table) == 0


def test_the_planner_sizes_a_domain_from_the_inventory_read_to_its_end(
    detect: tuple[DetectApp, Sent],
) -> None:
    """A restarted worker's first messages come before its inventory is read: deciding them then
    sized the domain by the hosts seen failing (2 of 2 over a failure buffer of 1) and halted it."""
    from streams.core.messages import PlanFinding, to_wire
    from tests.streams.core.test_inventory import inventoried

    app, _ = detect
    app.plans.ordered = False  # decided as they come: no progress marks needed
    domain = "d0"

    async def read_inventory() -> None:  # the tailer reaching the end of the inventory topic
        for i in range(8):
            app.inventory.apply(inventoried(f"h{i}", domain))

    app.logs.inventory.catch_up = AsyncMock(side_effect=read_inventory)  # type: ignore[method-assign]
    app.logs.actions.catch_up = AsyncMock()  # type: ignore[method-assign]
    published: list[list[Any]] = []
    app.outputs.publish = AsyncMock(side_effect=lambda actions: published.append(actions))  # type: ignore[method-assign]
    partition = app.plans.partition_of(domain)

    async def feed() -> None:
        async with app.agents["planner"].test_context() as agent:
            for host in ("h1", "h2"):
                finding = f.finding(host, fid=f"f-{host}", ts=START_TS + 10).to_record()
                await agent.put(
                    to_wire(PlanFinding(domain, finding)), key=domain.encode(), partition=partition
                )

    run(app, feed())
    kinds = [a.kind for actions in published for a in actions]
    assert kinds.count("suspected") == 2
    assert "train_halted" not in kinds  # 2 failing of 8 is within the 25 % failure buffer


def test_an_actions_alerts_are_sent_before_the_action(detect: tuple[DetectApp, Sent]) -> None:
    """Nothing derives alerts from the log again: an action must never land without its alert."""
    from streams.core.fleet.lifecycle import FleetState
    from streams.core.planning.planner import Planner

    app, _ = detect
    order: list[str] = []

    def recorder(what: str) -> Any:
        async def send(*args: Any, **kwargs: Any) -> Any:
            order.append(what)
            done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done

        return send

    app.actions_topic.send = recorder("action")  # type: ignore[method-assign]
    app.outputs._send_alert = recorder("alert")  # type: ignore[method-assign]
    actions = Planner(app.policy).on_finding(FleetState(), f.finding("h1"), "d0", 20)  # ends with rma_opened
    run(app, app.outputs.publish(actions))
    assert order == ["action"] * (len(actions) - 1) + ["alert", "action"]


def test_a_publish_the_broker_refuses_ends_the_worker(detect: tuple[DetectApp, Sent]) -> None:
    """The actions are in the fleet state but not the log: going on would build on them for good."""
    from aiokafka.errors import KafkaTimeoutError

    from streams.core.fleet.lifecycle import FleetState
    from streams.core.planning.planner import Planner
    from streams.fatal import EXIT_TEMPFAIL

    class Exited(Exception):
        pass

    exits: list[int] = []

    def exit_now(code: int) -> None:  # os._exit in the worker: nothing after it runs
        exits.append(code)
        raise Exited(code)

    app, _ = detect
    app.exit_now = exit_now

    async def refused(*args: Any, **kwargs: Any) -> Any:
        raise KafkaTimeoutError()

    app.actions_topic.send = refused  # type: ignore[method-assign]
    actions = Planner(app.policy).on_finding(FleetState(), f.finding("h1"), "d0", 20)
    with pytest.raises(Exited):
        run(app, app.outputs.publish(actions))
    assert exits == [EXIT_TEMPFAIL]


def test_a_dead_letter_of_the_largest_record_kafka_takes_fits_the_dlq(detect: tuple[DetectApp, Sent]) -> None:
    """The dead letter is the whole original plus its reason: it must not be refused for its size."""
    from schemas import DecodeError
    from streams.deadletter import dead_letter

    app, _ = detect
    broker_default_max = 1_048_588  # message.max.bytes: the largest record any other topic accepts
    letter = dead_letter(
        DecodeError("framing: not a Confluent-framed record"),
        topic="fleet.samples",
        partition=5,
        offset=2**40,
        key=b"h" * 64,
        value=b"\x07" * broker_default_max,
        timestamp_ms=START_TS,
    )
    size = len(Codec().encode(letter)) + 512  # record and batch headers
    dlq = app.settings.topics.dlq
    assert size <= (dlq.max_message_bytes or 0)
    assert dlq.configs()["max.message.bytes"] == str(dlq.max_message_bytes)
    assert size <= app.app.conf.producer_max_request_size
