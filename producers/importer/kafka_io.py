"""The importer's Kafka shell: what the fleet already knows (hosts, imported incidents), and the send.

Records go through the simulator's Kafka sink (idempotent, acks=all, keyed by host), inventory
first, so every consumer knows a host before its first incident arrives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ground.kafka.reading import read_to_end
from producers.batches import RecordBatch
from producers.importer.encoding import IncidentEncoder
from producers.sinks.kafka import KafkaSink
from schemas import Codec, DecodeError, HostInventoried, IncidentReported

if TYPE_CHECKING:
    from ground.settings import Settings


@dataclass
class FleetView:
    """Hosts in the inventory (with their cluster) and incident ids already on the actions topic."""

    clusters: dict[str, str] = field(default_factory=dict)
    incident_ids: set[str] = field(default_factory=set)


def read_fleet(settings: Settings, codec: Codec | None = None) -> FleetView:
    codec = codec or Codec()
    view = FleetView()
    for event_type, topic, take in (
        (HostInventoried.EVENT_TYPE, settings.topics.inventory.name, _take_host),
        (IncidentReported.EVENT_TYPE, settings.topics.actions.name, _take_incident),
    ):
        for raw in read_to_end(settings.bootstrap_servers, settings.kafka, topic):
            try:
                record = codec.decode(raw.value).record  # type: ignore[arg-type]
            except DecodeError:
                continue  # not ours to judge: the consumers of that topic dead-letter it
            if record["event_type"] == event_type:
                take(view, record)
    return view


def _take_host(view: FleetView, record: dict[str, Any]) -> None:
    view.clusters[record["host_id"]] = record["cluster"]


def _take_incident(view: FleetView, record: dict[str, Any]) -> None:
    view.incident_ids.add(record["event_id"])


class IncidentBatch(RecordBatch):
    """Records the sink encodes with the import's ``IncidentEncoder`` (same bytes as the codec)."""

    def __init__(self, records: list[dict[str, Any]], encoder: IncidentEncoder) -> None:
        super().__init__(records)
        self.encoder = encoder

    def encode(self, codec: Codec) -> list[bytes]:
        encode = self.encoder.encode
        return [encode(r) for r in self.records()]


def send(
    settings: Settings,
    inventory: list[dict[str, Any]],
    incidents: list[dict[str, Any]],
    *,
    sink_factory: Callable[[Settings], KafkaSink] | None = None,
    chunk: int = 10_000,
) -> int:
    """Send inventory, then incidents; raises DeliveryError unless the broker acknowledged every one."""
    sink = (sink_factory or _sink)(settings)
    encoder = IncidentEncoder(sink.codec)
    try:
        if inventory:
            sink.write(RecordBatch(inventory))
            sink.flush()
        for i in range(0, len(incidents), chunk):
            sink.write(IncidentBatch(incidents[i : i + chunk], encoder))
    finally:
        sink.close()
    return len(incidents)


def _sink(settings: Settings) -> KafkaSink:
    return KafkaSink(settings, client_id=f"{settings.kafka.client_id_prefix}-import")
