"""A restarted worker folds only the actions after its snapshot, on a real broker, and a snapshot of
another log (the topic recreated and grown past the same offsets) is refused and the log folded whole."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ground.kafka import admin
from ground.settings import Settings
from schemas import Codec
from streams.core.actions import Action
from streams.core.fleet.lifecycle import LOG_EVENT_TYPES, FleetState, apply_logged
from streams.core.fleet.snapshot import FleetSnapshots
from streams.core.planning.planner import Planner
from streams.core.policy import load_policy
from streams.tailer import LogTailer
from tests.streams import factories as f
from tests.streams.kafka_io import isolated_settings, produce

pytestmark = pytest.mark.integration
CODEC = Codec()
DAY = 86_400_000


def history(first_day: int, days: int) -> list[Action]:
    planner, state, out = Planner(load_policy()), FleetState(), []
    for day in range(first_day, first_day + days):
        ts = f.START_TS + day * DAY
        for n in range(day % 3, 30, 7):
            out += planner.on_finding(state, f.finding(f"h{n}", ts=ts + n), f"d{n % 3}", 10)
        for d in range(3):
            out += planner.reconcile(state, f"d{d}", 10, ts + DAY - 1)
    return out


def send(settings: Settings, actions: list[Action]) -> None:
    produce(settings, [("actions", a.domain.encode(), CODEC.encode(a.to_record())) for a in actions])


def fold(settings: Settings, keeper: FleetSnapshots) -> tuple[FleetState, LogTailer, list[bool]]:
    """One worker's start: load the snapshot, tail the log to its end, snapshot on the way."""
    holder = {"state": None}
    state, marks = keeper.load()
    holder["state"] = state
    rewound: list[bool] = []

    def rewind() -> None:
        rewound.append(True)
        holder["state"] = FleetState()
        keeper.rewound()

    tailer = LogTailer(
        settings.topics.actions.name,
        settings.kafka.aiokafka(settings.bootstrap_servers),
        lambda r: apply_logged(holder["state"], r),
        CODEC,
        event_type=LOG_EVENT_TYPES,
        start=marks,
        on_rewind=rewind,
        on_progress=lambda m: keeper.progress(holder["state"], m),
    )

    async def run() -> None:
        task = asyncio.create_task(tailer.run())
        await tailer.catch_up(60)
        tailer.stop()
        await task

    asyncio.run(run())
    keeper.flush()
    return holder["state"], tailer, rewound  # type: ignore[return-value]


def keeper(path: Path, settings: Settings) -> FleetSnapshots:
    return FleetSnapshots(
        path, settings.topics.actions.name, every=50, keep_ids=100_000, ended_horizon_ms=30 * DAY
    )


def test_a_restart_folds_only_the_actions_after_its_snapshot(kafka, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    settings = isolated_settings(kafka.settings)
    admin.create_topics(settings)
    before, after = history(0, 40), history(40, 5)
    send(settings, before)
    first, tailer, _ = fold(settings, keeper(tmp_path / "snap", settings))
    assert tailer.records == len(before) and (tmp_path / "snap").exists()
    send(settings, after)
    second, tailer, rewound = fold(settings, keeper(tmp_path / "snap", settings))
    assert not rewound
    # only the tail: the new actions, plus fewer than ``every`` the last snapshot did not cover
    assert len(after) <= tailer.records < len(after) + 50, (tailer.records, len(before), len(after))
    whole, _, _ = fold(
        settings, keeper(tmp_path / "none", settings.model_copy())
    )  # a worker with no snapshot
    assert second.hosts == whole.hosts and second.domains == whole.domains and second.count == whole.count

    # the topic deleted and recreated with other records, past the same offsets
    admin.delete_topics(settings, [settings.topics.actions.name])
    admin.create_topics(settings)
    send(settings, history(100, 80))
    third, tailer, rewound = fold(settings, keeper(tmp_path / "snap", settings))
    assert len(history(100, 80)) > len(before) + len(after), "the new log reaches past the snapshot's offsets"
    assert rewound and tailer.records == len(history(100, 80))
    assert set(third.applied) == {a.action_id for a in history(100, 80)}
    admin.delete_topics(settings, [s.name for s in settings.topics.all()])
