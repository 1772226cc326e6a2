"""Write-back cache in front of a table: writes every N updates, at once when asked, reads through."""

from __future__ import annotations

from streams.cache import CheckpointCache


class CountingTable(dict):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def __setitem__(self, key: str, value: object) -> None:
        self.writes += 1
        super().__setitem__(key, value)


def test_writes_every_n_and_on_request() -> None:
    table = CountingTable()
    cache = CheckpointCache(table, every=3)
    for n in range(7):
        cache["h1"] = n
    assert table.writes == 2 and table["h1"] == 5 and cache["h1"] == 6
    cache.write_through("h1")
    assert table["h1"] == 6


def test_reads_through_and_drop_forgets_unwritten_values() -> None:
    table = CountingTable()
    table["h2"] = "old"
    cache = CheckpointCache(table, every=10)
    assert cache.get("h2") == "old" and cache.get("nope", "d") == "d"
    cache["h2"] = "new"
    cache.drop()
    assert cache.get("h2") == "old"  # after a rebalance the table is the truth


def test_uncached_keys_are_written_at_once() -> None:
    table = CountingTable()
    cache = CheckpointCache(table, every=10, cached=lambda key: key.endswith("|meta"))
    cache["c|meta"] = 1
    cache["c|0|h1"] = 2
    assert table == {"c|0|h1": 2}
    del cache["c|0|h1"]
    assert "c|0|h1" not in table
