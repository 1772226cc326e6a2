"""The console's pages escape every value and its gate takes only the ops token (no browser, no Kafka)."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from pydantic import SecretStr

from streams.console import access, pages
from streams.console.history import HistoryEvent, host_history

EVIL = '<script>alert("x")</script>'
FINDING = {
    "finding_id": "f1",
    "detector": "repeat_offender",
    "rule": EVIL,
    "scope": "gpu",
    "scope_key": "h1/0",
    "host_id": EVIL,
    "cluster": "c1",
    "ts": 1_798_761_600_000,
    "error_class": "xid",
    "count": 3,
    "window_start": 0,
    "window_end": 1,
    "recommended_action": "rma",
    "severity": "critical",
    "score": None,
    "evidence": {"xids": EVIL, EVIL: "1"},
    "planned": True,
}
OP = {
    "op_id": "op1",
    "operation": "rma",
    "phase": "in_repair",
    "finding_id": "f1",
    "rule": EVIL,
    "suspected_ts": 1_798_761_600_000,
    "started_ts": None,
}
HOST = {
    "host_id": EVIL,
    "cluster": "c1",
    "maintenance_domain": EVIL,
    "status": "in_repair",
    "current": OP,
    "waiting": [],
    "completed_operations": 0,
    "last_ts": 0,
}
DOMAIN = {
    "domain": EVIL,
    "size": 8,
    "out": 2,
    "capacity": 1,
    "failing": 1,
    "failure_budget": 2,
    "halted": True,
    "queued": 0,
    "out_elsewhere": 0,
}
TRAIN = {
    "campaign_id": "trn-1",
    "change": EVIL,
    "status": "halted",
    "scope": [EVIL],
    "upgraded": 0,
    "visits": {EVIL: 1},
    "faults_seen": 1,
    "halted_reason": EVIL,
    "started_ts": 0,
}


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.hrefs += [v or "" for k, v in attrs if k in ("href", "action")]


def parsed(html: str) -> Tags:
    t = Tags()
    t.feed(html)
    return t


def test_the_overview_escapes_every_value() -> None:
    html = pages.overview(
        domains=[DOMAIN],
        out_hosts={EVIL: [EVIL]},
        work=[HOST],
        trains=[TRAIN],
        findings=[FINDING],
        base="/console",
        now_ms=0,
    )
    tags = parsed(html)
    assert "script" not in tags.tags and EVIL not in html
    assert "&lt;script&gt;" in html
    assert "/console/hosts/%3Cscript%3Ealert%28%22x%22%29%3C%2Fscript%3E" in tags.hrefs  # a link, quoted
    assert 'class="bad">halted' in html and 'class="bad">-1' in html  # over its capacity buffer: said so


def test_the_host_page_escapes_every_value() -> None:
    history = host_history(
        HOST,
        [FINDING],
        [{"source": "operator", "cause": EVIL, "start_ts": 5, "end_ts": 9}],
        [(7, EVIL)],
        {"driver": {"version": EVIL, "reported_ts": 3}},
    )
    html = pages.host_page(
        EVIL,
        host=HOST,
        inventory={"rack": EVIL, "install_ts": 0},
        versions={"driver": {"version": EVIL, "reported_ts": 3}},
        findings=[FINDING],
        history=history,
        base="/console",
        now_ms=0,
    )
    assert "script" not in parsed(html).tags and EVIL not in html


def test_a_host_history_is_newest_first_and_pairs_outages() -> None:
    outages: list[dict[str, Any]] = [{"source": "incident", "cause": "psu", "start_ts": 5, "end_ts": 9}]
    events = host_history(HOST, [FINDING | {"ts": 2}], outages, [(10, "rma")], {})
    assert [(e.ts, e.kind) for e in events] == [
        (1_798_761_600_000, "suspected"),
        (10, "returned to service"),
        (9, "back in service"),
        (5, "out of service"),
        (2, "finding"),
    ]
    assert events[-1] == HistoryEvent(2, "finding", f"repeat_offender/{EVIL} on h1/0: xid x3")


def test_only_the_ops_token_opens_the_console() -> None:
    token = SecretStr("s3cret-token")
    good = access.session_value("s3cret-token")
    assert access.allowed(token, "Bearer s3cret-token", {})
    assert access.allowed(token, None, {access.COOKIE: good})
    assert "s3cret-token" not in good  # the cookie holds a digest, not the token
    assert not access.allowed(token, "Bearer wrong", {access.COOKIE: access.session_value("wrong")})
    assert not access.allowed(token, None, {access.COOKIE: "é"})
    assert not access.allowed(None, "Bearer s3cret-token", {access.COOKIE: good})  # no token set: off


def test_a_sign_in_form_is_one_token_field() -> None:
    assert access.login_token(b"token=abc%2Fd") == "abc/d"
    assert access.login_token(b"token=a&token=b") is None
    assert access.login_token(b"\xff\xfe") is None
    assert access.login_token(b"token=" + b"a" * access.MAX_LOGIN_BYTES) is None
    assert "HttpOnly" in access.cookie_header("t", secure=False, path="/console")
    assert access.cookie_header("t", secure=True, path="/console").endswith("; Secure")
