"""Vocabularies of the events a fleet records beyond raw signals: fault kinds, incident causes, operator steps.

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

# What failed, as the simulator draws it and the analytics fault table infers it (docs/ANALYTICS.md).
FaultKind = Literal[
    "fell_off_bus",
    "dram_uce",
    "row_remap_failure",
    "sram_uce",
    "gsp_error",
    "nvlink",
    "pmu_halt",
    "link_down",
    "link_flap",
    "nic",
    "software",
    "host_maintenance",
    "nccl_watchdog",
    "silent_data_corruption",
    "thermal",
    "ssd",
    "psu",
]
FAULT_KINDS: tuple[str, ...] = get_args(FaultKind)
# Kinds raised by one GPU (an XID or ECC signal); link kinds name a port.
GPU_FAULT_KINDS = frozenset(
    {"fell_off_bus", "dram_uce", "row_remap_failure", "sram_uce", "gsp_error", "nvlink", "pmu_halt"}
)
LINK_FAULT_KINDS = frozenset({"link_down", "link_flap", "nic"})
# The incident cause of each kind with a hardware signal; a kind without one is its own cause.
KIND_CAUSE: dict[str, IncidentCause] = {
    "fell_off_bus": "faulty_gpu",
    "dram_uce": "hbm3",
    "row_remap_failure": "hbm3",
    "sram_uce": "gpu_sram",
    "gsp_error": "gpu_system_processor",
    "nvlink": "faulty_gpu",
    "pmu_halt": "faulty_gpu",
    "link_down": "network",
    "link_flap": "network",
    "nic": "nic",
}

# What the planner asks to be done to a host (a finding's ``recommended_action``, an action's
# ``operation``; a drain is the planner's own step before any of them).
Operation = Literal["rma", "reboot", "nic_replacement", "cable_replacement", "diagnostics"]
OPERATIONS: tuple[str, ...] = get_args(Operation)

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
# Operators' steps pair within their group: a repair is finished, an RMA replaced, a host returned
# (``schemas.spans`` pairs them for every reader).
STEP_GROUP: dict[str, str] = {
    "out_of_service": "service",
    "returned_to_service": "service",
    "repair_started": "repair",
    "repair_finished": "repair",
    "rma_shipped": "rma",
    "rma_replaced": "rma",
}
RETURNED = "returned_to_service"  # closes every spell open on the host

# The rack ``fleetpulse import`` gives a host it first saw in an incident: its install_ts is only the
# trace's start, so its age is unknown (analytics leaves it out of age-based tables).
IMPORTED_RACK = "imported"

# The hardware event an imported incident stands for carries the incident's id with this suffix: the
# signal is linked to its incident (the repeat-offender rules see it), never a fault of its own.
SIGNAL_SUFFIX = "-hw"


def incident_signal_id(incident_id: str) -> str:
    """The event id of the hardware signal an imported incident's mapping generated."""
    return f"{incident_id}{SIGNAL_SUFFIX}"
