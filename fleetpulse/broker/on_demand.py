"""The local broker for a command that needs one: started when it is not running, stopped after if started here."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from fleetpulse.broker.process import LocalBroker, Reporter
from fleetpulse.supervisor import free_ports

if TYPE_CHECKING:
    from ground.settings import Settings
    from ground.settings.broker import BrokerSettings


def ensure_running(settings: Settings, reporter: Reporter = lambda message: None) -> str:
    """The bootstrap address to use: the external cluster as is, or the local broker, started if needed."""
    if settings.uses_local_broker:
        LocalBroker(settings.broker, kafka=settings.kafka, reporter=reporter).start()
    return settings.bootstrap_servers


@contextlib.contextmanager
def stop_if_started_within(
    settings: Settings, *, keep: bool = False, reporter: Reporter = lambda message: None
) -> Iterator[None]:
    """Stop the local broker on the way out if it was not running on the way in (unless ``keep``).

    A command that starts the broker for its own run (the demo) should not leave a 1 GB JVM behind;
    a broker the user had already started, or an external cluster, is left alone.
    """
    broker = (
        LocalBroker(settings.broker, kafka=settings.kafka, reporter=reporter)
        if settings.uses_local_broker
        else None
    )
    was_running = broker is not None and broker.pid() is not None
    try:
        yield
    finally:
        if broker is not None and not was_running and not keep:
            broker.stop()


def own_broker(settings: BrokerSettings, data_dir: Path) -> BrokerSettings:
    """``settings`` for a broker of one run's own: free ports and its data in ``data_dir``, so it shares
    neither a port nor a data folder with the local broker or another run's."""
    port, controller = free_ports(2)
    return settings.model_copy(update={"port": port, "controller_port": controller, "data_dir": data_dir})
