"""The detector's operator console on its web port: ``GET /console`` (also ``/console/domains``),
``GET /console/hosts/{host_id}`` and ``POST /console/login``, behind the ops token (``streams.console.access``).

A thin shell: it gathers the worker's JSON views (``streams.web``) and hands them to ``streams.console.pages``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import quote

import faust
from aiohttp import web as aioweb
from faust.web import Request, Response, View
from pydantic import SecretStr

from streams.console import access, pages
from streams.console.history import host_history
from streams.fleet_reads import FleetReads
from streams.operator_events import bearer_ok
from streams.trains.web import campaigns, host_versions
from streams.web import budgets, describe_host, open_work

log = logging.getLogger(__name__)
BASE = "/console"


@dataclass(frozen=True)
class ConsoleInput:
    """What the console reads: the worker's read model, the ops token (None: the console is off) and
    the clock its pages are stamped with."""

    reads: FleetReads
    token: SecretStr | None
    clock: Callable[[], float]


def overview_html(console: ConsoleInput) -> str:
    reads = console.reads
    domains = budgets(reads)
    return pages.overview(
        domains=domains,
        out_hosts={d["domain"]: sorted(reads.fleet.out_hosts(d["domain"])) for d in domains},
        work=open_work(reads),
        trains=campaigns(reads),
        findings=reads.findings_log.view(reads.fleet.findings),
        base=BASE,
        now_ms=int(console.clock() * 1000),
    )


def host_html(console: ConsoleInput, host_id: str) -> str | None:
    """The host's page, None for a host the worker knows nothing of."""
    reads = console.reads
    fleet = reads.fleet
    state = fleet.hosts.get(host_id)
    info = reads.inventory.hosts.get(host_id)
    findings = reads.findings_log.view(fleet.findings, host_id=host_id)
    if state is None and info is None and not findings:
        return None
    host = describe_host(state) if state else None
    versions = host_versions(reads, host_id)
    outages = [asdict(o) for o in fleet.outages.by_host.get(host_id, {}).values()]
    history = host_history(host, findings, outages, state.repairs if state else [], versions)
    return pages.host_page(
        host_id,
        host=host,
        inventory=asdict(info) if info else None,
        versions=versions,
        findings=findings,
        history=history,
        base=BASE,
        now_ms=int(console.clock() * 1000),
    )


class ConsoleView(View):
    """Every console page: the token first, then the page; HTML with the console's headers."""

    console: ConsoleInput

    def answer(self, html: str, status: int = 200, **extra: str) -> Response:
        return self.html(html, status=status, headers={**access.HEADERS, **extra})

    def message(self, title: str, text: str, status: int, *, form: bool = False) -> Response:
        now = int(self.console.clock() * 1000)
        return self.answer(pages.message_page(title, text, base=BASE, now_ms=now, form=form), status)

    def refused(self, request: Request) -> Response | None:
        token = self.console.token
        if token is None:
            return self.message("Console off", "no detect.ops_token is set: the console is off", 403)
        if access.allowed(token, request.headers.get("Authorization"), request.cookies):  # type: ignore[attr-defined]
            return None
        return self.message("Sign in", "the console needs the ops token", 401, form=True)


class Overview(ConsoleView):
    async def get(self, request: Request, **kwargs: Any) -> Response:
        return self.refused(request) or self.answer(overview_html(self.console))


class HostSearch(ConsoleView):
    async def get(self, request: Request, **kwargs: Any) -> Response:
        if (refusal := self.refused(request)) is not None:
            return refusal
        host = request.query.get("host", "").strip()  # type: ignore[attr-defined]
        if not host:
            return self.message("No host", "give a host id", 400)
        return self.answer("", 303, Location=f"{BASE}/hosts/{quote(host, safe='')}")


class HostPage(ConsoleView):
    async def get(self, request: Request, host_id: str, **kwargs: Any) -> Response:
        if (refusal := self.refused(request)) is not None:
            return refusal
        html = host_html(self.console, host_id)
        if html is None:
            return self.message(
                "Unknown host", f"no host {host_id} in the inventory, the actions or the findings", 404
            )
        return self.answer(html)


class Login(ConsoleView):
    async def post(self, request: Request, **kwargs: Any) -> Response:
        token = self.console.token
        if token is None:
            return self.message("Console off", "no detect.ops_token is set: the console is off", 403)
        declared = request.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > access.MAX_LOGIN_BYTES:
            return self.message("Sign in", "that is not a sign-in form", 413, form=True)
        try:
            body = await request.read()  # type: ignore[attr-defined]  # aiohttp's, capped by client_max_size
        except aioweb.HTTPRequestEntityTooLarge:
            return self.message("Sign in", "that is not a sign-in form", 413, form=True)
        given = access.login_token(body)
        if given is None or not bearer_ok(f"Bearer {given}", token.get_secret_value()):
            log.info("console: sign-in refused from %s", request.remote)  # type: ignore[attr-defined]
            return self.message("Sign in", "wrong token", 401, form=True)
        cookie = access.cookie_header(token.get_secret_value(), secure=request.secure, path=BASE)  # type: ignore[attr-defined]
        return self.answer("", 303, Location=BASE, **{"Set-Cookie": cookie})


def register_console(app: faust.App, console: ConsoleInput) -> None:
    """Serve the console on the worker's web port."""
    for path, view in [
        (BASE, Overview),
        (f"{BASE}/domains", Overview),
        (f"{BASE}/hosts", HostSearch),
        (f"{BASE}/hosts/{{host_id}}", HostPage),
        (f"{BASE}/login", Login),
    ]:
        app.page(path)(type(f"Console{view.__name__}", (view,), {"console": console}))
