"""The one way to start a fleetpulse part as a child process and hand it its settings.

A child gets the parent's whole settings object as ``FLEETPULSE_<SECTION>`` JSON variables
(secrets included: the environment is the child's, not a log), the same names docker-compose uses,
so every part of a run sees exactly the settings its parent resolved, whatever file or
variables they came from.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, SecretStr

from ground.parent_death import PARENT_ENV
from ground.settings import Settings

ENV_PREFIX = "FLEETPULSE_"


def fleetpulse_argv(*args: str) -> list[str]:
    """argv that runs the ``fleetpulse`` command of this very interpreter."""
    return [sys.executable, "-m", "fleetpulse", *args]


def _reveal(model: BaseModel, dumped: dict[str, Any]) -> dict[str, Any]:
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, SecretStr):
            dumped[name] = value.get_secret_value()
        elif isinstance(value, BaseModel) and isinstance(dumped.get(name), dict):
            _reveal(value, dumped[name])
    return dumped


def settings_env(settings: Settings) -> dict[str, str]:
    """Every settings section as one ``FLEETPULSE_<SECTION>`` JSON variable; a child's
    ``Settings.load()`` rebuilds an equal object from them."""
    out: dict[str, str] = {}
    for name in type(settings).model_fields:
        section = getattr(settings, name)
        dumped = _reveal(section, section.model_dump(mode="json"))
        if name == "kafka":
            dumped["bootstrap_servers"] = settings.bootstrap_servers
        out[f"{ENV_PREFIX}{name.upper()}"] = json.dumps(dumped)
    return out


def child_env(settings: Settings, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent's environment (PATH, JAVA_HOME …) without its fleetpulse variables, plus ``settings``."""
    inherited = {
        k: v for k, v in os.environ.items() if not k.startswith(ENV_PREFIX) and k != "KAFKA_BOOTSTRAP_SERVERS"
    }
    return {**inherited, **settings_env(settings), **(extra or {})}


def launch(
    argv: Sequence[str], env: Mapping[str, str], log_path: Path | None = None, cwd: Path | None = None
) -> tuple[subprocess.Popen[bytes], IO[bytes] | None]:
    """Start a child in its own session (Ctrl-C reaches the parent first), output appended to ``log_path``.

    The child gets SIGTERM if this process dies before stopping it (``ground.parent_death``), so an
    interrupt at any point between the start and the caller's own clean-up leaves no orphan.
    Returns the process and the open log, which the caller closes once the child has exited.
    """
    log = log_path.open("ab") if log_path is not None else None
    proc = subprocess.Popen(
        list(argv),
        stdout=log if log is not None else subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**env, PARENT_ENV: str(os.getpid())},
        cwd=cwd,
        start_new_session=True,
    )
    return proc, log
