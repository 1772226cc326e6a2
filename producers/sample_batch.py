"""HostSampled batches held as columns: records, Avro bytes and Arrow tables straight from numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from producers.avro_columns import NULL_INT, PAYLOAD_ORDER, Field, SampleEncoder
from producers.batches import cached_schema
from producers.fleet import Fleet
from producers.samples import GPU_FIELDS, NIC_FIELDS
from schemas import Codec, HostSampled


class SampleBatch:
    """HostSampled events of one tick, held as columns."""

    EVENT_TYPE = "HostSampled"

    def __init__(
        self,
        *,
        fleet: Fleet,
        run_id: str,
        hosts: np.ndarray,
        seq: np.ndarray,
        ts: np.ndarray,
        interval_s: int,
        columns: dict[str, np.ndarray],
        job_names: list[str],
        encoder: SampleEncoder | None = None,
    ) -> None:
        """``columns["job"]`` indexes ``job_names`` (-1: the host idles, no job)."""
        self.fleet, self.run_id, self.hosts, self.seq, self.ts = fleet, run_id, hosts, seq, ts
        self.interval_s = interval_s
        self.columns = columns
        self.job_names = job_names
        self.encoder = encoder

    def __len__(self) -> int:
        return len(self.hosts)

    @property
    def event_times(self) -> np.ndarray:
        return self.ts

    def event_types(self) -> list[str]:
        return [self.EVENT_TYPE] * len(self)

    def host_ids(self) -> list[str]:
        ids = self.fleet.host_id
        return [ids[i] for i in self.hosts.tolist()]

    def keys(self) -> list[bytes]:
        return [h.encode() for h in self.host_ids()]

    def envelope(self) -> dict[str, list[Any]]:
        hosts = self.host_ids()
        names = self.fleet.cluster_names
        return {
            "event_id": [f"{self.run_id}-{h}-{s}" for h, s in zip(hosts, self.seq.tolist(), strict=True)],
            "host_id": hosts,
            "cluster": [names[c] for c in self.fleet.cluster[self.hosts].tolist()],
            "ts": self.ts.tolist(),
            "agent_seq": self.seq.tolist(),
        }

    def job_ids(self) -> list[str | None]:
        names = self.job_names
        return [names[j] if j >= 0 else None for j in self.columns["job"].tolist()]

    def records(self) -> list[dict[str, Any]]:
        env = self.envelope()
        c = {k: _pylist(v) for k, v in self.columns.items()}
        jobs = self.job_ids()
        out = []
        for i in range(len(self)):
            gpus = [
                dict(zip(GPU_FIELDS, vals, strict=True))
                for vals in zip(*(c[f][i] for f in GPU_FIELDS), strict=True)
            ]
            nics = [
                dict(zip(NIC_FIELDS, vals, strict=True))
                for vals in zip(*(c[f][i] for f in NIC_FIELDS), strict=True)
            ]
            out.append(
                {
                    "event_id": env["event_id"][i],
                    "event_type": self.EVENT_TYPE,
                    "schema_version": HostSampled.SCHEMA_VERSION,
                    "host_id": env["host_id"][i],
                    "cluster": env["cluster"][i],
                    "ts": env["ts"][i],
                    "agent_seq": env["agent_seq"][i],
                    "payload": {
                        "interval_s": self.interval_s,
                        "job_id": jobs[i],
                        "step_time_ms": c["step_time_ms"][i],
                        "bus_bw_gbps": c["bus_bw_gbps"][i],
                        "gpus": gpus,
                        "nics": nics,
                    },
                }
            )
        return out

    def encode(self, codec: Codec) -> list[bytes]:
        if self.encoder is None or self.encoder.header[1:] != codec.schema_id(self.EVENT_TYPE).to_bytes(
            4, "big"
        ):
            return [codec.encode(r) for r in self.records()]
        return self.encoder.encode(self.hosts, self.seq, self.ts, self.interval_s, self.columns)

    def tables(self) -> dict[str, pa.Table]:
        return {self.EVENT_TYPE: sample_table(self)}

    def take(self, index: np.ndarray) -> SampleBatch:
        return SampleBatch(
            fleet=self.fleet,
            run_id=self.run_id,
            hosts=self.hosts[index],
            seq=self.seq[index],
            ts=self.ts[index],
            interval_s=self.interval_s,
            columns={k: v[index] for k, v in self.columns.items()},
            job_names=self.job_names,
            encoder=self.encoder,
        )


def sample_encoder(
    fleet: Fleet, run_id: str, job_names: list[str], codec: Codec | None = None
) -> SampleEncoder | None:
    """The column-wise encoder for this fleet, or None if the schema is not the shape it knows."""
    schema = cached_schema(SampleBatch.EVENT_TYPE)
    payload = tuple(schema.names[7:])
    if payload != PAYLOAD_ORDER:
        return None
    items = {}
    for name in ("gpus", "nics"):
        struct_type = schema.field(name).type.value_type
        items[name] = {f.name: _how(f) for f in struct_type}
    if tuple(items["gpus"]) != GPU_FIELDS or tuple(items["nics"]) != NIC_FIELDS:
        return None
    names = fleet.cluster_names
    codec = codec or Codec()
    return SampleEncoder(
        host_ids=fleet.host_id,
        clusters=[names[c] for c in fleet.cluster.tolist()],
        job_ids=job_names,
        run_id=run_id,
        schema_id=codec.schema_id(SampleBatch.EVENT_TYPE),
        schema_version=codec.registry.latest(SampleBatch.EVENT_TYPE).version,
        scalar_fields={f: _how(schema.field(f)) for f in ("step_time_ms", "bus_bw_gbps")},
        gpu_fields=items["gpus"],
        nic_fields=items["nics"],
    )


def _how(field: pa.Field) -> Field:
    return Field(pa.types.is_floating(field.type), field.nullable)


def _pylist(values: np.ndarray) -> list[Any]:
    """Python values of a column, None where it holds null (NaN, ``NULL_INT``)."""
    is_null = np.isnan(values) if values.dtype.kind == "f" else values == NULL_INT
    out: list[Any] = values.tolist()
    if is_null.any():
        for index in zip(*np.nonzero(is_null), strict=True):
            row: Any = out
            for i in index[:-1]:
                row = row[i]
            row[index[-1]] = None
    return out


def _list_of_structs(batch: SampleBatch, names: tuple[str, ...], field: pa.Field) -> pa.Array:
    struct_type = field.type.value_type
    n, g = batch.columns[names[0]].shape
    children = [
        _array(np.ascontiguousarray(batch.columns[name]).reshape(-1), struct_type.field(name))
        for name in names
    ]
    values = pa.StructArray.from_arrays(children, fields=list(struct_type))
    offsets = pa.array(np.arange(0, (n + 1) * g, g, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, values, type=field.type)


def sample_table(batch: SampleBatch) -> pa.Table:
    """The flat lake table of a sample batch, built from the columns (same as ``schemas.arrow.to_table``)."""
    schema = cached_schema(batch.EVENT_TYPE)
    env = batch.envelope()
    n = len(batch)
    data: dict[str, Any] = {
        **env,
        "event_type": [batch.EVENT_TYPE] * n,
        "schema_version": np.full(n, HostSampled.SCHEMA_VERSION, dtype=np.int32),
        "interval_s": np.full(n, batch.interval_s, dtype=np.int32),
        "job_id": batch.job_ids(),
        "step_time_ms": batch.columns["step_time_ms"],
        "bus_bw_gbps": batch.columns["bus_bw_gbps"],
    }
    arrays = []
    for field in schema:
        if field.name == "gpus":
            arrays.append(_list_of_structs(batch, GPU_FIELDS, field))
        elif field.name == "nics":
            arrays.append(_list_of_structs(batch, NIC_FIELDS, field))
        elif isinstance(data[field.name], np.ndarray):
            arrays.append(_array(data[field.name], field))
        else:
            arrays.append(pa.array(data[field.name], type=field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _array(values: np.ndarray, field: pa.Field) -> pa.Array:
    """A column as Arrow, its nulls (NaN, ``NULL_INT``) as Arrow nulls where the field is nullable."""
    if not field.nullable:
        return pa.array(values, type=field.type)
    is_null = np.isnan(values) if values.dtype.kind == "f" else values == NULL_INT
    return pa.array(values, type=field.type, mask=is_null if is_null.any() else None)
