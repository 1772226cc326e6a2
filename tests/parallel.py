"""How the suite runs on pytest-xdist workers (`make test`: ``pytest -n N --dist loadgroup``).

A test is parallel-safe by default: its broker (each worker has its own session ``kafka``), topics,
ports (``free_ports``) and files (``tmp_path``) are its own. The few that share a fixed resource or
time their faults against a running producer are marked ``serial`` and run on one worker, one after
another. A module whose tests share a costly module-scoped fixture (a Spark session, a broker of its
own) is marked ``same_worker``: its tests go to one worker, so the fixture is built once, not once per
worker. Kept apart from conftest.py so that tests/test_parallel.py can load it alone.
"""

from __future__ import annotations

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    require_loadgroup(config)
    # xdist workers start with COLUMNS=80 and LINES=24 set; a rich Console made at import (a CLI
    # module's) would keep that size for good and wrap the lines tests look for. Tests that need a
    # width pass COLUMNS to the command they run.
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)


SERIAL_GROUP = "serial"
SAME_WORKER_GROUP = "same-worker:"  # + the module's path: one group per module marked same_worker


def require_loadgroup(config: pytest.Config) -> None:
    """Workers must honour the ``serial`` mark: any other distribution (a bare ``-n`` means ``load``) ignores it."""
    dist = getattr(config.option, "dist", "no")
    if dist not in ("no", "loadgroup"):
        raise pytest.UsageError(f"tests marked serial need --dist loadgroup with -n (got --dist {dist})")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups into the node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``serial`` join one xdist group, those of a module marked ``same_worker`` one group
    of their module's; a hand-made ``xdist_group`` is refused (it would run beside the serial tests, not
    after them)."""
    for item in items:
        for mark in item.iter_markers("xdist_group"):
            name = mark.args[0] if mark.args else mark.kwargs.get("name")
            if name != SERIAL_GROUP and not str(name).startswith(SAME_WORKER_GROUP):
                raise pytest.UsageError(f"{item.nodeid}: mark it serial instead of xdist_group")
        if item.get_closest_marker("serial"):
            item.add_marker(pytest.mark.xdist_group(SERIAL_GROUP))
        elif item.get_closest_marker("same_worker"):  # its module's fixture is built once, on one worker
            item.add_marker(pytest.mark.xdist_group(SAME_WORKER_GROUP + item.nodeid.split("::")[0]))
    items.sort(key=start_rank)


def start_rank(item: pytest.Item) -> int:
    """Long tests first (a stable sort), so no worker starts a long one when the others are done.

    The serial tests go first: they are one unit of work for one worker while the others share the rest.
    """
    for rank, mark in enumerate(("serial", "faults", "slow", "integration")):
        if item.get_closest_marker(mark):
            return rank
    return 4
