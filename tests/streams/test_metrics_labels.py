"""Cluster names become a metrics label: their number is bounded, whatever the events say."""

from __future__ import annotations

from streams.metrics import MAX_CLUSTER_LABELS, OTHER_CLUSTERS, DetectMetrics


def test_cluster_label_values_are_bounded() -> None:
    metrics = DetectMetrics()
    for i in range(MAX_CLUSTER_LABELS + 1000):
        metrics.windows_closed(f"forged-{i}", 1)
    metrics.windows_closed("forged-0", 1)  # a known cluster keeps its own series
    series = {
        s.labels["cluster"]: s.value
        for family in metrics.registry.collect()
        if family.name == "fleetpulse_detect_windows_closed"
        for s in family.samples
        if s.name.endswith("_total")
    }
    assert len(series) == MAX_CLUSTER_LABELS + 1
    assert series[OTHER_CLUSTERS] == 1000 and series["forged-0"] == 2
