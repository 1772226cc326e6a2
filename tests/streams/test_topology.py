"""The declared topology matches the app the worker builds, and docs/DESIGN.md draws the declared one."""

from __future__ import annotations

from pathlib import Path

from ground.settings import Settings
from streams import state_store
from streams.app import DetectApp
from streams.core.policy import load_policy
from streams.topology import TOPOLOGY, render_mermaid, topic_of

ROOT = Path(__file__).resolve().parents[2]
BEGIN, END = "<!-- topology:begin -->\n", "<!-- topology:end -->"


def _app(tmp_path: Path) -> tuple[Settings, DetectApp]:
    settings = Settings.load()
    return settings, DetectApp(
        settings, load_policy(settings.detect.policy_file), data_dir=tmp_path, partitions={}
    )


def test_faust_agents_are_the_declared_stages_on_their_topics(tmp_path: Path) -> None:
    settings, detect = _app(tmp_path)
    built = {name: sorted(agent.channel.topics) for name, agent in detect.app.agents.items()}
    declared = {
        s.name: sorted(topic_of(r, settings) for r in s.consumes)
        for s in TOPOLOGY
        if s.runs_as == "faust agent"
    }
    assert built == declared


def test_the_samples_consumer_and_the_tailers_read_what_is_declared(tmp_path: Path) -> None:
    settings, detect = _app(tmp_path)
    stages = {s.name: s for s in TOPOLOGY}
    samples = stages["samples"]
    assert [topic_of(r, settings) for r in samples.consumes] == [detect.samples_stage.topic]
    assert topic_of("app:cluster-summaries", settings) == detect.samples_stage.summaries_topic
    tailed = {detect.logs.inventory.topic, detect.logs.actions.topic}
    assert tailed == {topic_of(r, settings) for r in stages["lifecycle"].consumes}


def test_design_doc_draws_the_declared_topology() -> None:
    text = (ROOT / "docs" / "DESIGN.md").read_text()
    assert BEGIN in text and END in text, "docs/DESIGN.md lost its topology markers"
    drawn = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert drawn == render_mermaid(), "regenerate it: python -m streams.topology"


def test_every_table_partition_opens_rocksdb_with_bounded_memtables_and_cache(tmp_path: Path) -> None:
    """Faust's own defaults (3 x 64 MB memtables, a 2 GB cache per partition) let a worker grow for half an hour."""
    settings, detect = _app(tmp_path)
    d = settings.detect
    for table in (detect.repeat_table, detect.cluster_table, detect.held_table):
        store = table._new_store_by_url(state_store.URL)
        opts = store.rocksdb_options
        assert (opts.write_buffer_size, opts.max_write_buffer_number, opts.block_cache_size) == (
            d.state_write_buffer_mb << 20,
            2,
            d.state_block_cache_mb << 20,
        )
