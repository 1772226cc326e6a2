"""Publish one planned batch: gate each table, write data / quarantine / rejected files, then commit offsets.

Two phases so a crash can land between them (and tests can put it there): ``stage`` writes
every file atomically, ``commit`` advances each partition's manifest. Until the commit, readers
do not see the staged files and a restart deletes them (``reconcile``).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pyarrow as pa

from analytics.errors import LakeIntegrityError
from analytics.lake.batch import BatchPlan, TableBatch, rejected_files, split_by_partition, split_files
from analytics.lake.fs import LakeFS
from analytics.lake.layout import TopicPartition, data_path, rejected_path
from analytics.lake.manifest import CommittedRange, commit
from analytics.lake.quarantine import write_quarantine
from analytics.quality.gate import QualityGate, ValidationOutcome
from ground.settings.lake import LakeSettings

log = logging.getLogger(__name__)

INVENTORY_TABLE = "host_inventoried"
Clock = Callable[[], dt.datetime]


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class StagedBatch:
    """What ``stage`` wrote, by Kafka partition, ready to be committed."""

    plan: BatchPlan
    files: dict[TopicPartition, list[str]] = field(default_factory=dict)
    outcomes: list[ValidationOutcome] = field(default_factory=list)
    published_rows: int = 0
    quarantined_rows: int = 0
    rejected_rows: int = 0
    new_hosts: set[str] = field(default_factory=set)  # of every inventory record, published or quarantined

    def add(self, tp: TopicPartition, rel: str) -> None:
        self.files.setdefault(tp, []).append(rel)


class Publisher:
    """Writes batches into one lake; holds the committed frontier and the known-host set."""

    def __init__(
        self,
        lake: LakeFS,
        settings: LakeSettings,
        frontier: Mapping[TopicPartition, int],
        *,
        gate: QualityGate | None = None,
        known_hosts: set[str] | None = None,
        clock: Clock = utc_now,
    ) -> None:
        self.lake = lake
        self.settings = settings
        self.frontier = dict(frontier)
        quality = settings.quality
        self.gate: QualityGate | None = None
        if quality.enabled:
            self.gate = gate or QualityGate(future_tolerance_s=quality.future_tolerance_s)
        self.known_hosts = known_hosts if quality.check_known_hosts else None
        self.clock = clock

    def publish(self, plan: BatchPlan) -> StagedBatch:
        staged = self.stage(plan)
        self.commit(staged)
        return staged

    def stage(self, plan: BatchPlan) -> StagedBatch:
        """Validate and write every file of the batch; nothing is visible to readers yet."""
        now = self.clock()
        staged = StagedBatch(plan)
        for tp, rng in sorted(plan.ranges.items()):
            if tp not in self.frontier:  # a partition new to the lake: its files stay hidden until committed
                commit(self.lake, tp, rng.first, previous=None, now=now)
                self.frontier[tp] = rng.first
            elif rng.first < self.frontier[tp]:
                raise LakeIntegrityError(
                    f"{tp}: offset {rng.first} is already archived (committed up to {self.frontier[tp] - 1}); "
                    "refusing to write it twice",
                    self.lake.full(),
                )
        hosts = set(self.known_hosts) if self.known_hosts is not None else None
        order = sorted(plan.tables, key=lambda t: (t != INVENTORY_TABLE, t))
        for table in order:
            self._stage_table(staged, plan.tables[table], now, hosts)
        self._stage_rejected(staged, now)
        return staged

    def _stage_table(
        self, staged: StagedBatch, batch: TableBatch, now: dt.datetime, hosts: set[str] | None
    ) -> None:
        """Gate one table's batch, then write it as data files or as quarantine entries."""
        arrow = batch.arrow()
        outcome = None
        if self.gate is not None:
            outcome = self.gate.validate(batch.table, arrow, now, hosts)
            staged.outcomes.append(outcome)
        if outcome is None or outcome.success:
            self._write_data(staged, batch, arrow)
        else:
            self._write_quarantine(staged, batch, arrow, outcome, now)
        if batch.table == INVENTORY_TABLE:
            # Known whatever the gate said: the compacted inventory topic sends a host's record once, so
            # a quarantined inventory (a clock ahead, a bad field) would otherwise quarantine its samples
            # and errors for good. The gate judges the record; it does not make the host unknown.
            new = {h for h in arrow.column("host_id").to_pylist() if h is not None}
            staged.new_hosts |= new
            if hosts is not None:
                hosts |= new

    def _write_data(self, staged: StagedBatch, batch: TableBatch, arrow: pa.Table) -> None:
        for part in split_files(batch, arrow):
            rel = data_path(batch.table, part.date, str(part.name))
            self.lake.write_parquet(
                rel,
                part.table,
                compression=self.settings.compression,
                row_group_size=self.settings.row_group_size,
            )
            staged.add(part.name.tp, rel)
        staged.published_rows += arrow.num_rows

    def _write_quarantine(
        self,
        staged: StagedBatch,
        batch: TableBatch,
        arrow: pa.Table,
        outcome: ValidationOutcome,
        now: dt.datetime,
    ) -> None:
        for name, part_table in split_by_partition(batch, arrow):
            folder = write_quarantine(
                self.lake, name, batch.table, part_table, outcome, now, compression=self.settings.compression
            )
            staged.add(name.tp, folder)
        staged.quarantined_rows += arrow.num_rows

    def _stage_rejected(self, staged: StagedBatch, now: dt.datetime) -> None:
        """Write the records planning rejected (undecodable, or ``ts`` off the calendar) with their reasons."""
        rejected = staged.plan.rejected
        first_of = {r.record.tp: r for r in reversed(rejected)}
        for name, table in rejected_files(rejected, now):
            rel = rejected_path(name)
            self.lake.write_parquet(rel, table, compression=self.settings.compression)
            staged.add(name.tp, rel)
            first = first_of[name.tp]
            log.warning(
                "rejected %d records from %s offsets %d-%d (first: %s: %s) → %s",
                table.num_rows,
                name.tp,
                name.first,
                name.last,
                first.error_type,
                first.reason,
                rel,
            )
        staged.rejected_rows = len(rejected)

    def commit(self, staged: StagedBatch) -> None:
        """Advance every partition of the batch past its last offset: the batch becomes visible."""
        now = self.clock()
        for tp, rng in sorted(staged.plan.ranges.items()):
            previous = self.frontier.get(tp)
            next_offset = max(rng.last + 1, previous or 0)
            batch = CommittedRange(rng.first, rng.last, rng.records, tuple(staged.files.get(tp, ())))
            commit(self.lake, tp, next_offset, previous=previous, batch=batch, now=now)
            self.frontier[tp] = next_offset
        if self.known_hosts is not None:
            self.known_hosts |= staged.new_hosts
