"""Quality gates: great-expectations suites per lake table, run on every archiver batch and on demand."""

from analytics.quality.gate import FailedExpectation, QualityGate, ValidationOutcome, validate_batch
from analytics.quality.suites import SUITES_DIR, SuiteSpec, load_suite, suite_tables
from analytics.quality.view import pandas_view, view_columns

__all__ = [
    "SUITES_DIR",
    "FailedExpectation",
    "QualityGate",
    "SuiteSpec",
    "ValidationOutcome",
    "load_suite",
    "pandas_view",
    "suite_tables",
    "validate_batch",
    "view_columns",
]
