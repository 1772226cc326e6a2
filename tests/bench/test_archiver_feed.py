"""The archiver bench's producer: a re-stamped template is a valid record of its own hosts, with new ids."""

from __future__ import annotations

import pytest

from bench import archiver_feed
from ground.settings import Settings
from schemas import FLEET, Codec


@pytest.fixture
def template(monkeypatch: pytest.MonkeyPatch) -> list[archiver_feed.Encoded]:
    monkeypatch.setattr(archiver_feed, "SAMPLES_PER_HOST", 3)
    monkeypatch.setattr(archiver_feed, "TEMPLATES", 1)
    return archiver_feed.templates(Settings(), "live")[0]


def test_a_restamped_chunk_decodes_with_its_own_hosts_and_ids(template: list[archiver_feed.Encoded]) -> None:
    codec = Codec()
    chunk = archiver_feed.restamped(template, "live", 12, 4_800)
    records = [codec.decode(value).record for _, _, value in chunk]
    hosts = {r["host_id"] for r in records} - {FLEET}
    assert len(hosts) == archiver_feed.CHUNK and all(h.endswith("-004800") for h in hosts)
    assert all(r["event_id"].startswith("live000012-004800-") for r in records)
    assert [key for _, key, _ in chunk] == [r["host_id"].encode() for r in records]


def test_each_pass_over_the_fleet_has_new_event_ids(template: list[archiver_feed.Encoded]) -> None:
    codec = Codec()
    ids = [
        codec.decode(value).record["event_id"]
        for lap in (0, 1)
        for _, _, value in archiver_feed.restamped(template, "live", lap, 0)
    ]
    assert len(set(ids)) == len(ids) == 2 * len(template)
