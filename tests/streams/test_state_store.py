"""A RocksDB table store that cannot write ends the worker (a full disk), before the record is acknowledged."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import faust
import pytest
from faust.stores import by_url
from faust.types import TP

from streams import state_store
from streams.state_store import EXIT_STATE_WRITE, URL, FailFastStore


class Exited(Exception):
    pass


def exit_now(code: int) -> None:
    raise Exited(code)


class FullDisk:
    """A RocksDB handle whose writes fail as rocksdict reports ENOSPC."""

    def put(self, key: bytes, value: bytes) -> None:
        raise Exception("IO error: No space left on device: While appending to file: 000004.log")  # noqa: TRY002

    def delete(self, key: bytes) -> None:
        self.put(key, b"")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FailFastStore:
    app = faust.App("state-store-test", datadir=str(tmp_path), store=URL)
    table = app.Table("t", default=int)
    s = FailFastStore(URL, app, table)
    monkeypatch.setattr(s, "_db_for_partition", lambda partition: FullDisk())
    monkeypatch.setattr(s, "exit_now", exit_now)
    monkeypatch.setattr(state_store, "_exit", exit_now)
    event = SimpleNamespace(message=SimpleNamespace(partition=0))
    monkeypatch.setattr("faust.stores.rocksdb.current_event", lambda: event)  # as inside an agent
    return s


def test_the_worker_uses_the_fail_fast_store() -> None:
    assert by_url(URL) is FailFastStore


def test_a_table_write_refused_by_a_full_disk_ends_the_process(store: FailFastStore) -> None:
    with pytest.raises(Exited) as ended:
        store._set(b"k", b"v")
    assert ended.value.args == (EXIT_STATE_WRITE,)


def test_a_persisted_offset_refused_by_a_full_disk_ends_the_process(store: FailFastStore) -> None:
    with pytest.raises(Exited):
        store.set_persisted_offset(TP("t", 0), 42)


def test_other_errors_are_raised_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_store, "_exit", exit_now)
    state_store.end_process(
        KeyError("k"), exit_now
    )  # not a write RocksDB refused: returns, the caller raises
