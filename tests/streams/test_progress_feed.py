"""The worker's reader of producers' progress reports: bad records are skipped and counted, not fatal."""

from __future__ import annotations

from schemas.progress import WriterProgress, encode_progress
from streams.core.planning.writers import WriterMarks
from streams.progress_feed import ProgressFeed


def test_reports_are_kept_and_bad_records_skipped_with_a_count() -> None:
    marks = WriterMarks(frozenset({"sim"}))
    feed = ProgressFeed("fleet.progress", {}, marks, on_report=lambda: None)
    assert feed.feed(encode_progress(WriterProgress("sim", "errors", 0, 4, 1_000)))
    assert not feed.feed(b"not json")
    assert not feed.feed(None)
    assert not feed.feed(encode_progress(WriterProgress("agent-3", "errors", 0, 9, 9_000)))  # not declared
    assert (feed.undecodable, marks.ignored) == (2, 1)
    assert marks.passed("errors", 0, 4) == 1_000
