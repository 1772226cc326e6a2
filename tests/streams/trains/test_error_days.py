"""Hardware errors per host-day reach the campaigns' safety test, and a campaign starts on a fold with no host."""

from __future__ import annotations

import pytest

from schemas import Codec, HostInventoried
from streams.core.classify import classify
from streams.core.fleet.lifecycle import FleetState, apply, apply_logged
from streams.core.inventory import Inventory
from streams.core.planning.planner import Planner
from streams.core.planning.ticks import TickSchedule
from streams.core.policy import Policy, load_policy
from streams.trains.commands import CampaignSpec, start_record
from streams.trains.error_days import ErrorDays
from streams.trains.safety import classifier
from tests.streams import factories as f

T0 = 1_798_761_600_000  # a UTC midnight
HOUR = 3_600_000


@pytest.fixture(scope="module")
def policy() -> Policy:
    return load_policy()


def inventory(hosts: dict[str, str]) -> Inventory:
    inv = Inventory()
    for host, domain in hosts.items():
        inv.apply(
            HostInventoried(
                event_id=f"inv-{host}",
                host_id=host,
                cluster="c0",
                ts=T0,
                payload={
                    "rack": "r",
                    "fabric": "infiniband",
                    "maintenance_domain": domain,
                    "sku": "H100",
                    "install_ts": 0,
                    "gpu_count": 8,
                    "nic_ports": 8,
                },
            ).to_record()
        )
    return inv


def campaign(state: FleetState, scope: list[str] | None = None) -> str:
    record = start_record(CampaignSpec(change="driver=560.35", actor="ana", scope=scope or []), T0)
    apply_logged(state, record)
    return str(record["payload"]["campaign_id"])


def fell_off_bus(host: str, ts: int) -> dict[str, object]:
    return f.xid(79, host=host, ts=ts)


def test_an_error_in_scope_is_counted_up_to_the_cap_and_folds_into_a_fault(policy: Policy) -> None:
    inv = inventory({"h1": "md0", "h2": "md1"})
    state = FleetState()
    cid = campaign(state, scope=["md0"])
    days = ErrorDays(policy, inv.domain_of)
    out = []
    for i in range(5):
        signal = classify(fell_off_bus("h1", T0 + i * HOUR), policy)
        assert signal is not None
        action = days.observe(state, signal)
        if action is not None:
            out.append(action)
            # it crosses the log as any action does
            apply_logged(state, Codec().decode(Codec().encode(action.to_record())).record)
    assert len(out) == policy.trains.errors_per_host_day == 3
    assert [a.kind for a in out] == ["errors_counted"] * 3 and out[0].domain == "md0"
    faults = state.trains.campaigns[cid].faults
    assert [x.rule for x in faults] == ["errors/xid"] * 3 and not any(x.upgraded for x in faults)
    classify_fault = classifier(policy.trains.classes, {r.name: r.classes for r in policy.rules})
    assert {classify_fault(x.rule) for x in faults} == {"xid"}
    # out of the campaign's scope, or an error class the test does not compare: nothing
    off_scope = classify(fell_off_bus("h2", T0), policy)
    assert off_scope is not None and days.observe(state, off_scope) is None
    # the next day counts again
    signal = classify(fell_off_bus("h1", T0 + 25 * HOUR), policy)
    assert signal is not None and days.observe(state, signal) is not None


def test_a_restarted_worker_counts_on_from_what_the_log_holds(policy: Policy) -> None:
    inv = inventory({"h1": "md0"})
    state = FleetState()
    campaign(state)
    first = ErrorDays(policy, inv.domain_of)
    signal = classify(fell_off_bus("h1", T0 + HOUR), policy)
    assert signal is not None
    sent = first.observe(state, signal)
    assert sent is not None
    apply(state, sent)
    again = ErrorDays(policy, inv.domain_of).observe(
        state, signal
    )  # the same error read again after a restart
    assert again is not None and again.action_id != sent.action_id  # the host-day's second, not a repeat
    apply(state, again)
    apply(state, again)
    assert len(state.trains.campaigns[next(iter(state.trains.campaigns))].faults) == 2


def test_no_campaign_no_count(policy: Policy) -> None:
    signal = classify(fell_off_bus("h1", T0), policy)
    assert signal is not None
    assert ErrorDays(policy, inventory({"h1": "md0"}).domain_of).observe(FleetState(), signal) is None


def test_a_tick_starts_a_campaign_in_a_domain_no_action_has_touched(policy: Policy) -> None:
    inv = inventory({f"h{i}": "md0" for i in range(4)} | {f"g{i}": "md1" for i in range(4)})
    state = FleetState()
    cid = campaign(state)
    planner = Planner(policy, members=inv.hosts_in, view=inv)
    moved: list[str] = []

    def move(domain: str) -> None:
        moved.append(domain)
        for action in planner.reconcile(state, domain, inv.domain_size(domain), T0 + HOUR):
            apply(state, action)

    TickSchedule(planner, inv.domain_size).tick(state, T0 + HOUR, move)
    assert moved == ["md0"]  # its first domain, though the fold holds no host of it yet
    assert state.trains.campaigns[cid].visits  # its first host is asked for the change
