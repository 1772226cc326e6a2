"""worker-kill: SIGKILL the detect worker again and again mid-run; compare with a clean worker on the same input.

The clean reference and the faulty worker read the same input topics side by side (own
consumer groups, own output topics). The faulty worker is killed when its group has
committed 1/6, 2/6, ... of the input, and restarted at once on the same local state.
"""

from __future__ import annotations

from fleetpulse.faults.context import Clock, FaultContext, simulate
from fleetpulse.faults.detectors import Detector
from fleetpulse.faults.errors import ScenarioError
from fleetpulse.faults.kafka_io import wait_until
from fleetpulse.faults.results import ScenarioResult
from fleetpulse.faults.sandbox import sandbox, variant
from fleetpulse.faults.scenarios.common import judge, outputs

NAME = "worker-kill"


def run(ctx: FaultContext, kills: int = 5) -> ScenarioResult:
    clock = Clock()
    folder = ctx.folder(NAME)
    settings = sandbox(ctx.base, ctx.bootstrap, ctx.prefix(NAME))
    sim = simulate(ctx, settings, folder / "truth")
    total = sum(n for t, n in sim.counts_by_topic.items() if t in (settings.topics.samples.name, settings.topics.errors.name))
    ctx.say(f"{NAME}: {sim.total:,} events simulated; starting the reference and the faulty worker")
    reference = Detector(variant(settings, "ref"), folder / "ref", NAME)
    faulty = Detector(variant(settings, "kill"), folder / "kill", NAME)
    kill_log: list[dict[str, float]] = []
    try:
        reference.start()
        faulty.start()
        last = 0
        for k in range(1, kills + 1):
            target = max(total * k / (kills + 1), last + 1)  # and some progress in every life

            def progressed(target: float = target) -> bool:
                faulty.check_alive()
                return faulty.consumed() >= target

            if not wait_until(progressed, 120, interval_s=0.3):
                raise ScenarioError(NAME, f"the worker made no progress to {target:.0f} input records before kill {k}")
            done = last = faulty.consumed()
            faulty.kill()
            kill_log.append({"kill": k, "at_s": clock(), "input_committed": done, "share": round(done / total, 3)})
            ctx.say(f"{NAME}: kill {k}/{kills} at {done / total:.0%} of the input; restarting")
            faulty.start()
        drain_faulty = faulty.wait_drained()
        reference.wait_drained()
    finally:
        faulty.stop()
        reference.stop()
    result = ScenarioResult(scenario=NAME, injected=f"{faulty.kills} × SIGKILL of the detect worker mid-run "
                            f"(restarted at once on its state), {sim.total:,} events of the {ctx.preset} fleet")
    judge(result, outputs(reference.settings, folder / "truth"), outputs(faulty.settings, folder / "truth"))
    result.details.update(kills=kill_log, input_records=total, drain_after_last_restart_s=round(drain_faulty, 1),
                          starts=faulty.starts)
    result.duration_s = clock()
    return result
