"""Run a table's expectation suite on one batch with great-expectations 1.x, in an ephemeral context.

GX objects (context, pandas datasource, dataframe asset, batch definition, suite, validation
definition) are built once per table and suite variant and reused for every batch; each run
gets the batch as a pandas view plus the runtime parameters (``max_ts_ms``, ``known_hosts``).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import great_expectations as gx
from great_expectations.data_context.types.base import (
    DataContextConfig,
    InMemoryStoreBackendDefaults,
    ProgressBarsConfig,
)

from analytics.errors import QualityError
from analytics.quality.suites import SuiteSpec, load_suite
from analytics.quality.view import pandas_view
from analytics.tables import table_of

log = logging.getLogger(__name__)

_SET_LIMIT = 20  # long value sets (known hosts) are summarised in reports


@dataclass(frozen=True)
class FailedExpectation:
    """One expectation that did not hold, with counts and a few offending values."""

    expectation: str
    column: str | None
    unexpected_count: int | None = None
    element_count: int | None = None
    sample: tuple[Any, ...] = ()
    error: str | None = None

    def describe(self) -> str:
        where = f"({self.column})" if self.column else ""
        if self.error:
            return f"{self.expectation}{where}: error: {self.error}"
        if self.unexpected_count is not None:
            of = f" of {self.element_count}" if self.element_count is not None else ""
            eg = f", e.g. {list(self.sample)[:3]}" if self.sample else ""
            return f"{self.expectation}{where}: {self.unexpected_count}{of} unexpected{eg}"
        return f"{self.expectation}{where}: failed"


@dataclass(frozen=True)
class ValidationOutcome:
    """The verdict on one batch; ``report`` is the JSON written next to a quarantined batch."""

    table: str
    success: bool
    rows: int
    evaluated: int
    failed: tuple[FailedExpectation, ...]
    suite_version: int
    now_ms: int
    report: dict[str, Any] = field(repr=False, default_factory=dict)

    @property
    def failed_names(self) -> list[str]:
        return [f.describe() for f in self.failed]

    def summary(self) -> str:
        if self.success:
            return f"{self.table}: {self.rows} rows passed {self.evaluated} expectations"
        return (
            f"{self.table}: {self.rows} rows failed {len(self.failed)} of {self.evaluated} expectations: "
            + "; ".join(self.failed_names)
        )


def to_epoch_ms(now: dt.datetime | int | float) -> int:
    """Milliseconds since the epoch of an aware datetime, or an int already in ms."""
    if isinstance(now, dt.datetime):
        if now.tzinfo is None:
            raise ValueError("pass an aware datetime (UTC) as now")
        return int(now.timestamp() * 1000)
    return int(now)


class QualityGate:
    """Validates batches against the repository's suites; one ephemeral GX context per gate."""

    def __init__(self, *, suites_dir: Path | None = None, future_tolerance_s: float = 300.0) -> None:
        self.suites_dir = suites_dir
        self.future_tolerance_ms = int(future_tolerance_s * 1000)
        self._context: Any = None
        self._suites: dict[str, SuiteSpec] = {}
        self._definitions: dict[tuple[str, bool], Any] = {}

    def suite(self, table: str) -> SuiteSpec:
        if table not in self._suites:
            self._suites[table] = load_suite(table, self.suites_dir)
        return self._suites[table]

    def _gx_context(self) -> Any:
        if self._context is None:
            config = DataContextConfig(
                store_backend_defaults=InMemoryStoreBackendDefaults(),
                progress_bars=ProgressBarsConfig(globally=False),
                analytics_enabled=False,
            )
            self._context = gx.get_context(mode="ephemeral", project_config=config)
            self._context.data_sources.add_pandas("fleetpulse")
        return self._context

    def _definition(self, table: str, with_hosts: bool) -> Any:
        key = (table, with_hosts)
        if key not in self._definitions:
            spec = self.suite(table)
            context = self._gx_context()
            available = frozenset({"known_hosts"} if with_hosts else set())
            variant = f"{table}{'' if with_hosts else '-no-hosts'}"
            try:
                suite = context.suites.add(
                    gx.ExpectationSuite(name=variant, expectations=spec.expectations_for(available))
                )
            except Exception as exc:  # GX raises pydantic and its own errors for a bad expectation
                raise QualityError(
                    f"suite {table!r} does not load in great-expectations: {exc}", table
                ) from exc
            source = context.data_sources.get("fleetpulse")
            asset = source.add_dataframe_asset(variant)
            batch = asset.add_batch_definition_whole_dataframe(variant)
            self._definitions[key] = context.validation_definitions.add(
                gx.ValidationDefinition(name=variant, data=batch, suite=suite)
            )
        return self._definitions[key]

    def validate(
        self,
        table: str,
        data: Any,
        now: dt.datetime | int,
        known_hosts: Collection[str] | None = None,
    ) -> ValidationOutcome:
        """Validate one batch of ``table`` (an Arrow table, Polars or pandas frame)."""
        table = table_of(table)
        spec = self.suite(table)
        now_ms = to_epoch_ms(now)
        frame = pandas_view(data)
        definition = self._definition(table, known_hosts is not None)
        parameters: dict[str, Any] = {"max_ts_ms": now_ms + self.future_tolerance_ms}
        if known_hosts is not None:
            parameters["known_hosts"] = _known_in_batch(
                frame, spec.columns_checked_against("known_hosts"), known_hosts
            )
        # Most batches pass: a yes/no run is ~3x cheaper than one that collects unexpected values,
        # so the detailed run happens only for a batch that fails (its report needs the details).
        batch = {"dataframe": frame}
        result = definition.run(
            batch_parameters=batch, expectation_parameters=parameters, result_format="BOOLEAN_ONLY"
        )
        if not result.success:
            result = definition.run(
                batch_parameters=batch, expectation_parameters=parameters, result_format="SUMMARY"
            )
        self._forget_runs()
        return _outcome(table, spec, len(frame), now_ms, result, parameters)

    def _forget_runs(self) -> None:
        """Drop what GX keeps of every run: the results in its (in-memory) results store, and the metrics its
        execution engine caches by batch (each batch has a new id, so no entry is ever used again). The outcome
        carries what fleetpulse needs; a long-running archiver grew by each without end (~15 MB a minute
        at the meta-48k rate for the results; ~1,800 objects a flush for the metrics)."""
        context = self._gx_context()
        store = context.validation_results_store
        for key in store.list_keys():
            store.remove_key(key)
        engine = context.data_sources.get("fleetpulse").get_execution_engine()
        engine._metric_cache.clear()  # no public call empties it; caching=False would recompute within a run
        engine.batch_manager.batch_data_cache.clear()


