"""The Python block of producers/README.md runs as written."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "producers" / "README.md"


def test_readme_python_block_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "producers/README.md lost its Python example"
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], str(README), "exec"), {})
    assert (tmp_path / "truth" / "manifest.json").is_file()
    assert any((tmp_path / "lake" / "host_sampled").iterdir())
