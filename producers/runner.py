"""Run a simulation: build the fleet and its schedules, drive the agents into a sink, write truth.

``run_simulation(settings, SimulationRequest(...))`` is the Python API the CLI, the demo and
the tests call. Live mode paces sim time to the wall clock times ``speed``; fast-forward
runs as fast as the machine allows. SIGINT/SIGTERM stop cleanly: the sink flushes first.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ground.stop_signals import stop_on_signals
from producers.answer import AnswerFactory
from producers.changes import changes_truth
from producers.config import FleetConfig, load_fleet_config
from producers.continuation import agents_table, continued_fleet, load_previous
from producers.errors import SimulatorError
from producers.fault_process import calibrate, fault_schedule
from producers.fleet import build_fleet
from producers.generator import FleetAgents, LateDelivery, ticks_for
from producers.manifest import run_manifest
from producers.noise import noise_schedule
from producers.pacing import pace
from producers.progress import tick_progress
from producers.randomness import run_id as make_run_id
from producers.rollout import change_schedule, rollout_truth
from producers.run_progress import run_reports
from producers.schedule import Schedule
from producers.sinks.base import Sink
from producers.sinks.choice import SinkName, make_sink
from producers.sinks.kafka import KafkaSink
from producers.truth import episodes_table, faults_table, hosts_table, jobs_table, write_truth
from schemas import topic_family

if TYPE_CHECKING:
    from ground.settings import Settings

Mode = Literal["fast-forward", "live"]


@dataclass(frozen=True)
class SimulationRequest:
    """One run. Unset fields fall back to ``settings.simulator``."""

    mode: Mode = "fast-forward"
    days: float = 1.0  # fast-forward: sim days
    duration_s: float = 60.0  # live: wall-clock seconds
    speed: float = 1.0  # live: sim seconds per wall second
    preset: str | None = None
    fleet_config: Path | None = None
    fleet: FleetConfig | None = None  # a ready config object (Python API), wins over both
    continue_from: Path | None = None  # truth dir of a finished run: same fleet, later times, seq continues
    seed: int | None = None
    start_ts: int | None = None
    interval_s: int | None = None
    sink: SinkName = "kafka"
    out: Path | None = None
    truth_out: Path | None = None
    create_topics: bool = True
    progress: bool = False


@dataclass
class SimulationResult:
    run_id: str
    counts: dict[str, int]  # per event type
    counts_by_topic: dict[str, int]
    truth_dir: Path | None
    elapsed_s: float
    start_ts: int
    end_ts: int
    interval_s: int
    ticks: int
    interrupted: bool = False
    idle_s: float = 0.0  # live: time spent waiting for the wall clock (headroom)
    max_lag_s: float = 0.0  # live: worst delay of a tick behind its wall-clock due time
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def events_per_s(self) -> float:
        return self.total / self.elapsed_s if self.elapsed_s > 0 else 0.0


def parse_start(text: str) -> int:
    when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000)


def run_simulation(
    settings: Settings,
    request: SimulationRequest,
    *,
    sink: Sink | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    wall_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    stop: threading.Event | None = None,
    answer: AnswerFactory | None = None,
) -> SimulationResult:
    """Generate the run into ``sink`` (built from ``request.sink`` if not given) and write its truth.

    ``answer``: closed loop, builds the fleet's answer to what is done to it (``producers.answer``);
    before each tick the sink is flushed and the answer takes in what happened up to then.
    """
    sim = settings.simulator
    previous = load_previous(request.continue_from) if request.continue_from else None
    if previous is not None:
        config, seed = previous.config, previous.seed
        if request.seed is not None and request.seed != seed:
            raise SimulatorError(f"--seed {request.seed} differs from the continued run's seed {seed}")
        if request.preset is not None and request.preset != config.name:
            raise SimulatorError(
                f"--preset {request.preset} differs from the continued run's fleet {config.name}"
            )
    else:
        config = request.fleet or load_fleet_config(request.preset or sim.preset, request.fleet_config)
        seed = sim.seed if request.seed is None else request.seed
    live = request.mode == "live"
    interval_s = request.interval_s or (sim.live_interval_s if live else sim.fast_forward_interval_s)
    if live:
        if request.speed <= 0 or request.duration_s <= 0:
            raise SimulatorError("live mode needs --duration > 0 and --speed > 0")
        n_ticks = ticks_for(request.duration_s * request.speed, interval_s)
        if request.start_ts is not None:
            start_ts = request.start_ts
        else:
            # Faster than real time, start early enough that event time never passes the wall clock
            # (the detectors dead-letter records from the future): the run ends about now.
            ahead_ms = round(request.duration_s * max(0.0, request.speed - 1.0) * 1000)
            start_ts = (wall_ms() - ahead_ms) // (interval_s * 1000) * interval_s * 1000
        if previous is not None:
            start_ts = previous.end_ts  # event time goes on from where the history stopped
    else:
        if request.days <= 0:
            raise SimulatorError("fast-forward needs --days > 0")
        n_ticks = ticks_for(request.days * 86_400, interval_s)
        start_ts = request.start_ts if request.start_ts is not None else parse_start(sim.start)
        if previous is not None:
            start_ts = previous.end_ts
    end_ts = start_ts + n_ticks * interval_s * 1000
    content = _run_content(config, previous.run_id if previous else None)
    run_id = make_run_id(seed, config.name, request.mode, start_ts, end_ts, interval_s, content)

    fleet = (
        build_fleet(config, seed, start_ts, end_ts) if previous is None else continued_fleet(previous, end_ts)
    )
    calibration = calibrate(fleet)
    faults, dropped = fault_schedule(fleet, calibration)
    faults = Schedule.concat([faults, change_schedule(fleet)]).sorted()  # what bad versions add (none: empty)
    # closed loop, the agents' fleet is a copy whose slow factors a repair may zero; the truth keeps the fleet as built
    agents_fleet = replace(fleet, slow_factor=fleet.slow_factor.copy()) if answer is not None else fleet
    loop = answer(agents_fleet) if answer is not None else None
    noise = noise_schedule(fleet)
    agents = FleetAgents(
        agents_fleet,
        faults,
        noise,
        run_id=run_id,
        interval_s=interval_s,
        late=LateDelivery(
            sim.late_fraction, sim.late_max_delay_s, sim.dropout_fraction, sim.duplicate_fraction
        ),
        initial_seq=previous.last_seq if previous else None,
        initial_remapped=previous.remapped if previous else None,
        answer=loop,
    )
    sink = sink or make_sink(settings, request.sink, run_id, out=request.out, topics=request.create_topics)
    topic_names = {
        f: getattr(settings.topics, f).name
        for f in ("inventory", "samples", "errors", "findings", "actions", "alerts", "dlq")
    }

    counts: Counter[str] = Counter()
    stop = stop or threading.Event()
    started = clock()
    ticks_done = 0
    written_ts = start_ts  # event time of the last tick written whole: where an interrupted run ends
    idle_s = max_lag_s = 0.0
    label = f"{config.name} {request.mode} → {request.sink}"
    ticks = agents.ticks()
    reports = run_reports(settings, sink, run_id, live=live)
    try:
        with stop_on_signals(stop), tick_progress(n_ticks, label, request.progress) as update:
            # check stop before generating: a generated tick advances the agents' seq
            while not stop.is_set():
                if loop is not None and ticks_done:
                    if isinstance(sink, KafkaSink):
                        sink.flush()  # the pipeline can only answer what it has been sent
                    loop.until(written_ts)
                if (tick := next(ticks, None)) is None:
                    break
                if live:
                    idle, lag = pace(started, tick.index * interval_s / request.speed, clock, sleep, stop)
                    idle_s += idle
                    max_lag_s = max(max_lag_s, lag)
                for batch in tick.batches:
                    sink.write(batch)
                    counts.update(batch.event_types())
                ticks_done = min(tick.index, n_ticks)
                written_ts = min(tick.ts, end_ts)
                update(ticks_done, sum(counts.values()))
                if reports is not None:
                    reports.tick(tick.ts, agents.held())
            if reports is not None:  # not after an error: a record may be lost, so promise nothing more
                reports.finish()
    finally:
        sink.close()
    elapsed = clock() - started
    interrupted = stop.is_set()
    emitted_end_ts = written_ts if interrupted else end_ts
    faults = _emitted_faults(faults, emitted_end_ts, agents.masked)

    by_topic: Counter[str] = Counter()
    for event_type, n in counts.items():
        by_topic[topic_names[topic_family(event_type)]] += n
    manifest = run_manifest(
        config,
        request.mode,
        request.speed,
        seed,
        run_id,
        start_ts,
        emitted_end_ts,
        interval_s,
        fleet,
        calibration,
        faults,
        dropped,
        dict(sorted(counts.items())),
        dict(sorted(by_topic.items())),
        interrupted=interrupted,
        late=sim,
    )
    manifest["planned_end_ts"] = end_ts
    manifest["delivery"] = {
        "dropout_fraction": sim.dropout_fraction,
        "duplicate_fraction": sim.duplicate_fraction,
        "samples_dropped": agents.dropped,
        "events_duplicated": agents.duplicated,
    }
    manifest["segment"] = fleet.segment
    if fleet.config.versions.changes:
        manifest["changes"] = changes_truth(fleet.config.versions)  # which versions are bad, and how
        manifest["rollouts"] = rollout_truth(fleet, agents.turns)  # which hosts got them, when
    manifest["continues_run_id"] = previous.run_id if previous else None
    if loop is not None:
        manifest["closed_loop"] = loop.report(faults)
    manifest["fleet_window"] = list(previous.fleet_window) if previous else [start_ts, end_ts]
    if request.truth_out is not None:
        write_truth(
            request.truth_out,
            manifest,
            faults_table(fleet, faults, run_id),
            hosts_table(fleet),
            agents_table(fleet, agents.seq, agents.remapped),
            jobs_table(fleet, agents.jobs),
            episodes_table(fleet),
        )
    return SimulationResult(
        run_id=run_id,
        counts=dict(sorted(counts.items())),
        counts_by_topic=dict(sorted(by_topic.items())),
        truth_dir=request.truth_out,
        elapsed_s=elapsed,
        start_ts=start_ts,
        end_ts=emitted_end_ts,
        interval_s=interval_s,
        ticks=ticks_done,
        interrupted=interrupted,
        manifest=manifest,
        idle_s=idle_s,
        max_lag_s=max_lag_s,
    )


def _emitted_faults(faults: Schedule, end_ts: int, masked: set[tuple[int, int, str]]) -> Schedule:
    """The faults whose events went out by ``end_ts``: truth must not list what was never sent.

    Faults are sorted by time, so this keeps a prefix and fault ids stay those of the full plan;
    closed loop, the faults the fleet's answer held back (``masked``) are left out too.
    """
    sent = faults.ts <= end_ts
    if masked:
        sent &= np.array(
            [
                (int(h), int(t), str(k)) not in masked
                for h, t, k in zip(faults.host, faults.ts, faults.kind, strict=True)
            ],
            dtype=bool,
        )
    return faults.take(np.flatnonzero(sent))


def _run_content(config: FleetConfig, continues: str | None) -> str:
    """What besides seed and window shapes the events, as canonical text for the run id.

    Late delivery is left out on purpose: it reorders the same events, which keep their ids.
    """
    return json.dumps({"fleet": config.model_dump(mode="json"), "continues": continues}, sort_keys=True)
