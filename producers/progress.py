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


StepUpdate = Callable[[str, int, int], None]  # (step, done, total; total 0 when unknown)


def no_steps(step: str, done: int, total: int) -> None:
    """The default: long work that shows nothing."""


class StepLines:
    """Progress of long work in steps, as plain lines (a log or a terminal alike).

    A step with a total prints at most every ``every`` of it (10 % by default) and at its end.
    """

    def __init__(self, write: Callable[[str], None], every: float = 0.1) -> None:
        self.write = write
        self.every = every
        self.started = time.monotonic()
        self._shown: dict[str, int] = {}

    def __call__(self, step: str, done: int, total: int) -> None:
        elapsed = time.monotonic() - self.started
        if not total:
            self.write(f"{step}: {done:,} ({elapsed:.1f} s)")
            return
        last = self._shown.get(step, -1)
        if done < total and last >= 0 and done - last < self.every * total:
            return
        self._shown[step] = done
        self.write(f"{step}: {done:,} of {total:,} ({done / total:.0%}, {elapsed:.1f} s)")
