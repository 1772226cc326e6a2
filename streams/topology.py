"""The detection topology's names: its consumer groups, internal topics and checkpoint topic.

The worker creates these before Faust starts; the demo, the fault suite and the scoring read
the same names from here to check lag and progress.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ground.kafka.topics import TopicSpec

if TYPE_CHECKING:
    from ground.settings import Settings


def internal_topics(settings: Settings, partitions: dict[str, int] | None = None) -> list[TopicSpec]:
    """Faust's repartition and changelog topics and the host-window checkpoints, created before Faust starts.

    Faust skips a missing source topic when it subscribes, and a changelog it has just
    created can show 0 partitions in its metadata for a moment (PartitionsMismatch).
    """
    d = settings.detect
    t = settings.topics
    parts = partitions or {}
    spec = {"replication_factor": d.internal_replication}
    out = [
        TopicSpec(name=f"{d.app_id}-{suffix}", partitions=d.internal_partitions, **spec)
        for suffix in ("cluster-summaries", "planner")
    ]
    changelogs = {
        "repeat-hosts": parts.get(t.errors.name, t.errors.partitions),
        "cluster-windows": d.internal_partitions,
    }
    out += [
        TopicSpec(name=f"{d.app_id}-{table}-changelog", partitions=n, cleanup_policy="compact", **spec)
        for table, n in changelogs.items()
    ]
    out.append(
        TopicSpec(
            name=checkpoint_topic(settings),
            partitions=parts.get(t.samples.name, t.samples.partitions),
            cleanup_policy="compact",
            segment_ms=CHECKPOINT_SEGMENT_MS,
            **spec,
        )
    )
    return out


CHECKPOINT_SEGMENT_MS = 10 * 60 * 1000  # one checkpoint record per partition every few seconds


def samples_group(settings: Settings) -> str:
    """The consumer group of the host-window stage (``fleet.samples``), beside Faust's own."""
    return f"{settings.detect.app_id}-samples"


def consumer_groups(settings: Settings) -> dict[str, list[str]]:
    """Which of a detect worker's consumer groups commits offsets on which topics (for lag checks).

    The samples group commits after each checkpoint (``detect.samples_checkpoint_s``), so its
    committed lag reaches 0 up to that long after the last sample was processed.
    """
    d, t = settings.detect, settings.topics
    faust_topics = [t.errors.name, t.findings.name, f"{d.app_id}-cluster-summaries", f"{d.app_id}-planner"]
    return {d.app_id: faust_topics, samples_group(settings): [t.samples.name]}


def checkpoint_topic(settings: Settings) -> str:
    """The host-window stage's checkpoints: one partition per samples partition, compacted."""
    return f"{settings.detect.app_id}-host-windows-checkpoints"
