"""Semantic validation: believable records pass, each kind of nonsense names its reason."""

from __future__ import annotations

import math

import pytest

from streams.core.errors import InvalidRecordError
from streams.core.policy import ValidationLimits
from streams.core.validate import check
from streams.testing import START_TS
from tests.streams import factories as f

LIMITS = ValidationLimits()
NOW = START_TS + 3_600_000


def reason(record: dict) -> str:
    with pytest.raises(InvalidRecordError) as err:
        check(record, LIMITS, NOW)
    return err.value.reason


def test_good_records_pass() -> None:
    for record in (f.xid(79), f.ecc(), f.aer("correctable", gpu=None), f.link(), f.sample()):
        check(record, LIMITS, NOW)


def test_errors_naming_only_the_host_pass_and_a_lost_nic_is_a_link_kind() -> None:
    """v2 error events may leave the GPU or port null (an imported incident names only the host)."""
    for record in (f.xid(79, gpu=None), f.ecc(gpu=None), f.link("down", port=None), f.link("nic_lost")):  # type: ignore[arg-type]
        check(record, LIMITS, NOW)
    assert reason(f.link("gone")).startswith("unknown_vocabulary")


def test_clock_checks() -> None:
    assert reason(f.xid(79, ts=NOW + 11 * 60_000)).startswith("ts_in_future")
    check(f.xid(79, ts=NOW + 9 * 60_000), LIMITS, NOW)  # within max_future
    assert reason(f.xid(79, ts=5)).startswith("ts_absurd")


def test_range_checks() -> None:
    assert reason(f.xid(79, gpu=8 + LIMITS.max_gpu_index)).startswith("gpu_out_of_range")
    assert reason(f.link(count=-1)).startswith("negative_count")
    assert reason(f.link(port=999)).startswith("port_out_of_range")
    assert reason(f.ecc(memory="l2")).startswith("unknown_vocabulary")


@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0, 1e12])
def test_absurd_sample_values(value: float) -> None:
    assert reason(f.sample(step=value)).startswith("absurd_value")


def test_a_sample_without_step_time_is_believable() -> None:
    """HostSampled v2: a host no job reports from sends a null step time (v1 sent 0)."""
    from streams.core.validate import _sample_believable

    for record in (f.sample(None, job=None), f.sample(0.0, job=None)):
        check(record, LIMITS, NOW)
        assert _sample_believable(record["payload"], LIMITS)


def test_negative_gpu_counter_in_sample() -> None:
    record = f.sample()
    record["payload"]["gpus"][3]["ecc_dbe"] = -2
    assert reason(record).startswith("negative_count")


def _numeric_paths(sample: dict) -> list[tuple]:
    p = sample["payload"]
    paths: list[tuple] = [(k,) for k in ("interval_s", "step_time_ms", "bus_bw_gbps")]
    for part in ("gpus", "nics"):
        for i, item in enumerate(p[part]):
            paths += [
                (part, i, k)
                for k, v in item.items()
                if isinstance(v, int | float) and not isinstance(v, bool)
            ]
    return paths


@pytest.mark.parametrize("bad", [-1, 0, 10**12, math.nan, math.inf, -math.inf, 1e300])
def test_sample_hot_path_agrees_with_the_detailed_checks(bad: float) -> None:
    """``_sample_believable`` (the fast path) accepts exactly what ``_check_sample`` accepts."""
    from streams.core.validate import _check_sample, _sample_believable

    base = f.sample()
    assert _sample_believable(base["payload"], LIMITS)
    for path in _numeric_paths(base):
        record = f.sample()
        target = record["payload"]
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = bad
        try:
            _check_sample(record, record["payload"], LIMITS)
            detailed = True
        except InvalidRecordError:
            detailed = False
        assert _sample_believable(record["payload"], LIMITS) == detailed, path


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("host_id", "h" * 129),
        ("host_id", "c0-h[/]01"),
        ("host_id", "c0 h01"),
        ("host_id", "c0-h01\n"),
        ("host_id", "ĥost-01"),
        ("host_id", "-leading-dash"),
        ("cluster", "c" * 5000),
        ("cluster", '{job="x"}'),
        ("cluster", ""),
    ],
)
def test_host_and_cluster_ids_have_length_and_character_rules(field: str, value: str) -> None:
    record = {**f.xid(79), field: value}
    why = reason(record)
    assert why.startswith((f"malformed_{field}", f"missing_{field}")), why
    assert len(why) < 200  # the forged value is not echoed in full


@pytest.mark.parametrize(
    "host", ["c0-h0001", "gpu-node-001.rack7.dc2.example.com", "GB200_nvl72:tray3", "k8s/node-a@pool", "-"]
)
def test_real_world_host_ids_pass(host: str) -> None:
    check({**f.xid(79), "host_id": host, "cluster": "c0"}, LIMITS, NOW)
