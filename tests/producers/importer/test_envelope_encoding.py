"""The import's hardware events, their payloads framed once each, are exactly the codec's bytes."""

from __future__ import annotations

import random
from typing import get_args

from producers.importer.envelope_encoding import EnvelopeEncoder
from producers.importer.hardware import HardwareSignal, hardware_records
from schemas import Codec, HostInventoried

CODEC = Codec()


def incident(n: int, rng: random.Random) -> dict:
    component = rng.choice([None, "3", "17", "PSU-2", "é"])
    payload = {
        "cause": rng.choice(["psu", "fan", "nic", "faulty_gpu"]),
        "source_class": f"C/{n % 5}",
        "source_text": rng.choice(["", "gone", "ñ down"]),
        "component": component,
        "component_kind": rng.choice([None, "psu"]),
        "start_ts": 0,
        "end_ts": None,
    }
    return {
        "event_id": f"inc-{n}",
        "host_id": f"node-{n % 13}",
        "cluster": rng.choice(["c1", "trace"]),
        "ts": rng.randrange(-(2**40), 2**41),
        "payload": payload,
    }


def test_every_hardware_event_is_the_codecs_bytes() -> None:
    rng = random.Random(5)
    signals: tuple[HardwareSignal, ...] = get_args(HardwareSignal)
    incidents = [incident(n, rng) for n in range(3000)]
    records = hardware_records(incidents, {f"C/{k}": signals[k % len(signals)] for k in range(5)})
    records += hardware_records(incidents[:500], {f"C/{k}": "component_fault" for k in range(5)})
    encoder = EnvelopeEncoder(CODEC, max_payloads=20)  # some payloads cached, the rest encoded whole
    assert len({r["event_type"] for r in records}) == 4
    for record in records + records:  # the second pass from the cache
        assert encoder.encode(record) == CODEC.encode(record)


def test_a_nested_payload_goes_through_the_codec() -> None:
    record = HostInventoried(
        event_id="inv-1",
        host_id="h",
        cluster="c",
        ts=1,
        payload={
            "rack": "r",
            "fabric": "roce",
            "maintenance_domain": "d",
            "sku": "s",
            "install_ts": 1,
            "gpu_count": 8,
            "nic_ports": 8,
        },
    ).to_record()
    assert EnvelopeEncoder(CODEC).encode(record) == CODEC.encode(record)
