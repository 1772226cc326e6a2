"""A healthy fleet of many paces and many small jobs raises no slow-host finding in 30 days of windows."""

from __future__ import annotations

import random

from ground.slow_peers import Member
from streams.core.findings import Finding
from streams.core.peers.scores import evaluate_window, update_history
from streams.core.peers.state import HostHistory
from streams.core.policy import SlowHostPolicy

WINDOW = 300_000
DAYS = 30
SIZES = (12, 8, 6, 4, 3, 3, 2, 2, 2, 1, 1)  # jobs of 1-3 hosts: a third of the jobs


def test_a_healthy_fleet_of_many_paces_gives_no_finding_in_thirty_days() -> None:
    """The detector's own window test and evidence over windows (``evaluate_window``, ``update_history``, what
    the cluster stage runs when a window closes) over 8,640 five-minute windows of 44 healthy hosts:
    jobs at paces ×0.6–×1.8 that change every few days, persistent host offsets (sd 0.3 %) and window
    noise as the simulator draws them (1 % per 10 s sample, averaged over a window of 60 s samples)."""
    rng = random.Random(41)
    policy = SlowHostPolicy()
    hosts = [f"h{i:02d}" for i in range(sum(SIZES))]
    offset = {h: rng.gauss(0, 0.003) for h in hosts}
    noise = 0.01 * (10 / 60) ** 0.5 / 5**0.5
    histories: dict[str, HostHistory] = {}
    findings: list[Finding] = []
    judged = 0
    for w in range(DAYS * 24 * 12):
        if w % (3 * 24 * 12) == 0:  # new jobs every 3 days: hosts reshuffled, new paces
            rng.shuffle(hosts)
            jobs, k = {}, 0
            for j, size in enumerate(SIZES):
                pace = rng.uniform(0.6, 1.8)
                jobs |= {h: (f"job-{w}-{j}", pace) for h in hosts[k : k + size]}
                k += size
        members: dict[str, Member] = {
            h: (
                1000.0 * pace * (1 + offset[h]) * (1 + rng.gauss(0, noise)),
                380.0 / pace * (1 - 0.5 * offset[h]) * (1 + rng.gauss(0, noise)),
                job,
            )
            for h, (job, pace) in jobs.items()
        }
        verdicts = evaluate_window(members, w * WINDOW, (w + 1) * WINDOW, policy)
        judged += len(verdicts)
        for v in verdicts:
            histories[v.host_id], finding = update_history(histories.get(v.host_id), v, "c0", policy)
            if finding is not None:
                findings.append(finding)
    assert judged >= 0.9 * 8_640 * (len(hosts) - 2)  # every host but the two alone in a job, every window
    assert findings == []


def test_an_intermittent_three_percent_host_at_duty_point_four_is_found_within_two_windows_of_an_episode() -> (
    None
):
    """3 % slower in 30-minute episodes, each on with probability 0.4, in a 12-host job among jobs at other
    paces: 2 slow windows of 5 minutes give 2 x 8.01 nats of evidence, so the finding comes at the end of the
    second window of its first slow episode, and no other host is flagged."""
    rng = random.Random(8)
    policy = SlowHostPolicy()
    jobs = {f"a{i:02d}": ("job-a", 1.0) for i in range(12)} | {f"b{i}": ("job-b", 1.5) for i in range(6)}
    offset = {h: rng.gauss(0, 0.003) for h in jobs}
    noise = 0.01 * (10 / 60) ** 0.5 / 5**0.5
    episodes = [rng.random() < 0.4 for _ in range(2 * 24 * 2)]  # two days of 30-minute episodes
    first_on = episodes.index(True) * 6  # in windows
    histories: dict[str, HostHistory] = {}
    findings: list[Finding] = []
    for w in range(2 * 24 * 12):
        slow = episodes[w // 6]
        members: dict[str, Member] = {
            h: (
                1000.0
                * pace
                * (1 + offset[h])
                * (1.03 if h == "a05" and slow else 1.0)
                * (1 + rng.gauss(0, noise)),
                380.0 * (1 + rng.gauss(0, noise)),
                job,
            )
            for h, (job, pace) in jobs.items()
        }
        for v in evaluate_window(members, w * WINDOW, (w + 1) * WINDOW, policy):
            histories[v.host_id], finding = update_history(histories.get(v.host_id), v, "c0", policy)
            if finding is not None:
                findings.append(finding)
    assert [x.host_id for x in findings[:1]] == ["a05"] and {x.host_id for x in findings} == {"a05"}
    assert findings[0].ts == (first_on + policy.sequential.windows_to_flag()) * WINDOW  # its 2nd slow window
