"""The operator console: server-rendered pages of the fleet a detect worker folds, behind the ops token."""

from streams.console.views import ConsoleInput, register_console

__all__ = ["ConsoleInput", "register_console"]
