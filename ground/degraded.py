"""Degraded job-independent telemetry in one HostSampled sample, written once, as data (``DEGRADED``).

Every form of the rule is read off that table: ``sample_degraded`` walks one payload (the samples fold of
every runner, record by record), and ``analytics.jobs.slow_view.degraded_expr`` builds the Polars column
form (the backtest's lake columns, the batch slow-host view). Neither holds a field name or a bound of its
own; the bounds are ``[degraded]`` of the packaged policy file (``ground.packaged_policy``). Pure, no polars:
the worker imports this before its shutdown deadline blocks signals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ground.packaged_policy import packaged

THERMAL_THROTTLE: int = packaged("degraded", "throttle_mask")  # NVML clock event reasons: thermal slowdown
NIC_PORT_DROP: float = packaged("degraded", "port_drop")  # this far below its host's ports' median
NIC_MIN_PORTS: int = packaged("degraded", "min_ports")  # ... when at least this many of them report


class BelowMax(NamedTuple):
    """A GPU whose ``field`` trained below its ``limit`` (both reported; either missing is no evidence)."""

    field: str
    limit: str


class AnyBit(NamedTuple):
    """A GPU whose ``field``, a bit set (missing reads as 0), has any bit of ``mask``."""

    field: str
    mask: int


class PortDrop(NamedTuple):
    """A NIC port whose ``field`` is more than ``drop`` below the median of its host's ports that report
    it, when at least ``min_ports`` do and their median is above 0."""

    field: str
    drop: float
    min_ports: int = 2


@dataclass(frozen=True, slots=True)
class DegradedRule:
    """A sample is degraded when any GPU meets a ``below_max`` or ``bits`` test, or a NIC port ``port``'s."""

    below_max: tuple[BelowMax, ...]
    bits: tuple[AnyBit, ...]
    port: PortDrop


DEGRADED = DegradedRule(
    below_max=(
        BelowMax("pcie_link_gen", "pcie_link_gen_max"),
        BelowMax("pcie_link_width", "pcie_link_width_max"),
    ),
    bits=(AnyBit("throttle_reasons", THERMAL_THROTTLE),),
    port=PortDrop("rx_gbps", NIC_PORT_DROP, NIC_MIN_PORTS),
)


def sample_degraded(
    gpus: Sequence[Mapping[str, Any]], nics: Sequence[Mapping[str, Any]], rule: DegradedRule = DEGRADED
) -> bool:
    """Job-independent evidence in one HostSampled payload, by ``rule``: by default a GPU whose PCIe link
    trained below its maximum generation or width, a GPU throttled for heat, or a NIC port ``NIC_PORT_DROP``
    below the median of its host's ports. None of it depends on what job runs, so a host without peers has it."""
    # on every sample of the worker's hot path: plain lookups, tuples unpacked, a test at a time over the
    # GPUs (one loop per test, not one per GPU), early exits
    for field, limit in rule.below_max:
        for g in gpus:
            value = g.get(field)
            if value is not None and (top := g.get(limit)) is not None and value < top:
                return True
    for field, mask in rule.bits:
        for g in gpus:
            if (g.get(field) or 0) & mask:
                return True
    field, drop, min_ports = rule.port
    values = sorted([v for n in nics if (v := n.get(field)) is not None])
    if len(values) < max(min_ports, 1):
        return False
    med = (values[(len(values) - 1) // 2] + values[len(values) // 2]) / 2
    return med > 0 and values[0] < (1 - drop) * med
