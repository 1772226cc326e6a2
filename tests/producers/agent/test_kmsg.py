from __future__ import annotations

import pytest

from producers.agent.kmsg import classify_line, parse_kmsg, pci_bus
from tests.producers.agent.conftest import corpus


@pytest.mark.parametrize(("expected", "line"), corpus())
def test_every_corpus_line_parses_as_expected(expected: str, line: str) -> None:
    record = parse_kmsg(line)
    assert record is not None
    event = classify_line(record.message)
    if expected == "none":
        assert event is None
        return
    assert event is not None
    kind, *rest = expected.split()
    assert event.kind == kind
    if rest:
        assert event.bus == rest[0]
        assert event.code == int(rest[1])


def test_xid_message_drops_pid_and_name() -> None:
    ev = classify_line(
        "NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, Ch 00000008, errorString X"
    )
    assert ev is not None and ev.text == "Ch 00000008, errorString X"
    ev = classify_line(
        "NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    )
    assert ev is not None and ev.text == "GPU has fallen off the bus."


def test_kmsg_framing() -> None:
    assert parse_kmsg("6,42,123456,-;hello") == (42, 123456, "hello")
    assert parse_kmsg("6,42,123456,-,caller=T1;hello") == (42, 123456, "hello")
    assert parse_kmsg(" SUBSYSTEM=pci") is None  # continuation line
    assert parse_kmsg("garbage without header") is None
    assert parse_kmsg("6,x,123,-;bad seq") is None
    assert parse_kmsg("6,1;short") is None


def test_pci_bus_forms_agree() -> None:
    assert pci_bus("00000000:91:00.0") == pci_bus("0000:91:00") == pci_bus("91:00.0") == "0000:91:00.0"


def test_sxid_aer_and_link_details() -> None:
    aer = classify_line(
        "nvidia 0000:91:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (x)"
    )
    assert aer is not None and aer.text == "nonfatal:transaction_layer"
    link = classify_line("mlx5_core 0000:1a:00.0 ibp26s0: Link down")
    assert link is not None and link.text == "down"
