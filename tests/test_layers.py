"""The layers point one way (schemas → ground → producers | streams | analytics | webhooks → fleetpulse).

import-linter checks the contracts in pyproject.toml, including imports inside functions. Only
command modules (``cli.py``, the demo command) import inside a function, and only to load
what a command runs when it runs, so ``fleetpulse --help`` and every child process start fast.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("schemas", "ground", "producers", "streams", "analytics", "webhooks", "fleetpulse")
COMMAND_MODULES = {"cli.py", "topics_cli.py", "archive_cli.py", "demo.py"}


def test_import_contracts_are_kept() -> None:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    done = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def _function_imports(path: Path, root: Path = ROOT) -> list[str]:
    found: list[str] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                walk(child, True)
            elif isinstance(child, ast.Import | ast.ImportFrom) and in_function:
                module = child.module if isinstance(child, ast.ImportFrom) else child.names[0].name
                if (module or "").split(".")[0] in PACKAGES:
                    found.append(f"{path.relative_to(root)}:{child.lineno} {module}")
            else:
                walk(child, in_function)

    walk(ast.parse(path.read_text()), False)
    return found


def test_no_project_import_inside_a_function_outside_command_modules() -> None:
    offenders = [
        hit
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if path.name not in COMMAND_MODULES
        for hit in _function_imports(path)
    ]
    assert offenders == []


def test_the_scan_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import json\n\n\ndef f():\n    import os\n    from streams import policy\n    return policy\n"
    )
    assert _function_imports(module, tmp_path) == ["m.py:6 streams"]
