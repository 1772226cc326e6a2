"""NVIDIA's XID catalog, once: the codes known by name, and the XIDs that are a fault's primary signal.

The host agent names what it reports from here, the simulator writes these names, and the analytics
fault table reads a fault's kind from its primary XID. Any other code is still reported, and counted.
"""

from __future__ import annotations

XID_NAMES: dict[int, str] = {
    8: "GPU stopped processing",
    13: "Graphics Engine Exception",
    31: "GPU memory page fault",
    32: "Invalid or corrupted push buffer stream",
    38: "Driver firmware error",
    43: "GPU stopped processing",
    45: "Preemptive cleanup, due to previous errors",
    48: "DBE (Double Bit Error) ECC Error",
    56: "Display Engine error",
    57: "Error programming video memory interface",
    61: "Internal micro-controller breakpoint/warning",
    62: "Internal micro-controller halt",
    63: "ECC page retirement or row remapping recording event",
    64: "ECC page retirement or row remapper recording failure",
    68: "NVDEC0 Exception",
    69: "Graphics Engine class error",
    74: "NVLINK Error",
    79: "GPU has fallen off the bus",
    92: "High single-bit ECC error rate",
    94: "Contained ECC error",
    95: "Uncontained ECC error",
    109: "Context Switch Timeout Error",
    119: "GSP RPC timeout",
    120: "GSP error",
    121: "C2C Link corrected error",
    122: "SPI PMU RPC read failure",
    123: "SPI PMU RPC write failure",
    136: "Link training failed",
    140: "Unrecovered ECC Error",
    143: "GPU Initialization Failure",
    144: "NVLink: SAW Error",
    145: "NVLink: RLW Error",
    146: "NVLink: TLW Error",
    147: "NVLink: TREX Error",
    148: "NVLink: NVLPW_CTRL Error",
    149: "NVLink: NETIR Error",
    150: "NVLink: MSE Error",
    154: "GPU Recovery Action Changed",
    155: "NVLink: SW Defined Error",
}

FELL_OFF_BUS = 79
ROW_REMAP_EVENT = 63  # follows a DRAM UCE whose row was remapped: never a fault of its own

# The XIDs that are a GPU fault's primary signal, by fault kind (``schemas.taxonomy``); the first is
# the one a fault of that kind raises when nothing says which. Co-emitted XIDs (63) are absent.
KIND_XIDS: dict[str, tuple[int, ...]] = {
    "fell_off_bus": (FELL_OFF_BUS,),
    "dram_uce": (48,),
    "row_remap_failure": (64,),
    "sram_uce": (95, 94),
    "gsp_error": (119, 120),
    "nvlink": (74,),
    "pmu_halt": (62,),
}
XID_KIND: dict[int, str] = {code: kind for kind, codes in KIND_XIDS.items() for code in codes}


def xid_name(code: int, text: str = "") -> str:
    """The driver's own text when the line carried one, else the catalog's name."""
    return text or XID_NAMES.get(code, f"XID {code}")
