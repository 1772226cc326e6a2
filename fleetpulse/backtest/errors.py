"""Errors of ``fleetpulse backtest``: a bad ``--set``, an unreadable lake or truth, named with what to fix."""

from __future__ import annotations

from ground.errors import FleetpulseError


class BacktestError(FleetpulseError):
    """The backtest cannot run as asked; the message names the option, key or path at fault."""
