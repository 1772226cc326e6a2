"""The first-order model of effective training time, to check the twin against.

ETTR ≈ 1 − t_save/Δt − (Δt/2 + t_restart)/MTTF_job: a save every Δt costs t_save, and each
interruption (one per MTTF_job of wall time) throws away half an interval on average and pays the
restart. It is Young's (1974) and Daly's (2006) first-order waste model, the form Kokolis et al.
("Revisiting Reliability in Large-Scale ML Research Clusters", HPCA 2025) use for the Effective
Training Time Ratio. Valid while Δt and t_restart are small against MTTF_job.
"""

from __future__ import annotations


def ettr_first_order(interval_h: float, save_h: float, restart_h: float, mttf_job_h: float) -> float:
    """Expected ETTR of a job that saves every ``interval_h`` and fails every ``mttf_job_h`` on average."""
    if interval_h <= 0 or mttf_job_h <= 0:
        raise ValueError("interval and MTTF must be > 0")
    return 1.0 - save_h / interval_h - (interval_h / 2.0 + restart_h) / mttf_job_h
