"""Keeps known secrets out of every log record: message, arguments, traceback and stack text.

A log-record factory scrubs each record as it is made, so loggers created later (a library
imported after start-up, a part's own) and every handler are covered; logging is process-wide,
so this is too, installed on first use and never at import.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

MASK = "**********"


class SecretFilter(logging.Filter):
    """Replaces known secrets (plain, or as Python shows them inside str/bytes reprs) in a record."""

    def __init__(self) -> None:
        super().__init__()
        self._forms: tuple[str, ...] = ()

    def add(self, secret: str) -> None:
        if secret:
            forms = {*self._forms, secret, repr(secret)[1:-1], repr(secret.encode())[2:-1]}
            self._forms = tuple(sorted(forms, key=len, reverse=True))  # longest first: no partial masks

    def scrub(self, text: str) -> str:
        for form in self._forms:
            text = text.replace(form, MASK)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._forms:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken record is logging's business, not ours
            return True
        clean = self.scrub(message)
        if clean != message:
            record.msg, record.args = clean, None
        self.scrub_traces(record)
        return True

    def scrub_traces(self, record: logging.LogRecord) -> None:
        if not self._forms:
            return
        if record.exc_info and not record.exc_text:
            # formatted now, as the handler's Formatter would, so the text it caches is clean
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = self.scrub(record.stack_info)


_REDACT = SecretFilter()


class _ScrubbedRecord(logging.LogRecord):
    """Masks at formatting time: logger filters still see the original arguments (e.g. URL redaction)."""

    def getMessage(self) -> str:  # noqa: N802 - logging's name
        return _REDACT.scrub(super().getMessage())


_LOCK = threading.Lock()
_installed: list[Callable[..., logging.LogRecord]] = []


def redact_in_logs(*secrets: str) -> None:
    """Mask ``secrets`` in every log record from now on, whichever logger or handler (idempotent)."""
    with _LOCK:
        for secret in secrets:
            _REDACT.add(secret)
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            if type(record) is logging.LogRecord:
                record.__class__ = _ScrubbedRecord  # no state of its own: only getMessage differs
            else:  # another factory's class: mask eagerly instead
                _REDACT.filter(record)
            _REDACT.scrub_traces(record)
            return record

        logging.setLogRecordFactory(factory)
        _installed.append(factory)
