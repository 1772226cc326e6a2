"""A train halt's evidence as text, and the patterns that read it back (pure).

The planner pages a halt with this text (``streams.trains.safety``, ``streams.trains.step_time``) and
writes it as the ``campaign_halted`` action's reason; the lake's campaign job reads the rates,
counts and interval back out of the same reason. One module holds both sides, so they cannot drift.
"""

from __future__ import annotations

import re
from typing import Any

NUM = r"-?(?:\d+(?:\.\d+)?|nan|inf)"
SIGNED = r"[-+]?(?:\d+(?:\.\d+)?|nan|inf)"
# one fault class's part of a reason: counts and host-days on each version, the rate ratio and its 95 % interval
CLASS_PATTERN = (
    rf"^(?P<test>[\w./-]+): (?P<new_count>\d+) faults in (?P<new_exposure>{NUM}) host-days on the new version "
    rf"\((?P<new_rate>{NUM})/host-day\) vs (?P<old_count>\d+) in (?P<old_exposure>{NUM}) on the old "
    rf"\((?P<old_rate>{NUM})/host-day\), rate ratio (?P<effect>{NUM}) \[95 % (?P<effect_lo>{NUM}), "
    rf"(?P<effect_hi>{NUM})\], log LR (?P<llr>{NUM}) of (?P<llr_threshold>{NUM})"
)
# the step-time part: the new version's step time against the old (%), its interval, over how many windows
STEP_PATTERN = (
    rf"^(?P<test>step time): (?P<effect>{SIGNED}) % on the new version \[95 % (?P<effect_lo>{SIGNED}), "
    rf"(?P<effect_hi>{SIGNED})\] over (?P<windows>\d+) windows, log LR (?P<llr>{NUM}) of (?P<llr_threshold>{NUM})"
)
PARTS = "; "  # between the tests' parts of one reason
ROLLBACK = ". Roll back: "  # what follows the evidence in a halt's reason


def class_evidence(
    fault_class: str,
    new: tuple[int, float],
    old: tuple[int, float],
    ratio: tuple[float, float, float],
    llr: float,
    upper: float,
) -> str:
    """A fault class's evidence: ``new``/``old`` are (faults, host-days); ``ratio`` (estimate, low, high)."""
    (a, da), (b, db) = new, old
    up = a / da if da > 0 else float("nan")
    ctl = b / db if db > 0 else float("nan")
    est, lo, hi = ratio
    return (
        f"{fault_class}: {a} faults in {da:.1f} host-days on the new version ({up:.4f}/host-day) vs {b} in "
        f"{db:.1f} on the old ({ctl:.4f}/host-day), rate ratio {est:.2f} [95 % {lo:.2f}, {hi:.2f}], "
        f"log LR {llr:.2f} of {upper:.2f}"
    )


def step_evidence(slower: tuple[float, float, float], windows: int, llr: float, upper: float) -> str:
    """The step-time evidence: ``slower`` is (estimate, low, high) in % on the new version."""
    est, lo, hi = slower
    return (
        f"step time: {est:+.1f} % on the new version [95 % {lo:+.1f}, {hi:+.1f}] over {windows} "
        f"windows, log LR {llr:.2f} of {upper:.2f}"
    )


def evidence_parts(reason: str) -> list[str]:
    """The tests' parts of a halt's reason (the roll-back hint left off)."""
    return [p for p in reason.split(ROLLBACK, 1)[0].split(PARTS) if p]


def parse_evidence(reason: str) -> list[dict[str, Any]]:
    """Each part of a reason this module wrote, as numbers (a part it did not write is left out)."""
    found = []
    for part in evidence_parts(reason):
        match = re.match(CLASS_PATTERN, part) or re.match(STEP_PATTERN, part)
        if match is not None:
            found.append(
                {k: v if k == "test" else float(v) for k, v in match.groupdict().items() if v is not None}
            )
    return found
