"""Host-level repeat recall and deferral delay on the made-up trace-shaped history (not a test).

The history (``bench/history_trace.py``) goes through the importer's pure plan and the offline
replay of the live detectors and planner (``fleetpulse.backtest.replay``): no Kafka. Prints, per
host-level rule, the repeats its own definition finds in the imported signals and how many of them
a finding flagged; each named pattern; the deferral delay after room (ms, from the history's
outages and the planner's work); and whether a domain past its failure buffer halted.

    .venv/bin/python bench/bench_history_recall.py
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import history_trace as trace  # noqa: E402
from fleetpulse.backtest.events import History, in_order  # noqa: E402
from fleetpulse.backtest.replay import replay  # noqa: E402
from producers.importer.run import plan_import  # noqa: E402
from streams.core.planning.budget import budget  # noqa: E402
from streams.core.policy import load_policy  # noqa: E402

START_MS = 1_767_225_600_000  # 2026-01-01: the history's day 0


def main() -> None:
    policy = load_policy(None)
    with tempfile.TemporaryDirectory() as folder:
        path, hosts = trace.write_files(Path(folder))
        plan = plan_import(path, trace.MAPPING, start_ms=START_MS, inventory=hosts)
    history = History(
        events=in_order(plan.hardware),
        inventory=plan.inventory,
        outages=in_order(plan.records),
        live_findings=[],
        live_actions=[],
    )
    result = replay(history, policy)
    print(
        f"incidents={plan.summary.incidents} hosts={len(plan.inventory)} signals={len(plan.hardware)} "
        f"findings={len(result.findings)} actions={len(result.actions)}"
    )

    repeats = trace.host_repeats(plan.hardware, policy)
    per_rule: Counter[str] = Counter(r.rule for r in repeats)
    for rule in sorted(per_rule):
        hit, n = trace.recall([r for r in repeats if r.rule == rule], result.findings)
        print(f"  {rule}: {hit} of {n} flagged")
    hit, n = trace.recall(repeats, result.findings)
    print(f"host-level repeat recall: {hit}/{n} = {hit / n:.3f}")

    records = [a.to_record() for a in result.actions]
    escalated = {a.host_id for a in result.actions if a.kind == "escalated"}
    for p in trace.PATTERNS:
        lo, hi = START_MS + round(p.first * trace.DAY), START_MS + round(p.last * trace.DAY)
        rules = sorted(
            {f.rule for f in result.findings if f.host_id == trace.host(p.node) and lo <= f.ts <= hi}
        )
        escalation = f", escalated: {trace.host(p.node) in escalated}" if p.escalated else ""
        print(f"  {p.name}: {rules or 'NOT FLAGGED'}{escalation}")

    capacity = budget(trace.DOMAIN_SIZE, policy.planner.capacity_buffer_pct)
    delays = trace.deferral_delays(trace.out_intervals(START_MS, records), records, capacity)
    print(f"deferral delay after room: max {max(delays.values(), default=0)} ms over {len(delays)} deferred")
    halts = sorted({a.domain for a in result.actions if a.kind == "train_halted"})
    print(f"halted: {halts}")


if __name__ == "__main__":
    main()
