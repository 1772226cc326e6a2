"""Reading the broker log: tail and follow, on plain files."""

from __future__ import annotations

from pathlib import Path

from fleetpulse.broker.logs import follow, tail


def test_tail_of_missing_file_is_empty(tmp_path: Path):
    assert tail(tmp_path / "nope.log") == []


def test_tail_returns_last_lines(tmp_path: Path):
    log = tmp_path / "broker.log"
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    assert tail(log, 3) == ["line 97", "line 98", "line 99"]
    assert tail(log, 0) == []
    assert len(tail(log, 1000)) == 100


def test_follow_yields_appended_lines_and_survives_rotation(tmp_path: Path):
    log = tmp_path / "broker.log"
    log.write_text("old\n")
    writes = iter([("a", "first\nsec"), ("a", "ond\n"), ("w", "rotated\n")])
    stopped: list[bool] = []

    def sleep(_: float) -> None:  # each idle poll performs the next write, then stops
        try:
            mode, text = next(writes)
        except StopIteration:
            stopped.append(True)
            return
        with log.open(mode) as fh:
            fh.write(text)

    lines = list(follow(log, sleep=sleep, stop=lambda: bool(stopped)))
    assert lines == ["first", "second", "rotated"]
