"""A fetched batch of HostSampled values decoded column-wise: the samples stage's hot path.

``Codec.decode`` builds a dict per record and one per GPU and NIC; that was most of a worker's CPU.
Here every record of a batch is read at once with NumPy, their positions advancing in lockstep field
by field (``schemas.columns``, the decoder the lake archiver uses too), and only what the host windows
fold becomes Python values (``SampleColumns``).

No rule is written twice. A row is taken here only when its bytes decode exactly as ``Codec.decode``
decodes them (the column decoder's ``ok``), its strings are ASCII, its numbers lie in ``sample_bounds`` (the table
``_sample_believable`` reads) and ``check_envelope`` passes it; ``sample_degraded`` and
``job_step_time`` are called as they are. Every other row goes the per-record way
(``decode_checked``), which decodes it or dead-letters it with its reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ground.degraded import DEGRADED, sample_degraded
from schemas import Codec
from schemas.columns import Columns, SubjectReader, UnsupportedSchemaError, items_mask
from schemas.events import job_step_time
from streams.core.errors import InvalidRecordError
from streams.core.policy import ValidationLimits
from streams.core.samples.columns import SampleColumns
from streams.core.samples.folder import FetchedBatch, SampleFolder
from streams.core.validate import check_envelope, sample_bounds

EVENT_TYPE = "HostSampled"
# Reading a batch column-wise costs ~4 ms however few rows it has (NumPy calls per field): below this
# many values (a caught-up worker's small fetches) each is decoded on its own, which is cheaper there.
MIN_ROWS = 128
# the GPU fields ``sample_degraded`` reads (its table, ``DEGRADED``: a test holds them equal), written out
# because ``_degraded_inputs`` builds their dicts as literals, 4× faster than from names on the hot path
DEGRADED_GPU = (
    "pcie_link_gen",
    "pcie_link_gen_max",
    "pcie_link_width",
    "pcie_link_width_max",
    "throttle_reasons",
)
DEGRADED_NIC = DEGRADED.port.field


@dataclass
class WireBatch:
    """What a batch decoded column-wise: ``row[i]`` is message ``i``'s row in the columns, or -1 (per record)."""

    row: list[int]
    columns: SampleColumns

    def take(self, rows: Sequence[int]) -> SampleColumns:
        """The columns of these rows, in this order."""
        c = self.columns
        return SampleColumns(
            *([col[i] for i in rows] for col in (getattr(c, f) for f in c.__struct_fields__))
        )


