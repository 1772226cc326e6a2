"""The PCI bus ids of a simulated 8-GPU host: the simulator's events and the agent's fixture host name the same devices.

A module of its own so the agent's side imports it without the simulator (and its NumPy).
"""

from __future__ import annotations

PCI_BUS_IDS = (
    "0000:18:00.0",
    "0000:2a:00.0",
    "0000:3a:00.0",
    "0000:5d:00.0",
    "0000:9a:00.0",
    "0000:ab:00.0",
    "0000:ba:00.0",
    "0000:db:00.0",
)
