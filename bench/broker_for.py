"""The Kafka broker a bench runs on, found or started, so that a bench never ends in a traceback for want of one."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

from fleetpulse.broker import LocalBroker, own_broker
from ground.kafka.admin import KafkaUnavailableError, broker_answers
from ground.settings import Settings


@contextlib.contextmanager
def broker_for(bootstrap: str | None, settings: Settings) -> Iterator[str]:
    """The bootstrap address to run on.

    ``bootstrap`` (a bench's ``--bootstrap``) or an external cluster named by the settings must answer, else a
    one-line ``KafkaUnavailableError``. With neither, the settings' local broker is used if it runs; if not, a
    broker of the bench's own on free ports (so it clashes with no demo), stopped on the way out.
    """
    named = bootstrap or (None if settings.uses_local_broker else settings.bootstrap_servers)
    if named is not None:
        if not broker_answers(named, settings.kafka):
            raise KafkaUnavailableError(
                named,
                f"no Kafka broker answers at {named} (--bootstrap or KAFKA_BOOTSTRAP_SERVERS): start one "
                "there, or name none and the bench starts its own",
            )
        yield named
        return
    if broker_answers(settings.bootstrap_servers, settings.kafka):
        yield settings.bootstrap_servers
        return
    with tempfile.TemporaryDirectory(prefix="bench-broker-") as work:
        broker = LocalBroker(own_broker(settings.broker, Path(work) / "kafka"), die_with_caller=True)
        print(f"starting a broker of this run's own at {broker.bootstrap_servers}", flush=True)
        broker.start()
        try:
            yield broker.bootstrap_servers
        finally:
            broker.stop()
