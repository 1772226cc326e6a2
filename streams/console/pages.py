"""The console's pages from the detector's JSON views (the same dicts its API serves). Pure: data in, HTML out.

The overview: domains with their budgets and hosts out, open operations, change campaigns (trains),
recent findings with their evidence. A host page: what the host is, its open work, its history.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from streams.console.history import HistoryEvent
from streams.console.markup import Markup, esc, host_link, join, page, pairs, table, tag, when

RECENT_FINDINGS = 50  # the overview's newest findings; a host page shows all of its own

Rows = Sequence[Mapping[str, Any]]


def _left(n: int) -> Markup:
    return tag("span", n, class_="bad") if n < 0 else esc(n)


def domains_table(domains: Rows, out_hosts: Mapping[str, Sequence[str]], base: str) -> Markup:
    rows = [
        [
            d["domain"],
            d["size"],
            d["out"],
            d["capacity"],
            _left(d["capacity"] - d["out"]),
            d["failing"],
            d["failure_budget"],
            _left(d["failure_budget"] - d["failing"]),
            tag("span", "halted", class_="bad") if d["halted"] else "running",
            d["queued"],
            join((host_link(h, base) for h in out_hosts.get(d["domain"], ())), " "),
        ]
        for d in domains
    ]
    headers = [
        "domain",
        "hosts",
        "out",
        "capacity",
        "capacity left",
        "failing",
        "failure budget",
        "failure budget left",
        "train",
        "queued",
        "hosts out",
    ]
    return table("domains", headers, rows, "no maintenance domain known yet")


def _operation(op: Mapping[str, Any] | None) -> list[Any]:
    if op is None:
        return [None] * 5
    return [op["operation"], op["phase"], op["rule"], when(op["suspected_ts"]), when(op["started_ts"])]


def work_table(work: Rows, base: str) -> Markup:
    rows = [
        [
            host_link(h["host_id"], base),
            h["maintenance_domain"],
            h["status"],
            *_operation(h["current"] or (h["waiting"][0] if h["waiting"] else None)),
            len(h["waiting"]),
        ]
        for h in work
    ]
    headers = ["host", "domain", "status", "operation", "phase", "rule", "suspected", "started", "waiting"]
    return table("operations", headers, rows, "no open operation")


def trains_table(trains: Rows) -> Markup:
    rows = [
        [
            t["campaign_id"],
            t["change"],
            tag("span", t["status"], class_="bad") if t["status"] == "halted" else t["status"],
            ", ".join(t["scope"]),
            t["upgraded"],
            pairs(t["visits"]),
            t["faults_seen"],
            t["halted_reason"],
            when(t["started_ts"]),
        ]
        for t in trains
    ]
    headers = [
        "campaign",
        "change",
        "status",
        "scope",
        "upgraded",
        "visits",
        "faults",
        "halted because",
        "started",
    ]
    return table("trains", headers, rows, "no change campaign")


def findings_table(findings: Rows, base: str, table_id: str = "findings") -> Markup:
    rows = [
        [
            when(f["ts"]),
            host_link(f["host_id"], base),
            f["detector"],
            f["rule"],
            f["scope_key"],
            f["error_class"],
            f["count"],
            f["severity"],
            f["recommended_action"],
            f["planned"],
            pairs(f["evidence"]),
        ]
        for f in findings
    ]
    headers = [
        "time",
        "host",
        "detector",
        "rule",
        "scope",
        "error",
        "count",
        "severity",
        "action",
        "planned",
        "evidence",
    ]
    return table(table_id, headers, rows, "no finding")


def overview(
    *,
    domains: Rows,
    out_hosts: Mapping[str, Sequence[str]],
    work: Rows,
    trains: Rows,
    findings: Rows,
    base: str,
    now_ms: int,
) -> str:
    """The console's first page; ``findings`` oldest first (as ``/findings``): the newest are shown first."""
    recent = list(reversed(findings[-RECENT_FINDINGS:]))
    body = join(
        [
            tag("h2", "Maintenance domains", id="domains-title"),
            domains_table(domains, out_hosts, base),
            tag("h2", "Open operations"),
            work_table(work, base),
            tag("h2", "Change campaigns (trains)"),
            trains_table(trains),
            tag("h2", f"Recent findings ({len(recent)} newest of {len(findings)})"),
            findings_table(recent, base),
            host_search(base),
        ]
    )
    return page("Fleet overview", body, base=base, generated_ms=now_ms)


def host_search(base: str) -> Markup:
    field = Markup('<input name="host" required aria-label="host id">')
    return tag(
        "form",
        join([field, Markup('<button type="submit">Open host</button>')]),
        action=f"{base}/hosts",
        method="get",
    )


def host_page(
    host_id: str,
    *,
    host: Mapping[str, Any] | None,
    inventory: Mapping[str, Any] | None,
    versions: Mapping[str, Mapping[str, Any]],
    findings: Rows,
    history: Sequence[HistoryEvent],
    base: str,
    now_ms: int,
) -> str:
    """One host: its status and inventory, its open operations, its versions, its history, its findings."""
    ops = ([host["current"]] if host and host["current"] else []) + list(host["waiting"] if host else [])
    facts = {"status": host["status"] if host else "in_service", **(dict(inventory) if inventory else {})}
    body = join(
        [
            table(
                "host-facts",
                ["field", "value"],
                [[k, when(v) if k.endswith("_ts") else v] for k, v in facts.items()],
            ),
            tag("h2", "Open operations"),
            table(
                "host-operations",
                ["operation", "phase", "rule", "suspected", "started", "finding"],
                [[*_operation(op), op["finding_id"]] for op in ops],
                "no open operation",
            ),
            tag("h2", "Versions"),
            table(
                "versions",
                ["component", "version", "reported"],
                [[c, v["version"], when(v["reported_ts"])] for c, v in versions.items()],
                "no version reported",
            ),
            tag("h2", "History"),
            table(
                "history",
                ["time", "event", "detail"],
                [[when(e.ts), e.kind, e.detail] for e in history],
                "nothing recorded for this host",
            ),
            tag("h2", "Findings"),
            findings_table(list(reversed(findings)), base, "host-findings"),
        ]
    )
    return page(f"Host {host_id}", body, base=base, generated_ms=now_ms)


def message_page(title: str, text: str, *, base: str, now_ms: int, form: bool = False) -> str:
    """A refusal or a not-found, with the sign-in form when the token is what is missing."""
    login = (
        tag(
            "form",
            join(
                [
                    Markup(
                        '<label>ops token <input name="token" type="password" autocomplete="off" required></label>'
                    ),
                    Markup('<button type="submit">Sign in</button>'),
                ]
            ),
            action=f"{base}/login",
            method="post",
            id="login",
        )
        if form
        else Markup("")
    )
    return page(title, join([tag("p", text, id="message"), login]), base=base, generated_ms=now_ms)
