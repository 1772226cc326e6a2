"""Reading sysfs files without ever raising: a missing, unreadable or garbled file is counted and skipped."""

from __future__ import annotations

from pathlib import Path

from producers.agent.collector import Problems


class SysfsReader:
    """Reads small text files under one root, reporting every failure to ``problems``."""

    def __init__(self, root: Path, problems: Problems, source: str) -> None:
        self.root = root
        self.problems = problems
        self.source = source

    def text(self, path: Path) -> str | None:
        try:
            return path.read_text().strip()
        except FileNotFoundError:
            self.problems.add(self.source, "missing_file", str(path))
        except PermissionError:
            self.problems.add(self.source, "permission_denied", str(path))
        except (OSError, UnicodeDecodeError) as exc:
            self.problems.add(self.source, "unreadable", str(path), f"{type(exc).__name__}: {exc}")
        return None

    def integer(self, path: Path) -> int | None:
        raw = self.text(path)
        if raw is None:
            return None
        try:
            token = raw.split()[0]
            if not token.isascii():  # int() reads other scripts' digits: '٣' would be 3
                raise ValueError(token)
            return int(token, 0)
        except (ValueError, IndexError):
            self.problems.add(self.source, "garbled_value", str(path), repr(raw[:40]))
            return None

    def listdir(self, path: Path) -> list[Path]:
        """Sorted entries of a folder; an absent folder is simply empty (the hardware is not there)."""
        try:
            return sorted(path.iterdir())
        except FileNotFoundError:
            return []
        except OSError as exc:
            self.problems.add(self.source, "unreadable", str(path), f"{type(exc).__name__}: {exc}")
            return []
