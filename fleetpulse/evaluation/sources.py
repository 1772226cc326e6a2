"""I/O shell of ``fleetpulse score``: read the truth directory and the findings (Kafka or lake); printing is ``render``."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from analytics.lake import scan
from fleetpulse.evaluation.detection import DAY_MS, RepeatRule, ScoreReport, ScoringError, WindowPeriod, score
from fleetpulse.evaluation.policy_rules import (
    LEMON_KINDS,
    critical_kinds_from_policy,
    met_rules_from_policy,
    rules_from_policy,
)
from ground.errors import FleetpulseError, TopicReadError
from ground.kafka.reading import read_to_end
from schemas import Codec, DecodeError
from schemas.arrow import flatten

if TYPE_CHECKING:
    from ground.settings import Settings
    from streams.core.policy import Policy

FINDING_COLUMNS: dict[str, Any] = {
    "finding_id": pl.Utf8,
    "host_id": pl.Utf8,
    "cluster": pl.Utf8,
    "ts": pl.Int64,
    "detector": pl.Utf8,
    "rule": pl.Utf8,
    "scope": pl.Utf8,
    "scope_key": pl.Utf8,
    "window_start": pl.Int64,
    "window_end": pl.Int64,
}

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNIT_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": DAY_MS}


Truth = tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]]


def load_truth(truth_dir: Path | Sequence[Path]) -> Truth:
    """``(hosts, faults, manifest)`` from a simulator ``--truth-out`` directory.

    Several directories are a run and its continuations (``simulate --continue-from``), oldest
    first: see ``join_segments``.
    """
    if not isinstance(truth_dir, Path):
        dirs = list(truth_dir)
        if not dirs:
            raise ScoringError("no truth directory given")
        if len(dirs) > 1:
            return join_segments([_load_one(d) for d in dirs], dirs)
        truth_dir = dirs[0]
    return _load_one(truth_dir)


def join_segments(segments: Sequence[Truth], names: Sequence[Path]) -> Truth:
    """One truth for a run continued in segments: its faults together, the period from the first
    start to the last end, and ``manifest["segments"]`` with each segment's period and sample interval
    (a fast-forward history and a live continuation sample at very different intervals).

    Each segment must continue the one before it (``continues_run_id``, no gap in time) over the
    same fleet; otherwise the error names the directory that does not.
    """
    hosts, faults, first = segments[0]
    manifest = dict(first)
    for (h, _, m), (_, _, prev), name in zip(segments[1:], segments[:-1], names[1:], strict=True):
        if m.get("continues_run_id") != prev.get("run_id") or m.get("start_ts") != prev.get("end_ts"):
            raise ScoringError(
                f"{name} does not continue the run before it (continues {m.get('continues_run_id')!r} "
                f"from {m.get('start_ts')}, the previous run is {prev.get('run_id')!r} ending {prev.get('end_ts')})"
            )
        if not h["host_id"].equals(hosts["host_id"]):
            raise ScoringError(f"{name} simulates another fleet than {names[0]}")
    manifest["end_ts"] = segments[-1][2]["end_ts"]
    runs = {(j["slot"], j["start_ts"]): j for _, _, m in segments for j in m.get("jobs") or []}
    if runs:
        manifest["jobs"] = [runs[key] for key in sorted(runs)]
    episodes = [e for _, _, m in segments for e in m.get("slow_episodes") or []]
    if episodes:
        manifest["slow_episodes"] = episodes
    answers = [m["closed_loop"] for _, _, m in segments if m.get("closed_loop")]
    if answers:  # closed loop each segment folds the whole action log: the last one covers the run
        manifest["closed_loop"] = answers[-1] | training_by_segment([m for _, _, m in segments])
    manifest["days"] = (manifest["end_ts"] - manifest["start_ts"]) / DAY_MS
    manifest["segments"] = [
        {k: m.get(k) for k in ("run_id", "mode", "start_ts", "end_ts", "sample_interval_s")}
        for _, _, m in segments
    ]
    return hosts, pl.concat([f for _, f, _ in segments], how="vertical_relaxed"), manifest


def training_by_segment(manifests: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each closed-loop segment's jobs figures (with its mode and days) and the run's goodput over all of them.

    A segment replays its jobs over its own window only, so its ETTR is its own; useful, available and
    lost GPU-hours add up across segments (their windows do not overlap), which gives the run's goodput.
    """
    parts = [(m, m["closed_loop"]["jobs"]) for m in manifests if (m.get("closed_loop") or {}).get("jobs")]
    if not parts:
        return {}
    lost: dict[str, float] = {}
    for _, j in parts:
        for cause, gpu_h in (j.get("lost_gpu_h") or {}).items():
            lost[cause] = lost.get(cause, 0.0) + gpu_h
    useful = sum(j["useful_gpu_h"] for _, j in parts)
    available = sum(j["available_gpu_h"] for _, j in parts)
    return {
        "jobs_by_segment": [
            j | {"mode": m.get("mode"), "days": round((m["end_ts"] - m["start_ts"]) / DAY_MS, 3)}
            for m, j in parts
        ],
        "jobs_whole_run": {
            "goodput": round(useful / available, 6) if available else None,
            "useful_gpu_h": round(useful, 3),
            "available_gpu_h": round(available, 3),
            "lost_gpu_h": {c: round(v, 3) for c, v in lost.items()},
        },
    }


