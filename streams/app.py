"""The Faust app of a detect worker: topics, tables, stages, and the steps its agents (``streams.agents``) take.

validate (-> fleet.dlq) -> repeat offender (errors, keyed by host) and host windows (samples,
read by ``streams.samples.SamplesStage``: a plain consumer, since samples are most of the input)
-> cluster stage (summaries repartitioned by cluster) -> fleet.findings -> planner (findings
repartitioned by maintenance domain) -> fleet.actions + fleet.alerts. At least once; every
output carries a deterministic id, and the planner never re-emits an action already in the log.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import faust

from schemas import Codec, FindingRaised, HostInventoried, HostVersionsReported
from streams import state_store
from streams.actions_input import ActionsInput
from streams.agents import ClusterParts, ErrorsParts, LogParts, PlannerParts, register_agents
from streams.alerts import DlqSurge
from streams.cache import CheckpointCache
from streams.console import ConsoleInput, register_console
from streams.core.fleet.lifecycle import LOG_EVENT_TYPES, FleetState
from streams.core.fleet.snapshot import SNAPSHOT_NAME, FleetSnapshots
from streams.core.inventory import Inventory
from streams.core.peers.stage import ClusterStage
from streams.core.planning.order import all_sources
from streams.core.planning.planner import Planner
from streams.core.planning.writers import WriterMarks
from streams.core.policy import Policy
from streams.core.samples.folder import SampleFolder
from streams.fatal import exit_process
from streams.faust_app import faust_app
from streams.faust_transport import short_fetch_waits
from streams.findings_log import FindingsLog
from streams.fleet_fold import FleetFold
from streams.fleet_metrics import FleetCollector, fleet_view
from streams.fleet_reads import FleetReads
from streams.intake import Intake
from streams.membership import instance_id, stage_instance_id
from streams.metrics import DetectMetrics
from streams.outputs import Outputs, OutputTopics
from streams.planner_shell import PlannerShell
from streams.progress_feed import ProgressFeed
from streams.sample_partitions import SamplePartitions
from streams.samples import SamplesStage
from streams.tailer import LogTailer, WorkerLogs
from streams.topology import checkpoint_topic, samples_group
from streams.web import WorkerStatus, register_views

if TYPE_CHECKING:
    from ground.settings import Settings

log = logging.getLogger(__name__)

RETRY_BACKOFF_MS = 1000


class DetectApp:
    """One detect worker's Faust app plus the in-memory views (inventory, fleet state) it serves."""

    def __init__(
        self,
        settings: Settings,
        policy: Policy,
        *,
        data_dir: Path,
        partitions: dict[str, int] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.policy = policy
        self.codec = Codec()
        self.metrics = DetectMetrics()
        self.inventory = Inventory()
        inventory_known = asyncio.Event()  # set once the inventory has been read to its end
        d = settings.detect
        self.exit_now = exit_process  # ends the worker when its fold and its log disagree (tests replace it)
        self.fold = FleetFold(
            FleetSnapshots(
                data_dir / SNAPSHOT_NAME,
                settings.topics.actions.name,
                every=d.snapshot_every,
                keep_ids=d.remember_ids,
                ended_horizon_ms=round(d.forget_ended_after_s * 1000),
            ),
            clock,
        )
        planner = Planner(policy, members=self.inventory.hosts_in, view=self.inventory)
        cluster_stage = ClusterStage(policy.slow_host)
        t = settings.topics
        parts = partitions or {}
        self.instance_id = instance_id(d, data_dir)
        self.app = faust_app(settings, data_dir, self.instance_id)
        short_fetch_waits(self.app)  # a finding or a progress mark is handled as it comes, not after 1.5 s
        raw: dict[str, Any] = {"key_serializer": "raw", "value_serializer": "raw"}
        self.errors_topic = self.app.topic(t.errors.name, **raw)
        findings_topic = self.app.topic(t.findings.name, **raw)
        self.actions_topic = self.app.topic(t.actions.name, **raw)
        alerts_topic = self.app.topic(t.alerts.name, **raw)
        dlq_topic = self.app.topic(t.dlq.name, **raw)
        internal: dict[str, Any] = {
            "internal": True,
            "partitions": d.internal_partitions,
            "key_serializer": "raw",
            "value_serializer": "json",
        }
        # the samples stage writes it with its own producer (``SummaryBundle`` bytes): the agent decodes them
        summaries: dict[str, Any] = {**internal, "value_serializer": "raw"}
        self.summaries_topic = self.app.topic(f"{d.app_id}-cluster-summaries", **summaries)
        self.planner_topic = self.app.topic(f"{d.app_id}-planner", **internal)
        table: dict[str, Any] = {
            "schema": faust.Schema(key_serializer="json", value_serializer="json"),
            "options": state_store.table_options(d.state_write_buffer_mb, d.state_block_cache_mb),
        }
        self.repeat_table = self.app.Table(
            "repeat-hosts", partitions=parts.get(t.errors.name, t.errors.partitions), **table
        )
        self.cluster_table = self.app.Table("cluster-windows", partitions=d.internal_partitions, **table)
        # findings the planner holds until every source has passed their event time (streams.core.planning.order)
        self.held_table = self.app.Table("planner-held", partitions=d.internal_partitions, **table)
        self.plans = PlannerShell(
            planner,
            self.held_table,
            size=self.inventory.domain_size,
            sources=all_sources(parts.get(t.errors.name, t.errors.partitions), d.internal_partitions),
            partitions=d.internal_partitions,
            stage_of={
                self.errors_topic.get_topic_name(): "errors",
                self.summaries_topic.get_topic_name(): "cluster",
            },
            ordered=d.plan_order == "event_time",
            quiet_s=d.plan_quiet_s,
            domain_of=self.inventory.domain_of,
            writers=WriterMarks(frozenset(d.progress_writers), d.progress_claims)
            if d.progress_writers or (d.progress_claims and d.plan_order == "event_time")
            else None,
        )
        # the detection core's keyed state is in this worker's tables: the cluster stage's behind a cache
        cluster_cache = CheckpointCache(self.cluster_table, d.checkpoint_every, lambda k: k.endswith("|meta"))
        # aiokafka retries a lost broker every retry_backoff_ms (100 by default): with the broker gone
        # the tailers and the samples stage would reconnect, fail and log ten times a second each
        client = {**settings.kafka.aiokafka(settings.bootstrap_servers), "retry_backoff_ms": RETRY_BACKOFF_MS}
        inventory_log = LogTailer(
            t.inventory.name,
            client,
            self.inventory.apply,
            self.codec,
            event_type=frozenset({HostInventoried.EVENT_TYPE, HostVersionsReported.EVENT_TYPE}),
        )
        actions_log = LogTailer(
            t.actions.name,
            client,
            self.fold.apply,
            self.codec,
            event_type=LOG_EVENT_TYPES,
            start=self.fold.start,
            on_rewind=self.fold.rewind,
            on_progress=self.fold.progress,
        )
        self.outputs = Outputs(
            OutputTopics(findings_topic, self.actions_topic, alerts_topic, dlq_topic, self.planner_topic),
            self.codec,
            self.metrics,
            DlqSurge(policy.alerts.dlq_surge_count, policy.alerts.dlq_surge_window),
            clock=clock,
            inventory=self.inventory,
            inventory_tailer=inventory_log,
            exit_now=lambda code: self.exit_now(code),  # read when called: tests replace ``exit_now``
        )
        self.intake = Intake(
            self.codec, policy.validation, self.metrics, self.outputs.send_dead_letter, clock
        )
        findings_log = FindingsLog()
        findings_tailer = LogTailer(
            t.findings.name, client, findings_log.apply, self.codec, event_type=FindingRaised.EVENT_TYPE
        )
        self.logs = WorkerLogs(inventory_log, actions_log, findings_tailer)
        samples = SamplePartitions(
            topic=t.samples.name,
            summaries_topic=self.summaries_topic.get_topic_name(),
            checkpoint_topic=checkpoint_topic(settings),
            client_config=client,
            folder=SampleFolder(
                policy,
                parts.get(t.samples.name, t.samples.partitions),
                self.inventory.clusters,
            ),
            codec=self.codec,
            policy=policy,
            metrics=self.metrics,
            dead_letter=self.outputs.send_dead_letter,
            on_watermark=self.intake.advance_watermark,
            clock=clock,
        )
        self.samples_stage = SamplesStage(
            samples,
            group_id=samples_group(settings),
            checkpoint_s=d.samples_checkpoint_s,
            group_config={
                "session_timeout_ms": round(d.session_timeout_s * 1000),
                "heartbeat_interval_ms": round(d.heartbeat_interval_s * 1000),
                "group_instance_id": stage_instance_id(self.instance_id, "samples"),
            },
        )
        self.metrics.add_lag_source(self._lag)
        self.metrics.registry.register(
            FleetCollector(lambda: fleet_view(self.fleet, planner, self.inventory))
        )
        self.agents = register_agents(
            self.app,
            errors=ErrorsParts(
                topic=self.errors_topic,
                policy=policy,
                intake=self.intake,
                repeat=self.repeat_table,
                fold=self.fold,
                domain_of=self.inventory.domain_of,
                outputs=self.outputs,
                metrics=self.metrics,
                source_times=self.plans.source_times,
            ),
            cluster=ClusterParts(
                topic=self.summaries_topic,
                intake=self.intake,
                stage=cluster_stage,
                cache=cluster_cache,
                fold=self.fold,
                domain_of=self.inventory.domain_of,
                outputs=self.outputs,
                metrics=self.metrics,
                source_times=self.plans.source_times,
                samples_stage=self.samples_stage,
            ),
            planner=PlannerParts(
                topic=self.planner_topic,
                plans=self.plans,
                fold=self.fold,
                logs=self.logs,
                intake=self.intake,
                outputs=self.outputs,
                metrics=self.metrics,
                samples_lag=self.samples_stage.lag,
                clusters=self.inventory.clusters,
                inventory_known=inventory_known,
                tick_interval_s=d.tick_interval_s,
                internal_partitions=d.internal_partitions,
                feed=None
                if self.plans.writers is None
                else ProgressFeed(t.progress.name, client, self.plans.writers, self.plans.writer_reported),
            ),
            logs=LogParts(self.logs, inventory_known),
        )
        reads = FleetReads(self.fold, self.inventory, planner, findings_log, policy.planner.reset_within)
        status = WorkerStatus(self.app, d.app_id, self.intake, self.logs, self.samples_stage)
        actions = ActionsInput(settings.detect.ops_token, self.codec, self.actions_topic)
        register_views(self.app, reads, status, actions, self.metrics)
        register_console(self.app, ConsoleInput(reads, settings.detect.ops_token, clock))

    # -- shared steps ---------------------------------------------------------------------------

    @property
    def last_offsets(self) -> dict[tuple[str, int], int]:
        """Where each Faust-consumed partition was last read (``Intake``)."""
        return self.intake.last_offsets

    @property
    def fleet(self) -> FleetState:
        """The folded fleet state now (a new object after a rewind of ``fleet.actions``)."""
        return self.fold.fleet

    def _lag(self) -> Iterable[tuple[str, int, int]]:
        consumer = getattr(self.app, "_consumer", None)
        if consumer is None:
            return []
        out = []
        for (topic, partition), last in sorted(self.intake.last_offsets.items()):
            try:
                high = consumer.highwater(faust.types.TP(topic, partition))
            except Exception:  # not assigned any more, or no fetch yet
                continue
            if high is not None:
                out.append((topic, partition, max(0, high - last - 1)))
        return out + self.samples_stage.lag()
