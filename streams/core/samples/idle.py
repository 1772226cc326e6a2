"""Which of a worker's samples partitions are idle: caught up, by fresh fetches, for a whole timeout.

Idleness is declared at the source and nowhere else (see ``streams.sample_partitions``): pure
bookkeeping here, fed by the stage after every fetch.
"""

from __future__ import annotations


class IdleSources:
    """Which owned partitions are idle: caught up, by fresh fetches, for ``timeout_ms`` of wall time.

    Pure bookkeeping; the stage feeds it what its consumer knows after every fetch. An idle
    partition is announced again every ``timeout_ms`` while it stays idle, so a cluster that
    appears later (a fleet grows) hears of it too and does not wait for it forever.
    """

    def __init__(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms
        self._since: dict[int, int] = {}  # partition -> wall time it was first seen caught up
        self._said: dict[int, int] = {}  # declared idle -> wall time it was last announced
        self._taken_over: set[int] = set()  # newly owned: an earlier owner may have declared it idle

    def observe(self, partition: int, *, caught_up: bool, now_ms: int) -> bool:
        """True when the partition should be announced idle: after the whole timeout caught up, then every timeout."""
        if not caught_up:
            self._since.pop(partition, None)  # a declared partition stays idle until it has records
            return False
        since = self._since.setdefault(partition, now_ms)
        said = self._said.get(partition)
        if now_ms - since >= self.timeout_ms and (said is None or now_ms - said >= self.timeout_ms):
            self._said[partition] = now_ms
            return True
        return False

    def retract(self, partition: int) -> None:
        """The announcement could not be made (no cluster known yet): try again at the next fetch."""
        self._said.pop(partition, None)

    def resume(self, partition: int) -> bool:
        """The partition has records; True if it may be counted as idle downstream (say it is not)."""
        self._since.pop(partition, None)
        was = partition in self._said or partition in self._taken_over
        self._said.pop(partition, None)
        self._taken_over.discard(partition)
        return was

    def take_over(self, partition: int) -> None:
        """Newly owned (start, rebalance): its first records are announced, whatever an earlier owner said."""
        self.forget(partition)
        self._taken_over.add(partition)

    def declared(self) -> list[int]:
        return sorted(self._said)

    def forget(self, partition: int) -> None:
        self._since.pop(partition, None)
        self._said.pop(partition, None)
        self._taken_over.discard(partition)


def caught_up(
    next_offset: int, highwater: int | None, polled_ms: int | None, now_ms: int, fresh_ms: int
) -> bool:
    """Nothing left to read, as a fetch answered within ``fresh_ms`` says (a failing broker gives no answer)."""
    return (
        highwater is not None
        and polled_ms is not None
        and now_ms - polled_ms <= fresh_ms
        and next_offset >= highwater
    )
