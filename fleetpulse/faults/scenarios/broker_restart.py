"""broker-restart: restart the broker while the simulator produces and a detector consumes.

The simulator runs paced (live mode replaying the small fleet's history in about a minute)
so the restarts land mid-production. Afterwards the input topics are counted against the
simulator's manifest, and a clean reference worker processes the same topics for comparison.
"""

from __future__ import annotations

import time
from typing import Any

from fleetpulse.faults.context import Clock, FaultContext
from fleetpulse.faults.counting import count_events
from fleetpulse.faults.detectors import Detector
from fleetpulse.faults.kafka_io import records
from fleetpulse.faults.results import ScenarioResult
from fleetpulse.faults.sandbox import INPUTS, sandbox, variant
from fleetpulse.faults.scenarios.common import judge, outputs, paced_producer, reference_run
from ground.kafka import admin

NAME = "broker-restart"


def run(
    ctx: FaultContext,
    restarts: int = 3,
    produce_s: float = 90.0,
    first_after_s: float = 5.0,
    gap_s: float = 3.0,
    *,
    down_s: float = 0.0,
    name: str = NAME,
) -> ScenarioResult:
    """``down_s``: each restart leaves the broker stopped that long before starting it again."""
    clock = Clock()
    folder = ctx.folder(name)
    settings = sandbox(ctx.base, ctx.bootstrap, ctx.prefix(name))
    admin.create_topics(settings)
    live = Detector(variant(settings, "live"), folder / "live", name)
    live.start()
    producer, outcome = paced_producer(ctx, settings, folder / "truth", produce_s)
    producer.start()
    ctx.say(f"{name}: simulator producing for {produce_s:g} s; detector consuming")
    restart_log: list[dict[str, Any]] = []
    crashes = 0
    try:
        time.sleep(first_after_s)
        for i in range(1, restarts + 1):
            began = clock()
            if down_s:
                ctx.broker.stop()
                time.sleep(down_s)
                ctx.broker.start()
            else:
                ctx.broker.restart()
            restart_log.append(
                {"restart": i, "from_s": began, "to_s": clock(), "while_producing": producer.is_alive()}
            )
            ctx.say(f"{name}: broker restart {i}/{restarts} took {clock() - began:.1f} s")
            time.sleep(gap_s)
        producer.join(produce_s * 4 + 300)
        if not live.alive():  # a crashed worker is restarted, as any supervisor would, and counted
            crashes += 1
            live.start()
        drain_live = live.wait_drained()
        live.stop()
        ctx.say(f"{name}: production done; reference worker on the same topics")
        reference = reference_run(settings, folder, name)
    finally:
        live.stop()
    how = f"broker stopped for {down_s:g} s" if down_s else "clean broker restart"
    result = ScenarioResult(
        scenario=name,
        injected=f"{len(restart_log)} × {how} while the simulator "
        "produced (acks=all, idempotent) and a detector consumed",
    )
    sim = outcome.get("sim")
    inputs = [r for key in INPUTS for r in records(settings, getattr(settings.topics, key).name)]
    expected = sim.counts if sim is not None else {}
    events = count_events(expected, inputs)
    result.events_lost, result.events_duplicated = events.lost, events.duplicated
    judge(result, outputs(reference.settings, folder / "truth"), outputs(live.settings, folder / "truth"))
    result.details.update(
        restarts=restart_log,
        events=events.per_type,
        expected_events=events.expected,
        worker_crashes=crashes,
        simulator_error=outcome.get("error"),
        drain_after_production_s=round(drain_live, 1),
    )
    if outcome.get("error"):
        result.explanations.append(f"the simulator failed: {outcome['error']}")
    if crashes:
        result.explanations.append(
            f"the detect worker exited during the restarts ({crashes}×) and was restarted"
        )
    result.duration_s = clock()
    return result
