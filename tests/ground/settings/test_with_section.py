"""Settings.with_section validates the changed section again, which model_copy alone does not."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ground.settings import Settings


def test_a_changed_prefix_renames_every_topic() -> None:
    base = Settings.load()
    run = base.with_section("topics", prefix="demo-1.")
    assert run.topics.errors.name == "demo-1." + base.topics.errors.name
    assert base.model_copy(
        update={"topics": base.topics.model_copy(update={"prefix": "x."})}
    ).topics.errors.name == (
        base.topics.errors.name  # what a bare model_copy gives: the prefix ignored
    )
    assert run.detect == base.detect  # the other sections are untouched


def test_a_bad_value_is_refused() -> None:
    with pytest.raises(ValidationError):
        Settings.load().with_section("detect", no_such_key=1)
