"""``fleetpulse score --findings-from kafka`` reads a findings topic from the beginning to its end offsets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from kafka import KafkaProducer
from typer.testing import CliRunner

from fleetpulse.evaluation.sources import findings_from_kafka
from schemas import Codec
from tests.conftest import KafkaCluster, unique_topic_name
from tests.fleetpulse.evaluation.test_detection import FINDINGS, write_truth_and_lake

pytestmark = pytest.mark.integration


def test_score_from_a_findings_topic(
    kafka: KafkaCluster, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    topic = topic_factory("findings", partitions=3)
    codec = Codec()
    producer = KafkaProducer(**kafka.settings.kafka.kafka_python(kafka.bootstrap_servers), acks="all")
    for f in FINDINGS:
        producer.send(topic, key=f.host_id.encode(), value=codec.encode(f.to_record()))
    producer.send(topic, key=b"x", value=b"garbage")  # not a finding: skipped, not fatal
    producer.flush(30)
    producer.close()

    frame = findings_from_kafka(kafka.settings, topic, timeout_s=30)
    assert frame.height == len(FINDINGS)
    assert sorted(frame["finding_id"].to_list()) == sorted(f.finding_id for f in FINDINGS)

    from fleetpulse.cli import app

    truth, _ = write_truth_and_lake(tmp_path)
    out = tmp_path / "score.json"
    result = CliRunner().invoke(
        app,
        [
            "score",
            "--truth",
            str(truth),
            "--topic",
            topic,
            "--json",
            str(out),
            "--window-s",
            "300",
            "--slow-k",
            "3",
            "--rule",
            "link_flap=3/24h",
        ],
        env={"FLEETPULSE_KAFKA__BOOTSTRAP_SERVERS": kafka.bootstrap_servers},
    )
    assert result.exit_code == 0, result.output
    assert '"tp": 3' in out.read_text()


def test_missing_topic_is_a_clear_error(kafka: KafkaCluster) -> None:
    from fleetpulse.evaluation.detection import ScoringError

    with pytest.raises(ScoringError, match="does not exist"):
        findings_from_kafka(kafka.settings, unique_topic_name("no-such-findings"), timeout_s=5)
