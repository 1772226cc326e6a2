"""Benchmark the host agent (not a test): kernel-log parsing speed against a plain ``re`` loop, and the
CPU and memory of one agent over a fixture host with 8 GPUs (fake NVML) and 8 InfiniBand ports.

    .venv/bin/python bench/bench_agent.py                  # parsing + a 60 s agent run
    .venv/bin/python bench/bench_agent.py --run-s 20       # a shorter agent run

The agent run polls NIC and AER every second and GPUs every 10 s, as the defaults do, in a child
process measured alone (CPU time / wall time and peak RSS); its sender acknowledges without a broker,
so the figures are the agent's own cost, not Kafka's (the Kafka sink's import cost is measured apart).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from producers.agent.collector import Problems  # noqa: E402
from producers.agent.kmsg import classify_line, parse_kmsg  # noqa: E402
from producers.agent.testing import GPU_BUSES  # noqa: E402

STORM = [
    "3,{seq},{ts},-;NVRM: Xid (PCI:0000:{bus:02x}:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    "3,{seq},{ts},-;NVRM: Xid (PCI:0000:{bus:02x}:00): 109, pid=1797828, name=pt_main_thread, Ch 00000008, "
    "errorString CTX SWITCH TIMEOUT, Info 0x58005",
    "3,{seq},{ts},-;NVRM: Xid (PCI:0000:{bus:02x}:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x0 0x0)",
]
NOISE = [
    "6,{seq},{ts},-;EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Quota mode: none.",
    "6,{seq},{ts},-;IPv6: ADDRCONF(NETDEV_CHANGE): ib{bus}: link becomes ready",
    '4,{seq},{ts},-;audit: type=1400 audit({ts}.123:42): apparmor="DENIED" operation="open" profile="snap"',
]
GPUD_XID = re.compile(r"NVRM: Xid.*?: (\d+),")  # the regex gpud runs over each kernel-log line
# one regex taking the same fields the agent takes from an XID record (sequence, stamp, bus, code, text)
SAME_FIELDS = re.compile(
    r"\d+,(\d+),(\d+),[^;]*;.*?NVRM: Xid \((?:PCI:)?([0-9a-fA-F:]+)(?:\.\d)?\): (\d+),?\s*(.*)"
)


def lines_of(kind: str, n: int) -> list[str]:
    templates = STORM if kind == "storm" else NOISE * 3 + STORM[:1]  # mixed: 1 line in 10 is an XID
    buses = [int(b.split(":")[1], 16) for b in GPU_BUSES]
    return [templates[i % len(templates)].format(seq=i + 1, ts=i * 1000, bus=buses[i % 8]) for i in range(n)]


def plain_re(lines: list[str]) -> int:
    found = 0
    for line in lines:
        m = GPUD_XID.search(line)
        if m is not None:
            int(m.group(1))
            found += 1
    return found


def plain_re_same_fields(lines: list[str]) -> int:
    found = 0
    for line in lines:
        m = SAME_FIELDS.match(line)
        if m is not None:
            int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4)), m.group(5)
            found += 1
    return found


def agent_parser(lines: list[str]) -> int:
    found = 0
    for line in lines:
        record = parse_kmsg(line)
        if record is not None and classify_line(record.message) is not None:
            found += 1
    return found


def rate(fn: Any, lines: list[str], repeat: int = 5) -> tuple[float, int]:
    best = float("inf")
    found = 0
    for _ in range(repeat):
        start = time.process_time()  # CPU time: the shared machine's load does not count against either side
        found = fn(lines)
        best = min(best, time.process_time() - start)
    return len(lines) / best, found


def follower_rate(lines: list[str]) -> float:
    """The whole kernel-log collector reading a kmsg-format file: framing, parsing, mapping, facts."""
    from ground.settings.agent import KernelLogSettings
    from producers.agent.kernel_log import KernelLogCollector
    from producers.agent.units import Units

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kmsg"
        path.write_text("\n".join(lines) + "\n")
        units = Units()
        units.set_gpus(list(GPU_BUSES))
        c = KernelLogCollector(
            KernelLogSettings(kmsg_path=path, boot_id_path=path), units, Problems(), boot_time=lambda: 0
        )
        start = time.process_time()
        obs = c.collect(0)
        elapsed = time.process_time() - start
        c.close()
    assert obs.facts or not any("Xid" in x for x in lines)
    return len(lines) / elapsed


def child(run_s: float) -> None:
    """The measured agent: a fixture host, fake NVML, an acknowledging sink; prints its usage as JSON."""
    from ground.settings import Settings
    from producers.agent.service import serve
    from producers.agent.testing import FixtureHost, fake_pynvml

    class AckSink:
        sent = acked = failed = 0

        def write(self, batch: Any) -> None:
            self.sent += len(batch)
            self.acked += len(batch)

        def flush(self, timeout_s: float | None = None) -> None:
            return None

        def close(self) -> None:
            return None

    with tempfile.TemporaryDirectory() as tmp:
        host = FixtureHost(Path(tmp) / "host")
        agent = host.agent_settings(Path(tmp) / "state", nvml={"enabled": True})
        settings = Settings.load().model_copy(update={"agent": agent})
        deadline = time.monotonic() + run_s
        cpu0, wall0 = time.process_time(), time.monotonic()
        summary = serve(
            settings, lambda: time.monotonic() > deadline, sink_factory=AckSink, nvml=fake_pynvml()
        )
        cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    rss_mb = peak_rss_mb()
    print(
        json.dumps(
            {"cpu_pct": 100 * cpu / wall, "rss_mb": rss_mb, "wall_s": wall, "events": summary["emitted"]}
        )
    )


def peak_rss_mb() -> float:
    """This process image's peak RSS (VmHWM): ru_maxrss would include the forking parent's, kept across exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def sink_import_rss() -> float:
    code = "import producers.sinks.kafka, bench.bench_agent as b; print(b.peak_rss_mb())"
    return float(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--run-s", type=float, default=60.0)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.run_s)
        return
    print(
        f"# host agent benchmark ({platform.processor() or platform.machine()}, Python {platform.python_version()})"
    )
    print(
        "\n| lines per CPU second | agent parser | `re` loop, gpud's regex (code only) | agent / it "
        "| `re` loop, one regex for the same fields | agent / it |\n|---|---|---|---|---|---|"
    )
    for kind in ("storm", "mixed"):
        lines = lines_of(kind, args.lines)
        ours, found = rate(agent_parser, lines)
        gpud, gpud_found = rate(plain_re, lines)
        same, same_found = rate(plain_re_same_fields, lines)
        assert found == gpud_found == same_found, (found, gpud_found, same_found)
        print(
            f"| {kind}: {len(lines):,} lines, {found:,} XIDs | {ours:,.0f} | {gpud:,.0f} | {ours / gpud:.2f} "
            f"| {same:,.0f} | {ours / same:.2f} |"
        )
    storm = lines_of("storm", args.lines)
    print(
        f"\nwhole kernel-log collector reading an XID storm from a kmsg-format file (framing, parsing, "
        f"GPU mapping, facts): {follower_rate(storm):,.0f} lines per CPU second"
    )
    out = subprocess.run(
        [sys.executable, __file__, "--child", "--run-s", str(args.run_s)],
        capture_output=True,
        text=True,
        check=True,
    )
    usage = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"\nagent over a fixture host (8 GPUs via fake NVML every 10 s, 8 IB ports and AER every 1 s), "
        f"{usage['wall_s']:.0f} s: CPU {usage['cpu_pct']:.2f} % of one core, peak RSS {usage['rss_mb']:.1f} MB, "
        f"{usage['events']} events"
    )
    print(f"RSS after importing the Kafka sink package (producers.sinks.kafka): {sink_import_rss():.1f} MB")


if __name__ == "__main__":
    main()
