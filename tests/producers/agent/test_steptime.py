from __future__ import annotations

import time

from producers.agent.client import report_step
from producers.agent.collector import Problems
from producers.agent.steptime import StepTimeServer


def test_reports_become_the_window_mean() -> None:
    problems = Problems()
    server = StepTimeServer("127.0.0.1", 0, problems)
    try:
        assert server.window() == (None, None)  # nobody reporting: no step time
        assert report_step(100.0, "job-7", address=server.address)
        assert report_step(300.0, address=server.address)
        server.sock.sendto(b"not-a-number", server.address)
        server.sock.sendto(b"-5", server.address)
        time.sleep(0.05)
        assert server.window() == (200.0, "job-7")
        assert server.window() == (None, None)
        assert problems.counts[("step_time", "garbled_report")] == 1
        assert problems.counts[("step_time", "absurd_step_time")] == 1
    finally:
        server.close()


def test_reporting_with_no_agent_never_raises() -> None:
    assert report_step(12.5, address=("127.0.0.1", 9)) in (True, False)
