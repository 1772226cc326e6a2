"""The detection topology in one place: its stages, topics, keys and guarantees, and their names.

The worker creates the internal topics before Faust starts; the demo and the fault suite read
the group names from here to check lag. ``TOPOLOGY`` is what docs/DESIGN.md draws; a test
checks it against the Faust app the worker builds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

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
        "planner-held": d.internal_partitions,
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
    faust_topics = [t.errors.name, f"{d.app_id}-cluster-summaries", f"{d.app_id}-planner"]
    return {d.app_id: faust_topics, samples_group(settings): [t.samples.name]}


def checkpoint_topic(settings: Settings) -> str:
    """The host-window stage's checkpoints: one partition per samples partition, compacted."""
    return f"{settings.detect.app_id}-host-windows-checkpoints"


# ---------------------------------------------------------------------------------------------
# The detection topology, declared: what each stage reads, writes, keys by and guarantees.
# Topic names are roles: the settings' topic names (``errors`` → fleet.errors) or, with an
# ``app:`` prefix, the worker's internal topics (``app:planner`` → <app_id>-planner). A stage that
# dead-letters may also raise the dead-letter surge alert.
# ---------------------------------------------------------------------------------------------

RunsAs = Literal["faust agent", "aiokafka consumer", "log tailer"]


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage of a detect worker."""

    name: str
    runs_as: RunsAs
    consumes: tuple[str, ...]
    keyed_by: str
    produces: tuple[str, ...]
    guarantee: str


TOPOLOGY: tuple[Stage, ...] = (
    Stage(
        "samples",
        "aiokafka consumer",
        ("samples",),
        "host_id",
        ("app:cluster-summaries", "dlq", "alerts"),
        "host windows checkpointed with their offsets (app:host-windows-checkpoints); a replay re-sends "
        "the same bundle ids",
    ),
    Stage(
        "errors",
        "faust agent",
        ("errors",),
        "host_id",
        ("findings", "app:planner", "alerts", "dlq"),
        "validate, then repeat-offender rules on per-host state (table repeat-hosts); finding ids are "
        "deterministic, so a replay re-sends the same findings; each finding also goes to its "
        "domain's planner, and the partition's progress after it",
    ),
    Stage(
        "cluster",
        "faust agent",
        ("app:cluster-summaries",),
        "cluster",
        ("findings", "app:planner", "dlq", "alerts"),
        "peer comparison per cluster window (table cluster-windows), closed by the watermark of every "
        "samples partition; a window is judged once; a message that does not decode is dead-lettered; "
        "findings and progress go to the planner as the errors stage's do",
    ),
    Stage(
        "planner",
        "faust agent",
        ("app:planner",),
        "maintenance domain",
        ("actions", "alerts"),
        "findings decided in event-time order once every source's progress has passed them (held in "
        "table planner-held meanwhile); domain buffers and serialised work over the folded actions "
        "log; action and alert ids are deterministic, alerts are sent before their action",
    ),
    Stage(
        "lifecycle",
        "log tailer",
        ("actions", "inventory"),
        "maintenance domain",
        (),
        "every worker folds the whole actions log and the inventory from the beginning (host state, "
        "hosts out, the planner's memory)",
    ),
)


def topic_of(role: str, settings: Settings) -> str:
    """The concrete topic name of a role in ``TOPOLOGY``."""
    if role.startswith("app:"):
        suffix = role.removeprefix("app:")
        if suffix == "host-windows-checkpoints":
            return checkpoint_topic(settings)
        return f"{settings.detect.app_id}-{suffix}"
    return str(getattr(settings.topics, role).name)


def _node(role: str) -> str:
    return role.replace(":", "_").replace("-", "_")


def render_mermaid(topology: tuple[Stage, ...] = TOPOLOGY) -> str:
    """A Mermaid flowchart of the stages and topics (docs/DESIGN.md embeds it; a test keeps it in step)."""
    lines = ["```mermaid", "flowchart LR"]
    roles = sorted({r for s in topology for r in (*s.consumes, *s.produces)})
    lines += [f"    {_node(r)}[({r.removeprefix('app:')})]" for r in roles]
    for s in topology:
        lines.append(f'    {_node("stage:" + s.name)}["{s.name}<br/><i>{s.runs_as}, by {s.keyed_by}</i>"]')
        lines += [f"    {_node(r)} --> {_node('stage:' + s.name)}" for r in s.consumes]
        lines += [f"    {_node('stage:' + s.name)} --> {_node(r)}" for r in s.produces]
    lines.append("```")
    table = ["| stage | runs as | reads | keyed by | writes | guarantee |", "|---|---|---|---|---|---|"]
    table += [
        f"| {s.name} | {s.runs_as} | {', '.join(s.consumes)} | {s.keyed_by} | {', '.join(s.produces) or '—'} "
        f"| {s.guarantee} |"
        for s in topology
    ]
    return "\n".join([*lines, "", *table]) + "\n"


if __name__ == "__main__":
    print(render_mermaid(), end="")
