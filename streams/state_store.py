"""The worker's RocksDB table store, ending the worker at once when it cannot write (a full disk).

After a failed write RocksDB turns read-only for good, and Faust logs the error, restarts the agent
and acknowledges the record whose state was never stored: the worker stays up, commits input it did
not process and never writes again, even once the disk has room. So the first failed write ends the
process (like a SIGKILL, before any further commit); started again, the worker resumes from its
last commit and its changelog, as after any crash. Registered as the ``fleetpulse-rocksdb`` store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from faust.stores import STORES
from faust.stores.rocksdb import Store as RocksDBStore

from streams.fatal import EXIT_TEMPFAIL, end_worker, exit_process

URL = "fleetpulse-rocksdb://"
EXIT_STATE_WRITE = EXIT_TEMPFAIL  # start the worker again once the disk has room


def table_options(write_buffer_mb: int, block_cache_mb: int) -> dict[str, int]:
    """RocksDB options of every table partition: memtables and block cache of a known size.

    Faust's defaults allow each partition 3 memtables of 64 MB and a 2 GB cache, so a worker's memory
    grows for as long as its busiest partitions take to fill one memtable.
    """
    return {
        "write_buffer_size": write_buffer_mb << 20,
        "max_write_buffer_number": 2,
        "block_cache_size": block_cache_mb << 20,
    }


def _exit(code: int) -> None:
    exit_process(code)


def end_process(exc: BaseException, exit_now: Callable[[int], None] = _exit) -> None:
    """End the process if ``exc`` is RocksDB refusing a write; any other error is the caller's to raise."""
    if "IO error" in str(exc):
        end_worker(f"state store write failed ({exc})", exit_now, EXIT_STATE_WRITE)


class FailFastStore(RocksDBStore):  # type: ignore[misc]
    """``faust.stores.rocksdb.Store`` whose writes end the process when RocksDB refuses them."""

    exit_now: Callable[[int], None] = staticmethod(_exit)

    def _set(self, key: bytes, value: bytes | None) -> None:
        try:
            super()._set(key, value)
        except Exception as exc:  # noqa: BLE001 - rocksdict raises plain Exception("IO error: …")
            end_process(exc, self.exit_now)
            raise

    def _del(self, key: bytes) -> None:
        try:
            super()._del(key)
        except Exception as exc:  # noqa: BLE001
            end_process(exc, self.exit_now)
            raise

    def set_persisted_offset(self, tp: Any, offset: int) -> None:
        try:
            super().set_persisted_offset(tp, offset)
        except Exception as exc:  # noqa: BLE001
            end_process(exc, self.exit_now)
            raise

    def apply_changelog_batch(self, *args: Any, **kwargs: Any) -> None:
        try:
            super().apply_changelog_batch(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            end_process(exc, self.exit_now)
            raise


STORES.aliases["fleetpulse-rocksdb"] = f"{__name__}:FailFastStore"
