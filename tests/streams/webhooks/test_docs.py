"""The verification snippets in docs/WEBHOOKS.md run and agree with ``streams.webhooks.sign``."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from streams.webhooks import sign, verify_signature

DOC = Path(__file__).resolve().parents[3] / "docs" / "WEBHOOKS.md"
SECRET = b"doc-test-secret"
BODY = b'{"version":"4","alerts":[{"status":"firing"}]}'


def block(lang: str, containing: str) -> str:
    blocks = re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), re.S)
    [code] = [b for b in blocks if containing in b]
    return code


def cases() -> list[tuple[str, bytes, str, bool]]:
    now = time.time()
    return [
        ("valid", BODY, sign(SECRET, BODY, now), True),
        ("tampered", BODY + b" ", sign(SECRET, BODY, now), False),
        ("stale", BODY, sign(SECRET, BODY, now - 3600), False),
        ("wrong-secret", BODY, sign(b"other", BODY, now), False),
    ]


def test_python_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(block("python", "verify_signature"), str(DOC), "exec"), {})
    assert "rejected: signature does not match the body" in capsys.readouterr().out


@pytest.mark.skipif(shutil.which("node") is None, reason="no node")
@pytest.mark.parametrize("case", range(4))
def test_node_example_agrees(case: int, tmp_path: Path) -> None:
    name, body, header, ok = cases()[case]
    (tmp_path / "body").write_bytes(body)
    script = block("js", "verifyFleetpulse") + (
        "\nconst fs = require('fs');"
        f"\nverifyFleetpulse({SECRET.decode()!r}, fs.readFileSync({str(tmp_path / 'body')!r}), {header!r},"
        " Math.floor(Date.now() / 1000));"
    )
    result = subprocess.run(["node", "-e", script], capture_output=True, timeout=20)
    assert (result.returncode == 0) is ok, (name, result.stderr.decode()[-300:])


def test_shell_example_produces_a_valid_header() -> None:
    if shutil.which("openssl") is None:
        pytest.skip("no openssl")
    code = block("sh", "openssl dgst")
    out = subprocess.run(["bash", "-c", code], capture_output=True, text=True, timeout=20, check=True).stdout
    header = out.strip().removeprefix("X-Fleetpulse-Signature: ")
    secret = re.search(r"SECRET='([^']*)'", code).group(1).encode()  # type: ignore[union-attr]
    body = re.search(r"BODY='([^']*)'", code).group(1).encode()  # type: ignore[union-attr]
    verify_signature(secret, body, header, now=time.time())


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain")
def test_go_example_agrees(tmp_path: Path) -> None:
    secret = SECRET.decode()
    now = int(time.time())
    calls = "\n".join(
        f'\tif err := VerifyFleetpulse([]byte("{secret}"), []byte(`{body.decode()}`), "{header}", {now}, 300);'
        f' (err == nil) != {str(ok).lower()} {{ panic("{name}") }}'
        for name, body, header, ok in cases()
    )
    source = "package main\n\n" + block("go", "VerifyFleetpulse") + "\nfunc main() {\n" + calls + "\n}\n"
    (tmp_path / "main.go").write_text(source)
    result = subprocess.run(
        ["go", "run", "main.go"], cwd=tmp_path, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stderr[-2000:]