class SampleWire:
    """Decodes and checks HostSampled values column-wise with ``codec``'s latest schema and ``limits``."""

    def __init__(self, codec: Codec, limits: ValidationLimits) -> None:
        self.limits = limits
        try:
            self.reader: SubjectReader | None = SubjectReader(codec.registry.latest(EVENT_TYPE))
        except UnsupportedSchemaError:
            self.reader = None
        self._text: dict[bytes, str] = {}

    def decode(self, values: Sequence[bytes | None], now_ms: int) -> WireBatch:
        n = len(values)
        if self.reader is None or n < MIN_ROWS:
            return WireBatch([-1] * n, SampleColumns.of_records(()))
        columns = self.reader.read(values)
        ok = columns.ok & columns.ascii & self._believable(columns)
        return self._columns(columns, ok, now_ms)

    def _believable(self, columns: Columns) -> np.ndarray:
        """Rows whose numbers are in ``sample_bounds`` (compared as the doubles ``Codec.decode`` returns)."""
        top, items = columns.top, columns.items
        ok = np.ones(len(columns), dtype=bool)
        bounds = sample_bounds(self.limits)
        for name, low, high in bounds.top:
            values, present = top[f"payload.{name}"]
            values = _double(values)
            inside = (values >= low) & (values <= high)
            ok &= (inside & present) | (~present & (name in bounds.nullable))
        for array, table in (("payload.gpus", bounds.gpus), ("payload.nics", bounds.nics)):
            count, leaves = items[array]
            for name, low, high in table:
                values, present = leaves[name]
                values = _double(values)
                ok &= (
                    (values >= low) & (values <= high) & present | ~items_mask(count, values.shape[1])
                ).all(1)
        return ok

    def _text_of(
        self, raw: bytes, field: tuple[tuple[np.ndarray, np.ndarray], np.ndarray], rows: Sequence[int]
    ) -> list[str | None]:
        """The field's text in each of ``rows`` (ASCII: ``_believable`` has checked), None where it is null."""
        (starts, lengths), present = field
        start, length, there = starts.tolist(), lengths.tolist(), present.tolist()
        seen = self._text
        out: list[str | None] = []
        for i in rows:
            if not there[i]:
                out.append(None)
                continue
            key = raw[start[i] : start[i] + length[i]]
            text = seen.get(key)
            if text is None:
                if len(seen) > 1 << 16:
                    seen.clear()
                text = seen[key] = key.decode("ascii")
            out.append(text)
        return out

    def _columns(self, columns: Columns, ok: np.ndarray, now_ms: int) -> WireBatch:
        top = columns.top
        rows = np.flatnonzero(ok).tolist()
        ts = top["ts"][0].tolist()
        seq = top["agent_seq"][0].tolist()
        hosts, clusters, jobs = (
            self._text_of(columns.raw, top[name], rows) for name in ("host_id", "cluster", "payload.job_id")
        )
        step, step_present = top["payload.step_time_ms"]
        step_l, step_present_l = step.tolist(), step_present.tolist()
        interval = top["payload.interval_s"][0].tolist()
        bus_bw = top["payload.bus_bw_gbps"][0].tolist()
        gpus, nics = self._degraded_inputs(columns.items)
        taken: list[int] = []
        cols: list[list[Any]] = [[] for _ in range(8)]
        row = [-1] * len(ok)
        for j, i in enumerate(rows):
            host, cluster = hosts[j], clusters[j]
            envelope = {
                "event_type": EVENT_TYPE,
                "ts": ts[i],
                "host_id": host,
                "cluster": cluster,
                "agent_seq": seq[i],
            }
            try:
                check_envelope(envelope, self.limits, now_ms)
            except InvalidRecordError:
                continue  # the per-record way says why
            step_ms = job_step_time(step_l[i] if step_present_l[i] else None)
            degraded = step_ms is not None and sample_degraded(gpus(i), nics(i))
            values = (ts[i], host, cluster, interval[i], jobs[j], step_ms, bus_bw[i], degraded)
            for col, value in zip(cols, values, strict=True):
                col.append(value)
            row[i] = len(taken)
            taken.append(i)
        return WireBatch(row, SampleColumns(*cols))

    @staticmethod
    def _degraded_inputs(items: dict[str, Any]) -> tuple[Any, Any]:
        """Per row, the GPUs' and NICs' fields ``sample_degraded`` reads, as the mappings it takes."""
        gpu_count, gpu = items["payload.gpus"]
        nic_count, nic = items["payload.nics"]
        gpu_counts, nic_counts = gpu_count.tolist(), nic_count.tolist()
        gpu_cols = [_nullable_list(*gpu[name]) for name in DEGRADED_GPU]
        rx = _nullable_list(*nic[DEGRADED_NIC])

        def gpus(i: int) -> list[dict[str, Any]]:
            n = gpu_counts[i]
            return [
                {
                    "pcie_link_gen": a,
                    "pcie_link_gen_max": b,
                    "pcie_link_width": c,
                    "pcie_link_width_max": d,
                    "throttle_reasons": e,
                }
                for a, b, c, d, e in zip(*(col[i][:n] for col in gpu_cols), strict=True)
            ]

        def nics(i: int) -> list[dict[str, Any]]:
            return [{DEGRADED_NIC: v} for v in rx[i][: nic_counts[i]]]

        return gpus, nics


def _double(values: np.ndarray) -> np.ndarray:
    """A float column as doubles: a float32 against a Python bound would be compared in float32."""
    return values.astype(np.float64) if values.dtype == np.float32 else values


def _nullable_list(values: np.ndarray, present: np.ndarray) -> list[list[Any]]:
    out = _double(values).astype(object)  # Python numbers, as Codec.decode returns them
    out[~present] = None
    return out.tolist()


class WireFold:
    """A fetched batch fed in its order: rows decoded column-wise, and records taken one by one."""

    def __init__(self, folder: SampleFolder, batch: FetchedBatch, wire: WireBatch) -> None:
        self.folder, self.batch, self.wire = folder, batch, wire
        self._run: list[int] = []  # rows of ``wire`` not folded yet, in order

    def add_row(self, row: int) -> None:
        if not self._run:
            self.batch.fold()  # the records taken one by one before it go first
        self._run.append(row)

    def add(self, record: dict[str, Any]) -> None:
        self._fold_run()
        self.batch.add(record)

    def fold(self) -> None:
        """Fold everything held so far."""
        self._fold_run()
        self.batch.fold()

    def _fold_run(self) -> None:
        if not self._run:
            return
        batch = self.batch
        out, late = self.folder.fold_columns(batch.state, self.wire.take(self._run), batch.now_ms)
        self._run = []
        batch.late += late
        for msg in out:
            batch.bundles.setdefault(msg.cluster, []).append(msg)
