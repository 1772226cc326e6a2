"""The one frozen settings object and its sections, one module per part."""

from ground.settings.root import DEFAULT_CONFIG_FILE, PathsSettings, Settings

__all__ = ["DEFAULT_CONFIG_FILE", "PathsSettings", "Settings"]
