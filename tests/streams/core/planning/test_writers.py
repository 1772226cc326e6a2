"""A source partition passes a time once every declared writer has reported past it and its offset is handled."""

from __future__ import annotations

from schemas.progress import WriterProgress
from streams.core.planning.writers import MAX_WAITING, WriterMarks


def report(writer: str, through: int, ts: int, partition: int = 0) -> WriterProgress:
    return WriterProgress(writer, "errors", partition, through, ts)


def test_a_report_counts_only_once_the_partition_is_handled_through_its_offset() -> None:
    marks = WriterMarks(frozenset({"sim"}))
    assert marks.note(report("sim", 9, 1_000))
    assert marks.passed("errors", 0, None) is None
    assert marks.passed("errors", 0, 8) is None  # the writer's last record is not handled yet
    assert marks.waiting("errors", 0, 9) and not marks.waiting("errors", 0, 8)
    assert marks.passed("errors", 0, 9) == 1_000
    assert marks.passed("errors", 1, 9) is None  # another partition: not reported on


def test_an_earlier_report_counts_while_a_later_one_waits_for_its_offset() -> None:
    marks = WriterMarks(frozenset({"sim"}))
    marks.note(report("sim", -1, 500))  # nothing sent there yet
    marks.note(report("sim", 20, 2_000))
    assert marks.passed("errors", 0, None) == 500
    assert marks.passed("errors", 0, 19) == 500
    assert marks.passed("errors", 0, 20) == 2_000


def test_every_declared_writer_must_have_reported() -> None:
    marks = WriterMarks(frozenset({"sim", "importer"}))
    marks.note(report("sim", 3, 1_000))
    assert marks.passed("errors", 0, 10) is None  # the importer has said nothing: it may still send
    marks.note(report("importer", 7, 800))
    assert marks.passed("errors", 0, 10) == 800  # the slower writer's time


def test_writers_not_declared_are_ignored_and_counted() -> None:
    marks = WriterMarks(frozenset({"sim"}))
    assert not marks.note(report("agent-7", 3, 9_000))
    assert marks.ignored == 1 and marks.passed("errors", 0, 10) is None


def test_a_report_with_an_older_offset_than_one_kept_is_dropped() -> None:
    marks = WriterMarks(frozenset({"sim"}))
    marks.note(report("sim", 20, 2_000))
    marks.note(report("sim", 5, 3_000))  # out of order: its offset went back
    assert marks.passed("errors", 0, 10) is None
    assert marks.passed("errors", 0, 20) == 2_000


def test_with_no_writer_declared_nothing_passes() -> None:
    marks = WriterMarks(frozenset())
    marks.note(report("sim", -1, 1_000))
    assert marks.passed("errors", 0, 100) is None


def test_a_report_is_ahead_while_the_record_it_waits_for_is_not_handled() -> None:
    marks = WriterMarks(frozenset({"sim"}))
    marks.note(report("sim", 9, 1_000))
    assert marks.ahead("errors", 0, 8) and marks.ahead("errors", 0, None)
    assert not marks.ahead("errors", 0, 9) and not marks.ahead("errors", 1, None)


def test_reports_kept_per_partition_are_bounded_and_the_oldest_go_first() -> None:
    marks = WriterMarks(frozenset({"sim"}))
    for n in range(MAX_WAITING + 10):
        marks.note(report("sim", n, 1_000 + n))
    assert marks.passed("errors", 0, 5) is None  # those reports were dropped: later, never earlier
    assert marks.passed("errors", 0, 20) == 1_020


def claim(writer: str, through: int, ts: int, writers: tuple[str, ...], done: bool = False) -> WriterProgress:
    return WriterProgress(writer, "errors", 0, through, ts, writers=writers, done=done)


def test_with_none_declared_a_writer_that_claims_to_be_the_only_one_is_trusted() -> None:
    marks = WriterMarks(frozenset())
    assert marks.note(claim("sim-1", 4, 1_000, ("sim-1",)))
    assert marks.passed("errors", 0, 3) is None  # its record is not handled yet
    assert marks.passed("errors", 0, 4) == 1_000


def test_writers_that_name_different_sets_or_one_outside_the_set_fall_back_to_the_quiet_rule() -> None:
    marks = WriterMarks(frozenset())
    marks.note(claim("sim-1", 4, 1_000, ("sim-1",)))
    marks.note(claim("sim-2", 5, 2_000, ("sim-2",)))  # a second run, also claiming to be alone
    assert marks.passed("errors", 0, 9) is None
    other = WriterMarks(frozenset())
    other.note(claim("sim-1", 4, 1_000, ("sim-1",)))
    other.note(report("agent-7", 5, 2_000))  # reports, claims nothing, is not in the claimed set
    assert other.passed("errors", 0, 9) is None


def test_a_claimed_set_counts_once_every_member_has_reported() -> None:
    marks = WriterMarks(frozenset())
    marks.note(claim("a", 1, 1_000, ("a", "b")))
    assert marks.passed("errors", 0, 9) is None
    marks.note(claim("b", 2, 700, ("a", "b")))
    assert marks.passed("errors", 0, 9) == 700


def test_a_writer_that_is_done_is_forgotten_once_handled_so_the_next_run_counts_alone() -> None:
    marks = WriterMarks(frozenset())
    marks.note(claim("sim-1", 4, 1_000, ("sim-1",)))
    marks.note(claim("sim-1", 4, 1_000, ("sim-1",), done=True))
    marks.note(claim("sim-2", 8, 500, ("sim-2",)))  # starts over at older times, as a new writer
    assert marks.passed("errors", 0, 3) is None  # sim-1's last record not handled: it may still count
    assert marks.passed("errors", 0, 8) == 500


def test_claims_count_only_when_allowed() -> None:
    marks = WriterMarks(frozenset(), claims=False)
    assert not marks.note(claim("sim-1", 4, 1_000, ("sim-1",)))
    assert marks.ignored == 1 and marks.passed("errors", 0, 9) is None
    declared = WriterMarks(frozenset({"sim-1"}))  # a declared set wins over claims
    declared.note(claim("sim-1", 4, 1_000, ("sim-1", "agent-3")))
    assert declared.passed("errors", 0, 9) == 1_000
