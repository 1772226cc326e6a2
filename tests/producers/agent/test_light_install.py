"""The agent's own distribution (packaging/agent) truly leaves out the analytics stack and Faust.

The agent runs a round with those libraries made unimportable, and every library it imports is one the
light distribution declares (or one of theirs), so ``pip install ./packaging/agent`` is enough.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[3]
LIGHT = tomllib.loads((ROOT / "packaging" / "agent" / "pyproject.toml").read_text())["project"]
HEAVY = [
    "polars",
    "pyarrow",
    "deltalake",
    "pandas",
    "scipy",
    "great_expectations",
    "faust",
    "numpy",
    "matplotlib",
    "rocksdict",
    "streams",
    "analytics",
    "fleetpulse",
]
RUN_AGENT = """
import importlib.abc, json, sys
heavy = set(json.loads(sys.argv[1]))
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in heavy:
            raise ImportError(f"{name} is not in the light agent install")
sys.meta_path.insert(0, Refuse())
sys.argv = ["fleetpulse-agent", *sys.argv[2:]]
from producers.agent.main import main
try:
    main()
finally:
    third = {m.split(".")[0] for m in sys.modules} - set(sys.stdlib_module_names) - {"producers", "ground", "schemas"}
    print("IMPORTED " + json.dumps(sorted(m for m in third if not m.startswith("_"))), file=sys.stderr)
"""


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(requirements: list[str]) -> set[str]:
    """The distributions these requirements bring in, through their own requirements (no extras)."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = norm(req.name)
        if name in seen:
            continue
        seen.add(name)
        todo += [Requirement(r) for r in metadata.requires(req.name) or []]
    return seen


def test_the_light_distribution_declares_none_of_the_heavy_stack() -> None:
    declared = {norm(Requirement(r).name) for r in LIGHT["dependencies"]}
    assert not declared & {
        "polars",
        "pyarrow",
        "deltalake",
        "pandas",
        "scipy",
        "great-expectations",
        "faust-streaming",
        "numpy",
        "matplotlib",
    }
    assert not closure(LIGHT["dependencies"]) & {"polars", "pyarrow", "pandas", "numpy", "faust-streaming"}
    assert LIGHT["scripts"] == {"fleetpulse-agent": "producers.agent.main:main"}


def test_the_agent_runs_without_the_heavy_stack_on_what_it_declares(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            RUN_AGENT,
            json.dumps(HEAVY),
            "--once",
            "--print",
            "--fixture-host",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert {"HostInventoried", "HostSampled"} <= {e["event_type"] for e in events}
    imported = json.loads(done.stderr.rpartition("IMPORTED ")[2])
    by_module = metadata.packages_distributions()
    needed = {norm(d) for m in imported for d in by_module.get(m, [])}
    missing = needed - closure(LIGHT["dependencies"])
    assert not missing, (
        f"the agent imports {sorted(missing)}, which packaging/agent/pyproject.toml does not bring"
    )
