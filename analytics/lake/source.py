"""The archiver's Kafka side: its consumers, the partitions it archives, the group-offset mirror, retention warnings.

kafka-python rather than the streams' Faust: the archiver assigns partitions itself and seeks to the
lake's offsets, which a Faust agent's group assignment and offset store would fight.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaTP
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

from analytics.errors import ArchiverError
from analytics.lake import offsets
from analytics.lake.batch import BatchPlan
from analytics.lake.layout import TopicPartition
from ground.kafka.admin import tcp_reachable

if TYPE_CHECKING:
    from ground.settings import Settings

log = logging.getLogger(__name__)


def open_consumer(
    settings: Settings, factory: Callable[..., Any] | None = None, *, in_group: bool = True
) -> Any:
    """A consumer that commits nothing by itself and reads committed records only; ``in_group``: the lake's group."""
    bootstrap = settings.bootstrap_servers
    if factory is None and not tcp_reachable(bootstrap, timeout_s=2.0):
        raise ArchiverError(
            f"no Kafka broker listens at {bootstrap}; start one with `fleetpulse broker start` "
            "or point FLEETPULSE_KAFKA__BOOTSTRAP_SERVERS at your cluster"
        )
    lake = settings.lake
    config = dict(
        settings.kafka.kafka_python(bootstrap),
        client_id=f"{settings.kafka.client_id_prefix}-archiver{'' if in_group else '-inventory'}",
        group_id=lake.group_id if in_group else None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        max_poll_records=lake.max_poll_records,
    )
    settings.kafka.check_login(bootstrap)  # refused SASL login: fail now
    try:
        return (factory or KafkaConsumer)(**config)
    except (KafkaError, OSError) as exc:
        raise ArchiverError(
            f"cannot connect to Kafka at {bootstrap}: {exc}; is the broker running (`fleetpulse broker start`)?"
        ) from exc


def topic_partitions(consumer: Any, topics: Iterable[str], settings: Settings) -> list[Any]:
    """Every partition of ``topics``, waiting up to ``lake.topic_wait_s`` for topics not created yet."""
    deadline = time.monotonic() + settings.lake.topic_wait_s
    while True:
        found = {t: consumer.partitions_for_topic(t) or set() for t in topics}
        missing = sorted(t for t, parts in found.items() if not parts)
        if not missing:
            return [KafkaTP(t, p) for t, parts in sorted(found.items()) for p in sorted(parts)]
        if time.monotonic() >= deadline:
            raise ArchiverError(
                f"topics {', '.join(missing)} do not exist on {settings.bootstrap_servers}; "
                "create them with `fleetpulse topics create` or narrow lake.families",
                missing[0],
            )
        time.sleep(0.5)


def mirror_offsets(consumer: Any, tps: list[Any], frontier: Mapping[TopicPartition, int]) -> None:
    """Mirror the lake's offsets into the consumer group so lag tools see progress (not used on restart).

    The whole frontier of ``tps`` is mirrored, not only the partitions of the last batch: a crash
    between an offsets commit and the group commit would otherwise leave the group behind on a
    partition that gets no new records.
    """
    ours = {TopicPartition(tp.topic, tp.partition) for tp in tps}  # other archivers own the rest
    committed = {
        KafkaTP(tp.topic, tp.partition): OffsetAndMetadata(offset, "", -1)
        for tp, offset in frontier.items()
        if tp in ours
    }
    try:
        consumer.commit(committed)
    except Exception as exc:  # the lake manifest is the truth; a failed group commit only delays lag metrics
        log.warning("group offset commit failed (the lake's _offsets table is authoritative): %s", exc)


class RetentionWatch:
    """Warns of offsets Kafka deleted before the lake archived them, each range once."""

    def __init__(self) -> None:
        self._reported: dict[TopicPartition, int] = {}  # last offset warned of as lost, per partition

    def report(self, lost: Mapping[TopicPartition, tuple[int, int]]) -> None:
        """Log each range lost (start-up and the first flush after it see the same one) once."""
        for tp, (first, last) in sorted(lost.items()):
            unreported = max(first, self._reported.get(tp, -1) + 1)
            if unreported > last:
                continue
            log.warning(
                "%s[%d]: offsets %d-%d expired from Kafka before they were archived",
                tp.topic,
                tp.partition,
                unreported,
                last,
            )
            self._reported[tp] = last

    def check(self, consumer: Any, frontier: Mapping[TopicPartition, int], plan: BatchPlan) -> None:
        """Warn of offsets that expired while running, before the commit of ``plan`` skips them.

        kafka-python resets an expired position to the earliest offset and says so only at INFO.
        Kafka is asked for the beginning offsets (one request) only when a partition's batch starts
        past its frontier: a gap can also be compaction, which loses nothing.
        """
        gaps = {tp: r.first for tp, r in plan.ranges.items() if tp in frontier and r.first > frontier[tp]}
        if not gaps:
            return
        try:
            begin = consumer.beginning_offsets([KafkaTP(tp.topic, tp.partition) for tp in gaps])
        except Exception as exc:  # a diagnosis only: the archive itself is not at stake
            log.warning("cannot check offsets skipped in %s against Kafka's retention: %s", sorted(gaps), exc)
            return
        beginning = {tp: min(begin[KafkaTP(tp.topic, tp.partition)], first) for tp, first in gaps.items()}
        self.report(offsets.lost_to_retention(frontier, beginning))
