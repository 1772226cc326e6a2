"""The NVML collector against the real driver: runs only where an NVIDIA GPU and driver exist (``pytest -m gpu``)."""

from __future__ import annotations

import pynvml
import pytest

from ground.settings.agent import NvmlSettings
from producers.agent.collector import Problems
from producers.agent.nvml import NvmlCollector
from producers.agent.units import Units

pytestmark = pytest.mark.gpu


def _driver_reason() -> str | None:
    try:
        pynvml.nvmlInit()
        count = pynvml.nvmlDeviceGetCount()
        pynvml.nvmlShutdown()
    except Exception as exc:  # no library, no driver, no device: all mean "skip here"
        return f"no NVIDIA driver here: {type(exc).__name__}: {exc}"
    return None if count else "NVML works but reports no GPU"


REASON = _driver_reason()


@pytest.mark.skipif(REASON is not None, reason=REASON or "")
def test_real_gpus_read_without_problems_beyond_unsupported_fields() -> None:
    problems = Problems()
    c = NvmlCollector(NvmlSettings(), Units(), problems)
    try:
        first = c.collect(0)
        second = c.collect(10_000)
    finally:
        c.close()
    assert first.gpus and set(first.gpus) == set(second.gpus)
    for reading in second.gpus.values():
        assert 0 < reading["temp_c"] < 120
        assert reading["pcie_link_width"] >= 1
    assert first.inventory["driver_version"]
    assert not [k for k in problems.counts if k[1] not in ("unsupported",)]
