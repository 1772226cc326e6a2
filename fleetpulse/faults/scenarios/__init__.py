"""The four fault scenarios; each takes a ``FaultContext`` and returns a ``ScenarioResult``."""
