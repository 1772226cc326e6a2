"""Who may read the console: the ops token (``detect.ops_token``), as a bearer header or as a session cookie.

A browser signs in once with the token through a form; the cookie then holds a keyed digest of the
token, never the token itself, so changing the token signs every browser out. Without a configured
token the console is off, as ``POST /ops/events`` is.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from urllib.parse import parse_qs

from pydantic import SecretStr

from streams.operator_events import bearer_ok

COOKIE = "fleetpulse_console"
MAX_LOGIN_BYTES = 4096  # a sign-in form holds one token
HEADERS = {  # every console answer: no caching, no framing, nothing loaded from elsewhere, no script
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def session_value(token: str) -> str:
    """The cookie's value for a token: a digest keyed by it (the token cannot be read back from it)."""
    return hmac.new(
        token.encode("utf-8", "surrogateescape"), b"fleetpulse console session", hashlib.sha256
    ).hexdigest()


def allowed(token: SecretStr | None, authorization: str | None, cookies: Mapping[str, str]) -> bool:
    """True for the ops token as a bearer header or the session cookie made from it."""
    if token is None:
        return False
    secret = token.get_secret_value()
    if bearer_ok(authorization, secret):
        return True
    given = cookies.get(COOKIE, "")
    return given.isascii() and hmac.compare_digest(given.encode(), session_value(secret).encode())


def login_token(body: bytes) -> str | None:
    """The token a sign-in form posted (``token=…``), None for a body that is not such a form."""
    if len(body) > MAX_LOGIN_BYTES:
        return None
    try:
        values = parse_qs(body.decode("utf-8"), max_num_fields=4, strict_parsing=True)
    except (UnicodeDecodeError, ValueError):
        return None
    given = values.get("token", [])
    return given[0] if len(given) == 1 else None


def cookie_header(token: str, *, secure: bool, path: str) -> str:
    """``Set-Cookie`` for a signed-in browser: HttpOnly, same site only, for the console's paths."""
    flags = f"{COOKIE}={session_value(token)}; Path={path}; HttpOnly; SameSite=Strict"
    return flags + ("; Secure" if secure else "")