def _load_one(truth_dir: Path) -> Truth:
    paths = {name: truth_dir / name for name in ("hosts.parquet", "faults.parquet", "manifest.json")}
    missing = [name for name, p in paths.items() if not p.is_file()]
    if missing:
        raise ScoringError(
            f"truth directory {truth_dir} lacks {', '.join(missing)} (fleetpulse simulate --truth-out)"
        )
    try:
        manifest = json.loads(paths["manifest.json"].read_text())
        if (truth_dir / "jobs.parquet").is_file():  # the job runs: when each slot's hosts were busy
            jobs = pl.read_parquet(truth_dir / "jobs.parquet", columns=["slot", "start_ts", "end_ts"])
            manifest["jobs"] = jobs.to_dicts()
        if (truth_dir / "slow_episodes.parquet").is_file():  # when each slow host was slow
            manifest["slow_episodes"] = pl.read_parquet(truth_dir / "slow_episodes.parquet").to_dicts()
        return pl.read_parquet(paths["hosts.parquet"]), pl.read_parquet(paths["faults.parquet"]), manifest
    except (OSError, ValueError, pl.exceptions.PolarsError) as exc:
        raise ScoringError(f"cannot read truth in {truth_dir}: {exc}") from exc


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame([{k: r.get(k) for k in FINDING_COLUMNS} for r in rows], schema=FINDING_COLUMNS)


def findings_from_lake(lake: str | Path) -> pl.DataFrame:
    """FindingRaised rows of the lake's ``finding_raised`` table (empty frame if it has none)."""
    try:
        frame = scan(lake, "finding_raised").select(list(FINDING_COLUMNS)).collect()
    except (pl.exceptions.PolarsError, FleetpulseError) as exc:
        raise ScoringError(f"cannot read the findings of the lake {lake}: {exc}") from exc
    return frame.cast(FINDING_COLUMNS)  # type: ignore[arg-type]


def findings_from_kafka(
    settings: Settings, topic: str | None = None, timeout_s: float = 60.0
) -> pl.DataFrame:
    """Every FindingRaised on the findings topic, from the beginning up to the end offsets seen at start."""
    topic = topic or settings.topics.findings.name
    return _frame(events_from_kafka(settings, topic, "FindingRaised", timeout_s))


