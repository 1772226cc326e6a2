"""Which broker a demo runs on, so that demos side by side never clash on a port or a broker's data folder.

An external cluster (``KAFKA_BOOTSTRAP_SERVERS``) or a local broker already running are used and left alone.
Otherwise the demo starts a broker of its own on free ports, its data in the run's folder, and stops it at the
end: starting the shared local broker (port 19092) would clash with another demo's, and the first demo to end
would stop it under the other. ``--keep-broker`` asks for the shared local broker, left running afterwards.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from fleetpulse.broker import LocalBroker, own_broker, stop_if_started_within
from fleetpulse.broker.layout import BrokerFiles
from ground.settings import Settings


@contextmanager
def demo_broker(
    settings: Settings, run_dir: Path, *, keep: bool, reporter: Callable[[str], None]
) -> Iterator[Settings]:
    """The settings the demo runs with; its broker is started by the run (``ensure_running``) as before."""
    if not settings.uses_local_broker or keep or LocalBroker(settings.broker).pid() is not None:
        with stop_if_started_within(settings, keep=keep, reporter=reporter):
            yield settings
        return
    own = own_broker(settings.broker, run_dir / "kafka")
    reporter(
        f"a Kafka broker of this run's own on {own.bootstrap} (data in {own.data_dir}), stopped at the end"
    )
    try:
        yield settings.model_copy(update={"broker": own})
    finally:
        LocalBroker(own, reporter=reporter).stop()
        shutil.rmtree(BrokerFiles.of(own.data_dir).log_dirs, ignore_errors=True)  # its topics; its log stays
