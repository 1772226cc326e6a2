"""HTML building blocks for the operator console: every value is escaped unless it is ``Markup`` built here.

No template engine and no build step: a page is a few tables. ``esc`` is the one way a value reaches
the page, so a host id, a rule name or a finding's evidence can never inject markup.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote


class Markup(str):
    """HTML that this module built from escaped parts: inserted as is."""

    __slots__ = ()


def esc(value: Any) -> Markup:
    """A value as HTML text: ``Markup`` unchanged, ``None`` as an en dash, anything else escaped."""
    if isinstance(value, Markup):
        return value
    if value is None:
        return Markup("&ndash;")
    if isinstance(value, bool):
        return Markup("yes" if value else "no")
    return Markup(html.escape(str(value), quote=True))


def join(parts: Iterable[Any], sep: str = "") -> Markup:
    return Markup(sep.join(esc(p) for p in parts))


def tag(name: str, content: Any = "", **attrs: Any) -> Markup:
    """``<name attr="…">content</name>``; attribute values are escaped, ``class_`` stands for ``class``."""
    rendered = "".join(
        f' {k.rstrip("_").replace("_", "-")}="{esc(v)}"' for k, v in attrs.items() if v is not None
    )
    return Markup(f"<{name}{rendered}>{esc(content)}</{name}>")


def when(ts_ms: int | None) -> Markup:
    """Epoch milliseconds as a UTC time a person reads (the raw value kept in the title)."""
    if ts_ms is None:
        return esc(None)
    try:
        text = datetime.fromtimestamp(ts_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return esc(ts_ms)
    return tag("time", text, datetime=text.replace(" ", "T"), title=ts_ms)


def host_link(host_id: str, base: str) -> Markup:
    return tag("a", host_id, href=f"{base}/hosts/{quote(host_id, safe='')}", class_="host")


def pairs(mapping: Mapping[str, Any]) -> Markup:
    """``key=value`` items of a small mapping (a finding's evidence), one per line."""
    return join((tag("span", f"{k}={v}", class_="kv") for k, v in sorted(mapping.items())), "<br>")


def table(
    table_id: str, headers: Sequence[str], rows: Iterable[Sequence[Any]], empty: str = "none"
) -> Markup:
    """A table with a header row; ``empty`` is said in place of a table without rows."""
    body = [tag("tr", join(tag("td", cell) for cell in row)) for row in rows]
    if not body:
        return tag("p", empty, id=table_id, class_="empty")
    head = tag("tr", join(tag("th", h, scope="col") for h in headers))
    return tag("table", Markup(tag("thead", head) + tag("tbody", join(body))), id=table_id)


STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d1d1f}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.25em .5em;
text-align:left;vertical-align:top}th{background:#f3f3f3}.empty{color:#777}.bad{color:#b00020;font-weight:600}
nav a{margin-right:1em}.kv{font-family:monospace;font-size:.9em}time{white-space:nowrap}
"""


def page(title: str, body: Any, *, base: str, generated_ms: int) -> str:
    """A whole document: the title, a navigation bar, the body, when it was generated."""
    nav = tag("nav", join([tag("a", "Overview", href=base), tag("a", "Domains", href=f"{base}/domains")]))
    footer = tag("footer", Markup(f"generated {when(generated_ms)} by the detector"))
    return "<!doctype html>\n" + tag(
        "html",
        Markup(
            tag(
                "head",
                Markup(
                    '<meta charset="utf-8">'
                    + tag("title", f"fleetpulse · {title}")
                    + tag("style", Markup(STYLE))
                ),
            )
            + tag("body", Markup(nav + tag("h1", title) + esc(body) + footer))
        ),
        lang="en",
    )
