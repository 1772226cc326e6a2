"""Secrets are masked in every log record: loggers created after protection, traceback and stack text."""

from __future__ import annotations

import logging
import secrets

import pytest

from ground.kafka.config import MASK, protect_client_logs


def test_a_logger_created_afterwards_is_covered(caplog: pytest.LogCaptureFixture) -> None:
    secret = f"pw-{secrets.token_hex(8)}"
    protect_client_logs(secret)
    later = logging.getLogger(f"kafka.created.later.{secrets.token_hex(4)}")  # e.g. a module imported later
    other = logging.getLogger(f"fleetpulse.part.{secrets.token_hex(4)}")
    with caplog.at_level(logging.DEBUG):
        later.debug("sasl config %s", {"sasl_plain_password": secret})
        other.warning("connecting with %s", secret)
    assert secret not in caplog.text and MASK in caplog.text


def test_traceback_and_stack_text_are_covered(caplog: pytest.LogCaptureFixture) -> None:
    secret = f"pw-{secrets.token_hex(8)}"
    protect_client_logs(secret)
    log = logging.getLogger("aiokafka.conn")
    with caplog.at_level(logging.DEBUG):
        try:
            raise ConnectionError(f"login refused for password {secret}")
        except ConnectionError:
            log.exception("login failed")
        log.debug("where %s", "here", stack_info=True)
    formatted = "\n".join(logging.Formatter().format(r) for r in caplog.records)
    assert "login refused for password" in formatted
    assert secret not in caplog.text and secret not in formatted
