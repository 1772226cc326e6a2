"""The detector's token-guarded POST endpoints read a body only after the token checks out, and only so much.

One gate for ``POST /ops/events`` and ``POST /trains…``: the token is checked from the headers alone
(401) before a byte of the body is read, and the body is read up to a bound (413).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from pydantic import SecretStr

from streams.operator_events import bearer_ok

Refusal = tuple[int, dict[str, Any]]


def _declared_length(headers: Any) -> int | None:
    text = headers.get("Content-Length")
    return int(text) if text is not None and text.isascii() and text.isdigit() else None


async def authorized_body(
    token: SecretStr | None, headers: Any, read_body: Callable[[], Awaitable[bytes]], limit: int
) -> bytes | Refusal:
    """The body, or the refusal to answer with: a missing or wrong token, a body over ``limit`` bytes."""
    if not bearer_ok(headers.get("Authorization"), token.get_secret_value() if token else None):
        why = "missing or wrong bearer token" if token else "no detect.ops_token is set: the endpoint is off"
        return 401, {"error": why}
    declared = _declared_length(headers)
    if declared is not None and declared > limit:
        return 413, {"error": f"body larger than {limit} bytes"}
    try:
        body = await read_body()
    except web.HTTPRequestEntityTooLarge:
        return 413, {"error": f"body larger than {limit} bytes"}
    return body if len(body) <= limit else (413, {"error": f"body larger than {limit} bytes"})
