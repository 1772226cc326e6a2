"""The mapping file: defaults, the shipped example, prefix matching, and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from producers.importer import EXAMPLE_MAPPING, HistoryMapping, MappingFileError, load_mapping
from producers.importer.mapping import CauseLookup


def test_the_shipped_example_loads_and_selects_event_shaped_rows() -> None:
    mapping = load_mapping(EXAMPLE_MAPPING)
    assert mapping.columns.event_shaped
    assert mapping.columns.host == "node_id"
    assert mapping.cause_of("GPU/DBE/over threshold") == "hbm3"


def test_longest_prefix_wins_case_insensitively_at_slash_boundaries() -> None:
    m = HistoryMapping(causes={"GPU": "faulty_gpu", "GPU/DBE": "hbm3", "Power": "power"})
    assert m.cause_of("gpu/dbe/over threshold") == "hbm3"
    assert m.cause_of("GPU / lost") == "faulty_gpu"
    assert m.cause_of("GPUX/lost") == "unclassified"  # not a prefix at a boundary
    assert m.cause_of("Fan/failed") == "unclassified"
    lookup = CauseLookup(m)
    assert lookup("GPU/DBE/x") == ("hbm3", None)
    assert lookup("Power/PSU") == ("power", None)


def test_defaults_need_no_file() -> None:
    assert load_mapping(None) == HistoryMapping()
    assert not HistoryMapping().columns.event_shaped


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('[causes]\n"GPU" = "gremlins"\n', "causes.GPU"),
        ('[columns]\nhots = "node"\n', "columns.hots"),
        ("[time]\nrelative_unit = 'weeks'\n", "time.relative_unit"),
        ("[causes\n", "not valid TOML"),
    ],
)
def test_a_bad_mapping_names_what_to_fix(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(text)
    with pytest.raises(MappingFileError, match=where.replace(".", r"\.")):
        load_mapping(path)


def test_a_missing_mapping_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(MappingFileError, match="cannot read"):
        load_mapping(tmp_path / "nope.toml")
