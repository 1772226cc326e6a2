"""With the broker gone, the worker's own Kafka clients back off a second between attempts.

aiokafka's default (100 ms) made the tailers and the samples stage reconnect, fail and log ten
times a second each; measured with `fleetpulse detect` on a stopped broker: 210 error lines/s
and 9 % CPU before, 92 lines/s and 5 % after (the rest is Faust's own consumer and producer).
"""

from __future__ import annotations

from pathlib import Path

from ground.settings import Settings
from streams.app import RETRY_BACKOFF_MS, DetectApp
from streams.core.policy import Policy


def test_own_clients_back_off_between_reconnects(tmp_path: Path, policy: Policy) -> None:
    settings = Settings.load(detect={"store": "memory", "app_id": "backoff-test"})
    app = DetectApp(settings, policy, data_dir=tmp_path)
    assert RETRY_BACKOFF_MS >= 1000
    for config in (
        app.logs.inventory.client_config,
        app.logs.actions.client_config,
        app.samples_stage.client_config,
    ):
        assert config["retry_backoff_ms"] == RETRY_BACKOFF_MS
