"""Maintenance trains for planned changes: campaigns that roll a version through the fleet domain by domain.

``campaign``: the campaign state folded from ``fleet.actions``; ``safety``: the sequential test of
the new version against the old; ``route`` (its domains and progress), ``gate`` (how many may start,
when it halts) and ``conductor`` (the planner's decisions in a domain), imported by path: they need the
host lifecycle, which folds ``campaign``; ``commands``: a person's
steps (start, pause, resume, abort, rollback) as records.
"""

from streams.trains.campaign import CAMPAIGN_KINDS, CHANGE, Campaign, Fault, Trains, Visit
from streams.trains.safety import ClassVerdict, SprtSettings, sequential_test

__all__ = [
    "CAMPAIGN_KINDS",
    "CHANGE",
    "Campaign",
    "ClassVerdict",
    "Fault",
    "SprtSettings",
    "Trains",
    "Visit",
    "sequential_test",
]
