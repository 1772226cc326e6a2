"""Archivers sharing the partitions: member i of N archives partition p of every topic where p % N == i.

A static split rather than a consumer-group assignment: a partition never has two owners at once. A
rebalance hands a partition over while its old owner may still be publishing a batch of it, and two
writers that both found a partition's rows missing from a table would both append them. A member that
is down holds its partitions back until it is started again (compose restarts it), as one archiver does.

The known-host gate needs every host's inventory, and the inventory's partitions are split too: a member
reads the inventory partitions it does not own (``InventoryWatch``, no group, nothing archived) before
each batch, as the one archiver reads the whole inventory before each batch.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from typing import Any

from schemas import Codec, DecodeError

log = logging.getLogger(__name__)

CATCH_UP_S = 10.0  # reading the inventory to its end before a batch: a longer wait holds the batch back


def read_to_end(consumer: Any, partitions: Sequence[Any], within_s: float) -> Iterator[Any]:
    """Every record ``consumer`` polls (from any of its partitions) until ``partitions`` reach the end they had
    when called, or ``within_s`` passes (then it logs which were left behind)."""
    end = consumer.end_offsets(list(partitions))
    deadline = time.monotonic() + within_s
    while behind := [tp for tp in partitions if consumer.position(tp) < end[tp]]:
        if time.monotonic() >= deadline:
            log.warning("%s not read to its end within %.0f s", ", ".join(map(str, behind)), within_s)
            return
        for messages in consumer.poll(timeout_ms=200).values():
            yield from messages


def owned(partitions: Sequence[Any], *, member: int, members: int) -> list[Any]:
    """The topic-partitions (anything with ``.partition``) member ``member`` of ``members`` archives."""
    return [tp for tp in partitions if tp.partition % members == member]


class InventoryWatch:
    """The host ids on inventory partitions another member archives, read from their beginning."""

    def __init__(self, consumer: Any, partitions: Sequence[Any], codec: Codec) -> None:
        """``consumer``: a kafka-python consumer of no group, given to the watch (it closes it)."""
        self.consumer = consumer
        self.partitions = list(partitions)
        self.codec = codec
        self.hosts: set[str] = set()
        consumer.assign(self.partitions)
        consumer.seek_to_beginning(*self.partitions)

    def catch_up(self) -> set[str]:
        """Read to the partitions' current end; every host id seen so far."""
        for m in read_to_end(self.consumer, self.partitions, CATCH_UP_S):
            try:
                self.hosts.add(str(self.codec.decode(m.value).record["host_id"]))
            except (DecodeError, KeyError, TypeError):  # its owner rejects it with the reason
                continue
        return self.hosts

    def close(self) -> None:
        self.consumer.close(autocommit=False)
