"""What the soak samples each minute: a part's memory and open files over its whole process tree, and group lag.

A part is counted with its descendants, so a worker that forks helpers cannot hide memory in them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench_lake import rss_mb
from benchkit import cpu_s

from ground.kafka.reading import end_offsets, group_lags
from ground.settings import Settings


def descendants(root: int) -> list[int]:
    """``root`` and every live process below it (read from /proc's parent links)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        if Path(f"/proc/{pid}").exists():
            out.append(pid)
            todo.extend(children.get(pid, []))
    return out


def open_fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def queued_s(pid: int) -> float:
    """Seconds the process's threads were runnable but waiting for a core so far (run-queue wait, schedstat).

    Tells a part that idles (low CPU, little wait) from one starved by other processes (low CPU, long wait).
    """
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(stat.read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e9


def part_usage(root: int) -> dict[str, Any]:
    """RSS (MB; its anonymous part: heaps, not mapped libraries), open file descriptors, CPU seconds and run-queue wait summed over ``root``'s process tree;
    zeros once it has exited."""
    pids = descendants(root)
    rss = [r for r in (rss_mb(pid) for pid in pids) if not math.isnan(r)]
    anon = [r for r in (rss_mb(pid, "RssAnon") for pid in pids) if not math.isnan(r)]
    return {
        "pids": pids,
        "rss_mb": round(sum(rss), 1),
        "anon_mb": round(sum(anon), 1),
        "fds": sum(open_fds(pid) for pid in pids),
        "cpu_s": round(sum(cpu_s(pid) for pid in pids), 1),
        "queued_s": round(sum(queued_s(pid) for pid in pids), 1),
    }


def lag_probe(settings: Settings, groups: Mapping[str, Sequence[str]]) -> dict[str, dict[str, Any]]:
    """Per group: uncommitted records summed over its topics (None while it has committed nothing) and what
    its topics hold in all (the input the lag is judged against)."""
    bootstrap, kafka = settings.bootstrap_servers, settings.kafka
    out: dict[str, dict[str, Any]] = {}
    for group, topics in groups.items():
        per_topic = group_lags(bootstrap, kafka, group, topics)
        known = [v for v in per_topic.values() if v is not None]
        produced = sum(end_offsets(bootstrap, kafka, topics).values())
        lag = sum(known) if len(known) == len(per_topic) else None
        out[group] = {"lag": lag, "produced": produced, "per_topic": per_topic}
    return out
