"""A rich progress bar over sim time that also shows events/s (or nothing, when disabled)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

Update = Callable[[int, int], None]  # (ticks done, events so far)


@contextlib.contextmanager
def tick_progress(total_ticks: int, description: str, enabled: bool) -> Iterator[Update]:
    if not enabled:
        yield lambda ticks, events: None
        return
    started = time.monotonic()
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[events]:>12,} events  {task.fields[rate]:>9,.0f} ev/s"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, transient=False) as bar:
        task = bar.add_task(description, total=total_ticks, events=0, rate=0.0)

        def update(ticks: int, events: int) -> None:
            rate = events / max(time.monotonic() - started, 1e-9)
            bar.update(task, completed=ticks, events=events, rate=rate)

        yield update
