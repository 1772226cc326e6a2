"""One route for a finding to its domain's planner, shared by the worker and the detection core."""

from __future__ import annotations

from streams.core.planning.admission import Route, route
from tests.streams import factories as f


def test_a_plannable_finding_goes_to_its_hosts_domain_and_an_unplannable_one_names_why() -> None:
    asked: list[str] = []

    def domain_of(host: str) -> str:
        asked.append(host)
        return f"dom-{host}"

    good = f.finding(action="reboot")
    assert route(good.to_record(), domain_of) == Route(f"dom-{good.host_id}")
    bad = f.finding(action="bogus")
    assert route(bad.to_record(), domain_of) == Route(
        None, "unplannable_finding: unknown recommended_action 'bogus'"
    )
    assert asked == [good.host_id]  # a refused finding has no domain to look up
