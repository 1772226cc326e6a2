"""Continue a finished run: same fleet (hosts, lemons, slow hosts), later event times, the
agents' sequence numbers picking up where they stopped. ``fleetpulse simulate --continue-from``
reads the earlier run's truth directory (its manifest and ``agents.parquet``).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from producers.config import FleetConfig
from producers.errors import SimulatorError
from producers.fleet import Fleet, build_fleet

AGENTS_FILE = "agents.parquet"
AGENTS_SCHEMA = pa.schema(
    [("host_id", pa.string()), ("last_agent_seq", pa.int64()), ("remapped_rows", pa.list_(pa.int32()))]
)


@dataclass(frozen=True)
class Previous:
    """What a continuation needs from the run it continues."""

    manifest: dict[str, Any]
    config: FleetConfig
    seed: int
    run_id: str
    start_ts: int
    end_ts: int
    segment: int
    fleet_window: tuple[int, int]  # (start_ts, end_ts) the fleet was built with: segment 0's window
    last_seq: np.ndarray
    remapped: np.ndarray


def agents_table(fleet: Fleet, seq: np.ndarray, remapped: np.ndarray) -> pa.Table:
    """Each agent's state at the end of a run: last agent_seq and remapped rows per GPU."""
    return pa.Table.from_pydict(
        {
            "host_id": fleet.host_id,
            "last_agent_seq": seq,
            "remapped_rows": remapped.astype(np.int32).tolist(),
        },
        schema=AGENTS_SCHEMA,
    )


def load_previous(directory: Path) -> Previous:
    manifest_path, agents_path = directory / "manifest.json", directory / AGENTS_FILE
    if not manifest_path.is_file() or not agents_path.is_file():
        raise SimulatorError(
            f"{directory} is not the truth directory of a finished run (needs manifest.json and {AGENTS_FILE}; "
            "write one with --truth-out)"
        )
    manifest = json.loads(manifest_path.read_text())
    if manifest.get("interrupted"):
        raise SimulatorError(f"the run in {directory} was interrupted: it cannot be continued")
    fleet_data = dict(manifest["fleet"])
    # keep the hazard the history was calibrated with, rather than re-calibrating on the new window
    failures = dict(fleet_data["failures"])
    failures["weibull_scale_days"] = manifest["resolved"]["weibull_scale_days"]
    fleet_data["failures"] = failures
    try:
        config = FleetConfig.model_validate(fleet_data)
    except ValidationError as exc:
        raise SimulatorError(f"{manifest_path}: the fleet config does not validate any more: {exc}") from exc
    agents = pq.read_table(agents_path)
    return Previous(
        manifest=manifest,
        config=config,
        seed=int(manifest["seed"]),
        run_id=str(manifest["run_id"]),
        start_ts=int(manifest["start_ts"]),
        end_ts=int(manifest["end_ts"]),
        segment=int(manifest.get("segment", 0)),
        fleet_window=_fleet_window(manifest),
        last_seq=agents.column("last_agent_seq").to_numpy(),
        remapped=np.array(agents.column("remapped_rows").to_pylist(), dtype=np.int64),
    )


def _fleet_window(manifest: dict[str, Any]) -> tuple[int, int]:
    """The window the fleet was built with; manifests written before ``fleet_window`` fall back
    to their own window (exact for a first segment)."""
    window = manifest.get("fleet_window") or (manifest["start_ts"], manifest["end_ts"])
    return int(window[0]), int(window[1])


def continued_fleet(previous: Previous, end_ts: int) -> Fleet:
    """The earlier run's fleet, observed from its end to ``end_ts`` with fresh random streams.

    Rebuilt from the original window: install cohorts and onsets depend on it, so a later
    segment's window would give a different fleet.
    """
    original = build_fleet(previous.config, previous.seed, *previous.fleet_window)
    if len(original.host_id) != len(previous.last_seq):
        raise SimulatorError("agents.parquet does not match the fleet of its manifest")
    return dataclasses.replace(
        original, start_ts=previous.end_ts, end_ts=end_ts, segment=previous.segment + 1
    )
