"""The twin's hosts report their pace as the simulator's agents do: one HostSampled per host in service.

Columns from ``producers.samples.SampleModel`` (a slow host's samples are slow until its repair cures
it), wrapped in the agents' envelopes (``Envelopes``: the hosts' own sequence numbers).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from fleetpulse.twin.records import Envelopes, Record
from producers.sample_batch import SampleBatch
from producers.samples import SampleModel, TickEffects


def sample_records(
    env: Envelopes, model: SampleModel, ts: int, interval_ms: int, hosts: np.ndarray, tick: int
) -> Iterator[Record]:
    """The HostSampled records of ``hosts`` at ``ts`` (sample ``tick`` of the run), in host order."""
    f = env.fleet
    interval_s = interval_ms // 1000
    g = f.config.gpus_per_host
    cols = model.columns(
        ts,
        interval_s,
        hosts,
        TickEffects.zeros(f.n_hosts, g),
        np.zeros((f.n_hosts, g), np.int64),
        tick,
    )
    for h in hosts.tolist():
        env.seq[h] += 1
    seq = np.array([env.seq[h] for h in hosts.tolist()], dtype=np.int64)
    batch = SampleBatch(
        fleet=f,
        run_id=env.run_id,
        hosts=hosts,
        seq=seq,
        ts=np.full(len(hosts), ts, dtype=np.int64),
        interval_s=interval_s,
        columns=cols,
        job_names=model.jobs.ids,
    )
    yield from batch.records()
