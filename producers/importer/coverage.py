"""What an import did, as numbers an operator can check: coverage of the mapping, rows refused, hosts added.

Coverage is incidents classified / all incidents; ``unclassified`` stays a row of the table,
so no share computed from it is ever renormalised over the classified part only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from producers.importer.inventory_file import InventoryFile
from producers.importer.sources import BadRow
from schemas.taxonomy import UNCLASSIFIED


@dataclass(frozen=True)
class InventoryCount:
    """What an inventory file brought: hosts listed, those with no incident, rows refused, records to send."""

    source: str
    listed: int
    fault_free: int
    bad_rows: list[BadRow]
    records: int


def inventory_summary(
    listed: InventoryFile, incident_hosts: set[str], records: list[dict[str, Any]]
) -> InventoryCount:
    fault_free = sum(1 for h in listed.hosts if h not in incident_hosts)
    return InventoryCount(listed.source, len(listed.hosts), fault_free, listed.bad_rows, len(records))


@dataclass(frozen=True)
class ImportSummary:
    incidents: int
    by_cause: dict[str, int]
    by_class: dict[str, tuple[str, int]]  # source class -> (cause, incidents)
    bad_rows: list[BadRow]
    duplicate_rows: list[tuple[int, int]]
    hosts: int
    new_hosts: list[str] = field(default_factory=list)
    already_imported: int = 0
    sent: int = 0
    hardware: int = 0  # hardware events the incidents stand for ([signals]), for the repeat-offender rules
    hardware_sent: int = 0
    warnings: list[str] = field(default_factory=list)
    inventory: InventoryCount | None = None

    @property
    def classified(self) -> int:
        return self.incidents - self.by_cause.get(UNCLASSIFIED, 0)

    @property
    def coverage(self) -> float:
        return self.classified / self.incidents if self.incidents else 0.0

    @property
    def unmapped_classes(self) -> list[tuple[str, int]]:
        """Source classes that went to ``unclassified``, most frequent first."""
        found = [(c, n) for c, (cause, n) in self.by_class.items() if cause == UNCLASSIFIED]
        return sorted(found, key=lambda x: (-x[1], x[0]))


def summarize(
    records: Iterable[Mapping[str, Any]],
    bad_rows: list[BadRow],
    duplicate_rows: list[tuple[int, int]],
) -> ImportSummary:
    causes: Counter[str] = Counter()
    classes: Counter[tuple[str, str]] = Counter()
    hosts: set[str] = set()
    n = 0
    for r in records:
        p = r["payload"]
        causes[p["cause"]] += 1
        classes[(p["source_class"], p["cause"])] += 1
        hosts.add(r["host_id"])
        n += 1
    return ImportSummary(
        incidents=n,
        by_cause=dict(causes.most_common()),
        by_class={cls: (cause, count) for (cls, cause), count in classes.most_common()},
        bad_rows=bad_rows,
        duplicate_rows=duplicate_rows,
        hosts=len(hosts),
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def render(summary: ImportSummary, *, source: str, dry_run: bool, max_listed: int = 20) -> list[str]:
    """The lines ``fleetpulse import`` prints."""
    s = summary
    lines = [
        f"{source}: {s.incidents} incidents on {s.hosts} hosts"
        + (f", {_count(len(s.bad_rows), 'bad row')}" if s.bad_rows else "")
        + (f", {_count(len(s.duplicate_rows), 'duplicate row')}" if s.duplicate_rows else ""),
        f"coverage: {s.classified} of {s.incidents} incidents classified ({s.coverage:.1%})",
        "by cause:",
    ]
    lines += [f"  {cause:<24} {n:>8}  {n / s.incidents:6.1%}" for cause, n in s.by_cause.items()]
    lines += [f"warning: {w}" for w in s.warnings]
    if s.inventory is not None:
        inv = s.inventory
        lines.append(
            f"inventory {inv.source}: {inv.listed} hosts, {inv.fault_free} with no incident"
            + (f", {_count(len(inv.bad_rows), 'bad row')}" if inv.bad_rows else "")
        )
        lines += [f"inventory row {b.number}: {b.reason}" for b in inv.bad_rows[:max_listed]]
    if s.unmapped_classes:
        lines.append(f"unmapped classes ({len(s.unmapped_classes)}, imported as {UNCLASSIFIED}):")
        lines += [f"  {cls!r}: {n}" for cls, n in s.unmapped_classes[:max_listed]]
        if len(s.unmapped_classes) > max_listed:
            lines.append(f"  … and {len(s.unmapped_classes) - max_listed} more")
    for bad in s.bad_rows[:max_listed]:
        lines.append(f"bad row {bad.number}: {bad.reason}")
    if len(s.bad_rows) > max_listed:
        lines.append(f"… and {len(s.bad_rows) - max_listed} more bad rows")
    for row, first in s.duplicate_rows[:max_listed]:
        lines.append(f"duplicate row {row}: the same incident as row {first} (skipped)")
    if dry_run:
        would = (
            f" (would send {_count(s.hardware, 'hardware event')} with the incidents)" if s.hardware else ""
        )
        lines.append(f"dry run: nothing sent{would}")
        return lines
    if s.new_hosts:
        shown = ", ".join(s.new_hosts[:max_listed]) + (" …" if len(s.new_hosts) > max_listed else "")
        lines.append(f"unknown hosts: {len(s.new_hosts)} inventory records created ({shown})")
    if s.inventory is not None:
        lines.append(f"inventory: {_count(s.inventory.records, 'host record')} sent")
    hardware = f" and {_count(s.hardware_sent, 'hardware event')}" if s.hardware_sent else ""
    lines.append(f"sent {s.sent} incidents{hardware}; {s.already_imported} were already imported")
    return lines
