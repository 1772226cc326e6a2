"""Errors of the fleet twin: a bad twin setting or ``--set``, named with what to fix."""

from __future__ import annotations

from ground.errors import FleetpulseError


class TwinError(FleetpulseError):
    """The twin cannot run as asked; the message names the setting or option at fault."""