def events_from_kafka(
    settings: Settings, topic: str, event_type: str, timeout_s: float, *, missing_ok: bool = False
) -> list[dict[str, Any]]:
    """Flat rows of every ``event_type`` record on ``topic`` up to the end offsets seen at start."""
    codec = Codec()
    rows: list[dict[str, Any]] = []
    try:
        for rec in read_to_end(
            settings.bootstrap_servers, settings.kafka, topic, timeout_s=timeout_s, missing_ok=missing_ok
        ):
            try:
                decoded = codec.decode(rec.value)
            except DecodeError:
                continue  # the validator dead-letters these; they are not events of the run
            if decoded.event_type == event_type:
                rows.append(flatten(decoded.record))
    except TopicReadError as exc:
        raise ScoringError(str(exc)) from exc
    return rows


def parse_rule(text: str) -> tuple[str, RepeatRule]:
    """``KIND=COUNT/DURATION`` (e.g. ``dram_uce=2/7d``, ``link_flap=3/24h``); a lemon kind (``LEMON_KINDS``)."""
    kind, _, spec = text.partition("=")
    count, _, duration = spec.partition("/")
    match = _DURATION.match(duration.strip())
    if kind not in LEMON_KINDS or not count.strip().isdigit() or match is None:
        raise ScoringError(
            f"bad --rule {text!r}: want KIND=COUNT/DURATION, KIND one of {', '.join(LEMON_KINDS)}"
        )
    window_ms = int(float(match.group(1)) * _UNIT_MS[match.group(2)])
    return kind, RepeatRule((kind,), int(count), window_ms)


def score_with_policy(
    found: pl.DataFrame,
    truth: Truth,
    policy: Policy,
    *,
    rules: Mapping[str, RepeatRule] | None = None,
    window_s: float | None = None,
    slow_k: int | None = None,
) -> ScoreReport:
    """``score`` with the thresholds the detector runs with (its policy); explicit arguments override them.

    The policy gives the lag after a lemon reached its rule, "rule met", the critical kinds and the
    windows that times to detect are counted in; never what must be found (the truth's lemons and slow
    hosts by materiality, the same for every policy scored on this truth). The slow-host window is widened to the sample interval, per segment for a continued run.
    """
    hosts, faults, manifest = truth
    policy_window = window_s if window_s is not None else policy.slow_host.window / 1000
    window = _widened(policy_window, manifest.get("sample_interval_s"))
    segments = manifest.get("segments") or []
    periods = [
        WindowPeriod(
            int(s["start_ts"]), int(s["end_ts"]), _widened(policy_window, s.get("sample_interval_s"))
        )
        for s in segments
    ]
    common: dict[str, Any] = {
        "rules": rules if rules is not None else rules_from_policy(policy),
        "slow_k": slow_k if slow_k is not None else policy.slow_host.k,
        "slow_n": max(policy.slow_host.n, slow_k or 0),
        "slow_min": policy.slow_host.min_slowdown,
        "critical_kinds": critical_kinds_from_policy(policy),
        "met_rules": met_rules_from_policy(policy),
    }
    report = score(found, hosts, faults, manifest, window_s=window, window_periods=periods, **common)
    live = [s for s in segments[1:] if s.get("mode") == "live"]
    if not live or segments[0].get("mode") == "live":
        return report
    # a history continued live: the live segments alone, with the live window
    lo, hi = int(live[0]["start_ts"]), int(live[-1]["end_ts"])
    in_live = found.filter(pl.col("ts").is_between(lo, hi))
    live_window = _widened(policy_window, live[-1].get("sample_interval_s"))
    live_report = score(
        in_live,
        hosts,
        faults,
        {
            "start_ts": lo,
            "end_ts": hi,
            "jobs": manifest.get("jobs"),
            "slow_episodes": manifest.get("slow_episodes"),
        },
        window_s=live_window,
        **common,
    )
    return dataclasses.replace(report, live=live_report)


def _widened(window_s: float, interval_s: object) -> float:
    """The detector widens a window to at least one sample interval (``slow.window_bounds``)."""
    return max(window_s, float(interval_s)) if isinstance(interval_s, int | float) else window_s
