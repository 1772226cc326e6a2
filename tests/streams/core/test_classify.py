"""Classification: one class per fault, noise and companion signals count for nothing."""

from __future__ import annotations

import pytest

from streams.core.classify import classify
from streams.core.policy import Policy
from tests.streams import factories as f


def cls(record: dict, policy: Policy) -> str | None:
    signal = classify(record, policy)
    return signal.error_class if signal else None


def test_fault_classes(policy: Policy) -> None:
    assert cls(f.ecc(), policy) == "dram_uce"
    assert cls(f.ecc(row_remap="remap_failure"), policy) == "row_remap_failure"
    assert cls(f.ecc(memory="sram"), policy) == "sram_uce"
    assert cls(f.xid(79), policy) == "fell_off_bus"
    assert cls(f.xid(119), policy) == "gsp_error"
    assert cls(f.link("down"), policy) == "link_down"


@pytest.mark.parametrize("companion", [48, 64, 94, 95])
def test_companion_xids_are_not_counted(policy: Policy, companion: int) -> None:
    # the ECC event of the same fault is the one that counts
    assert cls(f.xid(companion), policy) is None


@pytest.mark.parametrize("noise", [13, 31, 43, 45, 63, 68, 92])
def test_noise_xids(policy: Policy, noise: int) -> None:
    assert cls(f.xid(noise), policy) is None


def test_noise_and_companion_events(policy: Policy) -> None:
    assert cls(f.ecc(correctable=True), policy) is None
    assert cls(f.aer("correctable"), policy) is None
    assert cls(f.aer("fatal"), policy) is None  # companion of XID 79


def test_scope_keys_and_weight(policy: Policy) -> None:
    signal = classify(f.link(port=3, count=4, host="hx"), policy)
    assert signal is not None and signal.weight == 4
    assert (
        signal.scope_key("port") == "hx/3"
        and signal.scope_key("host") == "hx"
        and signal.scope_key("gpu") is None
    )
    gpu_signal = classify(f.xid(79, gpu=6, host="hy"), policy)
    assert gpu_signal is not None and gpu_signal.scope_key("gpu") == "hy/6"
