"""The private Faust state the detect worker reads is there in the locked Faust.

``send_progress`` reads ``App._consumer`` and the consumer's ``_committed_offset`` (the offsets
committed at assignment: Faust keeps them nowhere public) through ``getattr`` with a default, so a
Faust that renamed either would not fail: every planner source would stay uncaught-up and hold its
findings until their windows close. These checks make such an upgrade fail here instead.
"""

from __future__ import annotations

import inspect

from faust.app.base import App
from faust.transport.consumer import Consumer


def test_the_consumer_keeps_the_offsets_committed_at_assignment() -> None:
    assert "_committed_offset" in Consumer.__annotations__
    assert "self._committed_offset.update(" in inspect.getsource(Consumer)


def test_the_app_keeps_its_consumer() -> None:
    assert "_consumer" in App.__annotations__  # read without starting one (``App.consumer`` would create it)
    assert "self._consumer = consumer" in inspect.getsource(App)
