"""Change campaigns in the application shell: the in-process twin a campaign is measured in."""

from fleetpulse.trains.twin import Twin, TwinConfig, TwinReport

__all__ = ["Twin", "TwinConfig", "TwinReport"]
