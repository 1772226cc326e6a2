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
from producers.importer.envelope_encoding import EnvelopeEncoder
from producers.importer.records import layout_digest
from producers.progress import StepUpdate, no_steps
from producers.sinks.kafka import KafkaSink
from schemas import Codec, DecodeError, HostInventoried, IncidentReported
from schemas.codec import HEADER, body_event_id

if TYPE_CHECKING:
    from ground.settings import Settings


@dataclass
class FleetView:
    """Hosts in the inventory (with their cluster) and incident ids already on the actions topic."""

    clusters: dict[str, str] = field(default_factory=dict)
    layouts: dict[str, str] = field(default_factory=dict)  # host -> layout_digest of its newest record
    incident_ids: set[str] = field(default_factory=set)


def read_fleet(settings: Settings, codec: Codec | None = None) -> FleetView:
    """The inventory's hosts and the incident ids on the actions topic, read to their current ends."""
    codec = codec or Codec()
    view = FleetView()
    for raw in read_to_end(settings.bootstrap_servers, settings.kafka, settings.topics.inventory.name):
        try:
            record = codec.decode(raw.value).record  # type: ignore[arg-type]
        except DecodeError:
            continue  # not ours to judge: the consumers of that topic dead-letter it
        if record["event_type"] == HostInventoried.EVENT_TYPE:
            view.clusters[record["host_id"]] = record["cluster"]
            view.layouts[record["host_id"]] = layout_digest(record["payload"], record["cluster"])
    incident_schemas = {v.schema_id for v in codec.registry.versions(IncidentReported.EVENT_TYPE)}
    # the whole log, however long the fleet has run: a partial read would send incidents twice
    for raw in read_to_end(
        settings.bootstrap_servers, settings.kafka, settings.topics.actions.name, timeout_s=900
    ):
        event_id = leading_event_id(raw.value, incident_schemas)
        if event_id is not None:
            view.incident_ids.add(event_id)
    return view


def leading_event_id(value: bytes | None, schema_ids: set[int]) -> str | None:
    """The event id of a framed record written with one of ``schema_ids``, without decoding the rest.

    The actions log is mostly the planner's own records: skipping them by schema id keeps a re-import
    of a long history from decoding the whole log.
    """
    if (
        value is None
        or len(value) < 6
        or value[0] != 0
        or int.from_bytes(value[1:5], "big") not in schema_ids
    ):
        return None
    return body_event_id(memoryview(value)[HEADER.size :])


class EncodedBatch(RecordBatch):
    """Records the sink encodes with one of the import's encoders (the codec's bytes, cheaper)."""

    def __init__(self, records: list[dict[str, Any]], encode: Callable[[dict[str, Any]], bytes]) -> None:
        super().__init__(records)
        self.encode_one = encode

    def encode(self, codec: Codec) -> list[bytes]:
        return list(map(self.encode_one, self.records()))


def send(
    settings: Settings,
    inventory: list[dict[str, Any]],
    incidents: list[dict[str, Any]],
    *,
    hardware: list[dict[str, Any]] | None = None,
    sink_factory: Callable[[Settings], KafkaSink] | None = None,
    chunk: int = 10_000,
    progress: StepUpdate = no_steps,
) -> int:
    """Send inventory, then incidents and the hardware events they stand for; raises DeliveryError
    unless the broker acknowledged every one."""
    sink = (sink_factory or _sink)(settings)
    encoder, envelopes = IncidentEncoder(sink.codec), EnvelopeEncoder(sink.codec)
    hardware = hardware or []
    total = len(incidents) + len(hardware)
    try:
        if inventory:
            sink.write(RecordBatch(inventory))
            sink.flush()
        for i in range(0, len(incidents), chunk):
            sink.write(EncodedBatch(incidents[i : i + chunk], encoder.encode))
            progress("records sent", min(i + chunk, len(incidents)), total)
        for i in range(0, len(hardware), chunk):
            sink.write(EncodedBatch(hardware[i : i + chunk], envelopes.encode))
            progress("records sent", len(incidents) + min(i + chunk, len(hardware)), total)
    finally:
        sink.close()
    return len(incidents)


def _sink(settings: Settings) -> KafkaSink:
    return KafkaSink(settings, client_id=f"{settings.kafka.client_id_prefix}-import", bulk=True)
