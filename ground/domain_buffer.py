"""How many hosts a maintenance domain's buffer allows out (pure): the planner's rule, shared with the lake's jobs.

The planner (``streams.core.planning.budget``) holds a domain to it; the campaign job
(``analytics.jobs.campaigns``) measures a campaign's hosts out against it.
"""

from __future__ import annotations

import math

from ground.packaged_policy import packaged

# ``[planner] capacity_buffer_pct`` of the packaged policy file, for a batch job run without the detection
# policy at hand; a job given another policy's buffer takes that one
PACKAGED_CAPACITY_BUFFER_PCT: float = packaged("planner", "capacity_buffer_pct")


def budget(size: int, pct: float) -> int:
    """Hosts a buffer of ``pct`` per cent allows in a domain of ``size`` hosts (never below one)."""
    return max(1, math.floor(size * pct / 100.0 + 1e-9))
