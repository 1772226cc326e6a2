"""Vocabularies of the events a fleet records beyond raw signals: incident causes and operator steps.

Causes are Llama 3's Table 5 classes plus what public fault traces record that it has no row for
(power, fan, PCIe, storage); ``unclassified`` keeps an incident whose class maps to nothing.
"""

from __future__ import annotations

from typing import Literal, get_args

IncidentCause = Literal[
    # Llama 3 (Dubey et al. 2024), Table 5
    "faulty_gpu",
    "hbm3",
    "software",
    "network",
    "host_maintenance",
    "gpu_sram",
    "gpu_system_processor",
    "nic",
    "nccl_watchdog",
    "silent_data_corruption",
    "thermal",
    "ssd",
    "psu",
    "server_chassis",
    "io_expansion_board",
    "dependency",
    "cpu",
    "system_memory",
    # beyond Table 5
    "power",
    "fan",
    "pcie",
    "storage",
    "unclassified",
]
INCIDENT_CAUSES: tuple[str, ...] = get_args(IncidentCause)
UNCLASSIFIED: IncidentCause = "unclassified"

OperatorEventKind = Literal[
    "out_of_service",
    "returned_to_service",
    "repair_started",
    "repair_finished",
    "rma_shipped",
    "rma_replaced",
]
OPERATOR_EVENT_KINDS: tuple[str, ...] = get_args(OperatorEventKind)
# Steps that take a host out of service, and those that bring it back.
OPENING_KINDS = frozenset({"out_of_service", "repair_started", "rma_shipped"})
CLOSING_KINDS = frozenset({"returned_to_service", "repair_finished", "rma_replaced"})

# The rack ``fleetpulse import`` gives a host it first saw in an incident: its install_ts is only the
# trace's start, so its age is unknown (analytics leaves it out of age-based tables).
IMPORTED_RACK = "imported"

# The hardware event an imported incident stands for carries the incident's id with this suffix: the
# signal is linked to its incident (the repeat-offender rules see it), never a fault of its own.
SIGNAL_SUFFIX = "-hw"


def incident_signal_id(incident_id: str) -> str:
    """The event id of the hardware signal an imported incident's mapping generated."""
    return f"{incident_id}{SIGNAL_SUFFIX}"
