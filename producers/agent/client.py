"""Dependency-free step-time reporting for training loops: ``report_step(ms)`` after each step.

Copy this file next to a training script if fleetpulse is not installed there; it needs only the
standard library, sends one UDP datagram to the host agent and never raises.
"""

from __future__ import annotations

import socket

DEFAULT_ADDRESS = ("127.0.0.1", 9477)
_sock: socket.socket | None = None


def report_step(
    step_ms: float, job_id: str | None = None, address: tuple[str, int] = DEFAULT_ADDRESS
) -> bool:
    """Tell the local agent one training step took ``step_ms`` milliseconds; False if it could not be sent."""
    global _sock
    message = f"{float(step_ms):.3f}" + (f" {job_id.split()[0]}" if job_id else "")
    try:
        if _sock is None:
            _sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            _sock.setblocking(False)
        _sock.sendto(message.encode(), address)
        return True
    except (OSError, ValueError, IndexError):
        return False
