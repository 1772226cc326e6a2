"""The inventory table: the last HostInventoried of a host wins, domain sizes follow every move."""

from __future__ import annotations

from typing import Any

from schemas import HostInventoried
from streams.core.inventory import UNASSIGNED, HostInfo, Inventory
from streams.testing import START_TS
from tests.streams.factories import envelope, sample, xid


def inventoried(
    host: str, domain: str, *, rack: str = "r0", cluster: str = "c0", ts: int = START_TS, **payload: Any
) -> dict[str, Any]:
    return HostInventoried(
        **envelope(host=host, ts=ts, cluster=cluster),
        payload={
            "rack": rack,
            "fabric": "roce",
            "maintenance_domain": domain,
            "sku": "H100-SXM5-80GB",
            "install_ts": START_TS - 86_400_000,
            "gpu_count": 8,
            "nic_ports": 8,
            **payload,
        },
    ).to_record()


def inventory_of(*records: dict[str, Any]) -> Inventory:
    inv = Inventory()
    for record in records:
        inv.apply(record)
    return inv


def test_a_host_reinventoried_into_another_domain_leaves_the_old_one_and_joins_the_new() -> None:
    inv = inventory_of(inventoried("h1", "c0-md0"), inventoried("h2", "c0-md0"), inventoried("h3", "c0-md1"))
    assert inv.domains() == {"c0-md0": 2, "c0-md1": 1}
    inv.apply(inventoried("h1", "c0-md1", rack="r9"))
    assert inv.domain_size("c0-md0") == 1 and inv.domain_size("c0-md1") == 2
    assert inv.domains() == {"c0-md0": 1, "c0-md1": 2}
    assert inv.domain_of("h1") == "c0-md1" and inv.hosts["h1"].rack == "r9"
    assert sorted(inv.hosts) == ["h1", "h2", "h3"]


def test_a_domain_emptied_by_a_move_is_no_longer_listed() -> None:
    inv = inventory_of(inventoried("h1", "c0-md0"), inventoried("h1", "c0-md1"))
    assert inv.domain_size("c0-md0") == 0
    assert inv.domains() == {"c0-md1": 1}


def test_the_same_host_inventoried_again_in_its_domain_counts_once() -> None:
    """A replayed or re-sent record (the log is read from the start on every restart) changes no size."""
    first = inventoried("h1", "c0-md0")
    inv = inventory_of(first, first, inventoried("h1", "c0-md0", rack="r1"))
    assert inv.domains() == {"c0-md0": 1}
    assert inv.hosts["h1"].rack == "r1"


def test_the_last_record_in_log_order_wins_whatever_its_timestamp() -> None:
    inv = inventory_of(
        inventoried("h1", "c0-md0", ts=START_TS + 1_000), inventoried("h1", "c0-md1", ts=START_TS)
    )
    assert inv.domain_of("h1") == "c0-md1"
    assert inv.domains() == {"c0-md1": 1}


def test_other_event_types_are_ignored() -> None:
    inv = inventory_of(
        xid(79, host="h1"),
        sample(host="h2"),
        {"event_type": "MaintenanceActionRecorded", "host_id": "h3", "payload": {"maintenance_domain": "x"}},
        {},  # no event type at all
    )
    assert inv.hosts == {} and inv.domains() == {}
    inv.apply(inventoried("h1", "c0-md0"))
    inv.apply(xid(79, host="h1"))
    assert inv.domain_of("h1") == "c0-md0" and inv.domains() == {"c0-md0": 1}


def test_an_unknown_host_is_unassigned_and_an_unknown_domain_is_empty() -> None:
    inv = inventory_of(inventoried("h1", "c0-md0"))
    assert inv.domain_of("h404") == UNASSIGNED
    assert inv.domain_size("c9-md9") == 0 and inv.domain_size(UNASSIGNED) == 0


def test_host_info_is_built_from_the_envelope_and_the_payload() -> None:
    inv = inventory_of(
        inventoried("h7", "c1-md3", rack="r12", cluster="c1", fabric="infiniband", gpu_count=4)
    )
    assert inv.hosts["h7"] == HostInfo(
        host_id="h7",
        cluster="c1",
        rack="r12",
        domain="c1-md3",
        fabric="infiniband",
        install_ts=START_TS - 86_400_000,
        gpu_count=4,
    )