def validate_batch(
    table: str,
    data: Any,
    now: dt.datetime | int,
    known_hosts: Collection[str] | None = None,
    *,
    gate: QualityGate | None = None,
) -> ValidationOutcome:
    """Validate one batch against its table's suite (a fresh gate unless one is passed in).

    ``now`` bounds event times from above (plus the gate's tolerance); ``known_hosts`` None
    skips the known-host expectation.
    """
    return (gate or QualityGate()).validate(table, data, now, known_hosts)


def _known_in_batch(frame: Any, columns: tuple[str, ...], known: Collection[str]) -> list[str]:
    """The known hosts that occur in the batch: the same verdict as the whole set, at the batch's size.

    GX copies an expectation's value set many times a run (pydantic ``dict()`` per configuration
    access), so a fleet-sized set cost ~4 s per 20,000-row batch at 48,000 hosts, ~15 s when it failed.
    """
    known = known if isinstance(known, (set, frozenset)) else set(known)
    seen = {v for c in columns if c in frame.columns for v in frame[c].dropna().unique()}
    return sorted(v for v in seen if v in known)


def _failure(item: dict[str, Any]) -> FailedExpectation:
    kwargs = item.get("kwargs") or {}
    result = item.get("result") or {}
    exc = item.get("exception_info") or {}
    error = None
    if isinstance(exc, dict):
        infos = [exc] if "raised_exception" in exc else list(exc.values())
        messages = [
            i.get("exception_message") for i in infos if isinstance(i, dict) and i.get("raised_exception")
        ]
        error = "; ".join(str(m) for m in messages if m) or None
    return FailedExpectation(
        expectation=str(item.get("expectation_type") or item.get("type")),
        column=kwargs.get("column") or kwargs.get("column_A"),
        unexpected_count=result.get("unexpected_count"),
        element_count=result.get("element_count"),
        sample=tuple(result.get("partial_unexpected_list") or ()),
        error=error,
    )


def _trim(values: dict[str, Any]) -> dict[str, Any]:
    """Summarise long value lists (thousands of known hosts) so reports stay readable."""
    return {
        k: f"<{len(v)} values>" if isinstance(v, list) and len(v) > _SET_LIMIT else v
        for k, v in values.items()
    }


def _outcome(
    table: str, spec: SuiteSpec, rows: int, now_ms: int, result: Any, parameters: dict[str, Any]
) -> ValidationOutcome:
    described = json.loads(result.describe())
    items = described.get("expectations", [])
    failed = tuple(_failure(item) for item in items if not item.get("success"))
    report = {
        "table": table,
        "suite": spec.table,
        "suite_version": spec.version,
        "success": bool(result.success),
        "rows": rows,
        "now_ms": now_ms,
        "parameters": _trim(parameters),
        "statistics": described.get("statistics", {}),
        "failed_expectations": [f.describe() for f in failed],
        "results": [{**item, "kwargs": _trim(item.get("kwargs") or {})} for item in items],
    }
    return ValidationOutcome(
        table, bool(result.success), rows, len(items), failed, spec.version, now_ms, report
    )
