"""Published fleet reliability figures: what the simulator draws its faults from and the analytics compare with."""

from __future__ import annotations

# Llama 3 (Dubey et al. 2024, Table 5): share of 419 unexpected interruptions on 16,384 H100 over 54 days.
LLAMA3_CAUSE_MIX: dict[str, float] = {
    "faulty_gpu": 30.1,
    "hbm3": 17.2,
    "software": 12.9,
    "network": 8.4,
    "host_maintenance": 7.6,
    "gpu_sram": 4.5,
    "gpu_system_processor": 4.1,
    "nic": 1.7,
    "nccl_watchdog": 1.7,
    "silent_data_corruption": 1.4,
    "thermal": 1.4,
    "ssd": 0.7,
    "psu": 0.7,
}
LLAMA3_RATE_PER_GPU_DAY = 419 / (16_384 * 54)
