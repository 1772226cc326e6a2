"""Publish one planned batch: gate each table, append data / quarantine / rejected rows, then commit offsets.

Every append is one Delta commit carrying, for each Kafka partition whose rows it holds, the batch's
next offset as that partition's app-transaction version. The ``_offsets`` commit comes last and is
where a restart resumes; rows a table already holds (its version is past their offset) are left
out of the replay, so a crash anywhere between two commits neither loses nor doubles a row.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from analytics.errors import LakeIntegrityError
from analytics.lake import offsets
from analytics.lake.batch import BatchPlan, TableBatch
from analytics.lake.layout import (
    QUARANTINE_REPORTS,
    REJECTED_TABLE,
    OffsetRange,
    TopicPartition,
    app_id,
    quarantine_table,
    report_app_id,
)
from analytics.lake.quarantine import write_quarantine, write_reports
from analytics.lake.records import Rejected, rejected_table
from analytics.quality.gate import QualityGate, ValidationOutcome
from ground.delta import DATE, DeltaTables, with_date
from ground.settings.lake import LakeSettings

log = logging.getLogger(__name__)

INVENTORY_TABLE = "host_inventoried"
Clock = Callable[[], dt.datetime]


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class PublishedBatch:
    """What ``publish`` wrote of one batch."""

    plan: BatchPlan
    outcomes: list[ValidationOutcome] = field(default_factory=list)
    published_rows: int = 0
    quarantined_rows: int = 0
    rejected_rows: int = 0
    replayed_rows: int = 0  # rows a table already held from before a crash, not written again
    commits: int = 0
    new_hosts: set[str] = field(default_factory=set)  # of every inventory record, published or quarantined


class Publisher:
    """Writes batches into one lake for one archiver group; holds its frontier and the known-host set."""

    def __init__(
        self,
        tables: DeltaTables,
        settings: LakeSettings,
        frontier: Mapping[TopicPartition, int],
        *,
        gate: QualityGate | None = None,
        known_hosts: set[str] | None = None,
        clock: Clock = utc_now,
    ) -> None:
        self.tables = tables
        self.settings = settings
        self.group_id = settings.group_id
        self.frontier = dict(frontier)
        quality = settings.quality
        self.gate: QualityGate | None = None
        if quality.enabled:
            self.gate = gate or QualityGate(future_tolerance_s=quality.future_tolerance_s)
        self.known_hosts = known_hosts if quality.check_known_hosts else None
        self.clock = clock
        self._versions: dict[tuple[str, str], int] = {}  # (table, app id) → version

    def publish(self, plan: BatchPlan) -> PublishedBatch:
        now = self.clock()
        for tp, rng in sorted(plan.ranges.items()):
            if tp in self.frontier and rng.first < self.frontier[tp]:
                raise LakeIntegrityError(
                    f"{tp}: offset {rng.first} is already archived (committed up to {self.frontier[tp] - 1}); "
                    "refusing to write it twice",
                    self.tables.uri(),
                )
        # another split, or another copy of this member, started meanwhile: write nothing of a batch it may own
        offsets.check_owner(self.tables, self.group_id, self.settings.members, self.frontier, plan.ranges)
        done = PublishedBatch(plan)
        hosts = set(self.known_hosts) if self.known_hosts is not None else None
        for table in sorted(plan.tables, key=lambda t: (t != INVENTORY_TABLE, t)):
            self._publish_table(done, plan.tables[table], now, hosts)
        self._publish_rejected(done, now)
        next_offsets = {tp: max(rng.last + 1, self.frontier.get(tp, 0)) for tp, rng in plan.ranges.items()}
        offsets.commit(self.tables, self.group_id, plan.ranges, next_offsets, now, self.settings.members)
        done.commits += 1
        self.frontier.update(next_offsets)
        if self.known_hosts is not None:
            self.known_hosts |= done.new_hosts
        return done

    # -- exactly once per table --------------------------------------------------------------------

    def version(self, rel: str, tp: TopicPartition) -> int:
        """The next offset of ``tp`` the table at ``rel`` does not hold yet (0 if it holds none)."""
        return self._version(rel, app_id(self.group_id, tp))

    def reported(self, table: str, tp: TopicPartition) -> int:
        """The next offset of ``tp`` whose quarantined ``table`` rows have no report yet."""
        return self._version(QUARANTINE_REPORTS, report_app_id(self.group_id, tp, table))

    def _version(self, rel: str, app: str) -> int:
        if (rel, app) not in self._versions:
            self._versions[(rel, app)] = self.tables.version_of(rel, app) or 0
        return self._versions[(rel, app)]

    def _committed(self, rel: str, versions: Mapping[str, int]) -> None:
        for app, v in versions.items():
            self._versions[(rel, app)] = v

    def _ids(self, tps: set[TopicPartition], plan: BatchPlan, table: str | None = None) -> dict[str, int]:
        """Each partition's next offset under its app id (``table``: under that table's report id)."""
        out = {}
        for tp in tps:
            name = app_id(self.group_id, tp) if table is None else report_app_id(self.group_id, tp, table)
            out[name] = plan.ranges[tp].last + 1
        return out

    def _append(
        self,
        rel: str,
        data: pa.Table,
        tps: set[TopicPartition],
        plan: BatchPlan,
        partition_by: Sequence[str] = (),
    ) -> None:
        ids = self._ids(tps, plan)
        self.tables.append(rel, data, partition_by=partition_by, versions=ids)
        self._committed(rel, ids)

    def _unwritten(
        self, batch: TableBatch, arrow: pa.Table
    ) -> tuple[pa.Table, list[tuple[TopicPartition, int]]]:
        """The rows of ``batch`` neither its table nor its quarantine holds yet (all of them but after a crash)."""
        tps = {tp for tp, _ in batch.sources}
        held = {
            tp: max(self.version(batch.table, tp), self.version(quarantine_table(batch.table), tp))
            for tp in tps
        }
        keep = [i for i, (tp, offset) in enumerate(batch.sources) if offset >= held[tp]]
        if len(keep) == len(batch.sources):
            return arrow, batch.sources
        return arrow.take(pa.array(keep, pa.int64())), [batch.sources[i] for i in keep]

    # -- the destinations ---------------------------------------------------------------------------

    def _publish_table(
        self, done: PublishedBatch, batch: TableBatch, now: dt.datetime, hosts: set[str] | None
    ) -> None:
        """Gate one table's rows, then append them as data or as quarantine."""
        self._report_unreported(done, batch, now, hosts)
        arrow, sources = self._unwritten(batch, batch.arrow())
        done.replayed_rows += batch.rows - len(sources)
        if not sources:
            return
        outcome = None
        if self.gate is not None:
            outcome = self.gate.validate(batch.table, arrow, now, hosts)
            done.outcomes.append(outcome)
        tps = {tp for tp, _ in sources}
        if outcome is None or outcome.success:
            self._append(batch.table, with_date(arrow), tps, done.plan, partition_by=[DATE])
            done.published_rows += arrow.num_rows
        else:
            versions, reports = self._ids(tps, done.plan), self._ids(tps, done.plan, batch.table)
            slices = _slices(arrow, sources)
            write_quarantine(self.tables, batch.table, slices, outcome, now, versions, reports)
            self._committed(quarantine_table(batch.table), versions)
            self._committed(QUARANTINE_REPORTS, reports)
            done.quarantined_rows += arrow.num_rows
            done.commits += 1
        done.commits += 1
        if batch.table == INVENTORY_TABLE:
            # Known whatever the gate said: the compacted inventory topic sends a host's record once, so
            # a quarantined inventory (a clock ahead, a bad field) would otherwise quarantine its samples
            # and errors for good. The gate judges the record; it does not make the host unknown.
            new = {h for h in arrow.column("host_id").to_pylist() if h is not None}
            done.new_hosts |= new
            if hosts is not None:
                hosts |= new

    def _report_unreported(
        self, done: PublishedBatch, batch: TableBatch, now: dt.datetime, hosts: set[str] | None
    ) -> None:
        """Report the rows a crash left in the quarantine without their report (it died between the two commits).

        The rows stay where they are; they are validated again only for the report's content.
        """
        rel = quarantine_table(batch.table)
        gaps = {tp: (self.reported(batch.table, tp), self.version(rel, tp)) for tp in done.plan.ranges}
        gaps = {tp: gap for tp, gap in gaps.items() if gap[0] < gap[1]}
        if not gaps:  # every batch but the replay after such a crash: no per-row scan on the hot path
            return
        keep = [
            i
            for i, (tp, offset) in enumerate(batch.sources)
            if tp in gaps and gaps[tp][0] <= offset < gaps[tp][1]
        ]
        if not keep:
            return
        rows = batch.arrow().take(pa.array(keep, pa.int64()))
        sources = [batch.sources[i] for i in keep]
        gate = self.gate or QualityGate(future_tolerance_s=self.settings.quality.future_tolerance_s)
        outcome = gate.validate(batch.table, rows, now, hosts)
        tps = {tp for tp, _ in sources}
        reports = {report_app_id(self.group_id, tp, batch.table): self.version(rel, tp) for tp in tps}
        write_reports(self.tables, batch.table, _slices(rows, sources), outcome, now, reports)
        self._committed(QUARANTINE_REPORTS, reports)
        done.commits += 1
        log.warning("reported %d quarantined %s rows whose report a crash left out", len(keep), batch.table)

    def _publish_rejected(self, done: PublishedBatch, now: dt.datetime) -> None:
        """Append the records planning rejected (undecodable, or ``ts`` off the calendar) with their reasons."""
        rejected = [
            r for r in done.plan.rejected if r.record.offset >= self.version(REJECTED_TABLE, r.record.tp)
        ]
        if not rejected:
            return
        self._append(
            REJECTED_TABLE, rejected_table(rejected, now), {r.record.tp for r in rejected}, done.plan
        )
        done.commits += 1
        done.rejected_rows = len(rejected)
        _log_rejected(rejected)


def _slices(arrow: pa.Table, sources: list[tuple[TopicPartition, int]]) -> list[tuple[OffsetRange, pa.Table]]:
    """The rows of each Kafka partition, with the offsets they span (quarantine keeps one slice each)."""
    groups: dict[TopicPartition, list[int]] = {}
    for i, (tp, _) in enumerate(sources):
        groups.setdefault(tp, []).append(i)
    out = []
    for tp, indices in sorted(groups.items()):
        offs = [sources[i][1] for i in indices]
        out.append(
            (
                OffsetRange(tp.topic, tp.partition, min(offs), max(offs)),
                arrow.take(pa.array(indices, pa.int64())),
            )
        )
    return out


def _log_rejected(rejected: list[Rejected]) -> None:
    by_tp: dict[TopicPartition, list[Rejected]] = {}
    for r in rejected:
        by_tp.setdefault(r.record.tp, []).append(r)
    for tp, items in sorted(by_tp.items()):
        first = items[0]
        log.warning(
            "rejected %d records from %s offsets %d-%d (first: %s: %s)",
            len(items),
            tp,
            min(r.record.offset for r in items),
            max(r.record.offset for r in items),
            first.error_type,
            first.reason,
        )
