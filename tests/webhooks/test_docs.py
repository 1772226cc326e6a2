"""The verification snippets in docs/WEBHOOKS.md run and agree with ``webhooks.verify_standard``."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from webhooks import verify_standard

DOC = Path(__file__).resolve().parents[2] / "docs" / "WEBHOOKS.md"


def block(lang: str, containing: str) -> str:
    blocks = re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), re.S)
    [code] = [b for b in blocks if containing in b]
    return code


def test_python_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(block("python", "verify_standard"), str(DOC), "exec"), {})
    assert capsys.readouterr().out.splitlines() == ["alert-1", "rejected: signature does not match the body"]


def test_shell_example_produces_valid_headers() -> None:
    if shutil.which("openssl") is None:
        pytest.skip("no openssl")
    code = block("sh", "openssl dgst")
    out = subprocess.run(["bash", "-c", code], capture_output=True, text=True, timeout=20, check=True).stdout
    headers = dict(line.split(": ", 1) for line in out.strip().splitlines())
    secret = re.search(r"SECRET='([^']*)'", code).group(1).encode()  # type: ignore[union-attr]
    body = re.search(r"BODY='([^']*)'", code).group(1).encode()  # type: ignore[union-attr]
    assert verify_standard(secret, body, headers, now=time.time()) == "test-1"
