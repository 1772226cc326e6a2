"""worker-kill: SIGKILL the detect worker again and again while input arrives; compare with a clean worker.

The simulator replays the small fleet's history paced over about a minute, so every kill
lands mid-run. A clean reference worker and the faulty worker read the same input topics
side by side (own consumer groups, own output topics). After each restart the faulty worker
is killed once its group has committed more input than before, plus a short random delay;
it is restarted at once on the same local state.
"""

from __future__ import annotations

import random
import time
from typing import Any

from fleetpulse.faults.context import Clock, FaultContext
from fleetpulse.faults.detectors import Detector
from fleetpulse.faults.errors import ScenarioError
from fleetpulse.faults.kafka_io import wait_until
from fleetpulse.faults.results import ScenarioResult
from fleetpulse.faults.sandbox import sandbox, variant
from fleetpulse.faults.scenarios.common import judge, outputs, paced_producer
from ground.kafka import admin
from ground.kafka.reading import end_offsets

NAME = "worker-kill"


def run(ctx: FaultContext, kills: int = 5, produce_s: float = 75.0) -> ScenarioResult:
    clock = Clock()
    folder = ctx.folder(NAME)
    settings = sandbox(ctx.base, ctx.bootstrap, ctx.prefix(NAME))
    admin.create_topics(settings)
    reference = Detector(variant(settings, "ref"), folder / "ref", NAME)
    faulty = Detector(variant(settings, "kill"), folder / "kill", NAME)
    rng = random.Random(ctx.seed)
    producer, outcome = paced_producer(ctx, settings, folder / "truth", produce_s)
    kill_log: list[dict[str, Any]] = []
    try:
        reference.start()
        faulty.start()
        producer.start()
        ctx.say(f"{NAME}: simulator producing for {produce_s:g} s; reference and faulty worker consuming")
        last = 0
        for k in range(1, kills + 1):

            def progressed(floor: int = last) -> bool:
                faulty.check_alive()
                return faulty.consumed() > floor

            if not wait_until(progressed, 120, interval_s=0.2):
                raise ScenarioError(NAME, f"the worker committed no new input before kill {k}")
            time.sleep(rng.uniform(0.5, 2.5))
            last = faulty.consumed()
            arrived = sum(
                end_offsets(settings.bootstrap_servers, settings.kafka, faulty.input_topics()).values()
            )
            faulty.kill()
            kill_log.append(
                {
                    "kill": k,
                    "at_s": clock(),
                    "input_committed": last,
                    "input_arrived": arrived,
                    "while_producing": producer.is_alive(),
                }
            )
            ctx.say(f"{NAME}: kill {k}/{kills}: {last:,} of {arrived:,} records so far committed; restarting")
            faulty.start()
        producer.join(produce_s * 4 + 300)
        drain_faulty = faulty.wait_drained()
        reference.wait_drained()
    finally:
        faulty.stop()
        reference.stop()
    sim = outcome.get("sim")
    total = sim.total if sim is not None else 0
    result = ScenarioResult(
        scenario=NAME,
        injected=f"{faulty.kills} × SIGKILL of the detect worker while "
        f"{total:,} events of the {ctx.preset} fleet arrived (restarted at once on its state)",
    )
    judge(result, outputs(reference.settings, folder / "truth"), outputs(faulty.settings, folder / "truth"))
    result.details.update(
        kills=kill_log,
        drain_after_production_s=round(drain_faulty, 1),
        starts=faulty.starts,
        simulator_error=outcome.get("error"),
    )
    if outcome.get("error"):
        result.explanations.append(f"the simulator failed: {outcome['error']}")
    result.duration_s = clock()
    return result
