"""How a sub-command finds the settings object the root command built (Typer's ``ctx.obj``)."""

from __future__ import annotations

from typing import Any

import typer

from ground.settings import Settings


def settings_of(ctx: typer.Context) -> Settings:
    """The settings built by the root callback (sub-commands call this)."""
    obj: Any = ctx.find_root().obj
    if not isinstance(obj, Settings):  # invoked outside the root app, e.g. in a test
        obj = Settings.load()
        ctx.find_root().obj = obj
    return obj
