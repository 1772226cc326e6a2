"""The pandas view great-expectations validates (GX has no Polars support).

Scalar columns are kept as they are; nested per-GPU / per-NIC lists become derived columns
``<list>.len`` and ``<list>.<field>.min`` / ``.max`` for numeric fields, so a suite can bound
nested counters (a negative ECC count inside ``gpus`` shows as ``gpus.ecc_dbe.min < 0``).
Maps and bytes are left out: no expectation reads them.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa

from schemas.arrow import table_schema

_SCALARS = (pl.Boolean, pl.String)


def _is_scalar(dtype: pl.DataType) -> bool:
    return dtype.is_numeric() or isinstance(dtype, _SCALARS) or dtype == pl.String


def _widen(expr: pl.Expr, dtype: Any) -> pl.Expr:
    """64-bit numbers: GX compares int64/float64 columns vectorised and anything narrower row by row (~50x slower)."""
    if dtype.is_integer():
        return expr.cast(pl.Int64)
    if dtype.is_float():
        return expr.cast(pl.Float64)
    return expr


def _derived(name: str, dtype: pl.DataType) -> list[pl.Expr]:
    if not isinstance(dtype, pl.List):
        return []
    exprs = [pl.col(name).list.len().cast(pl.Int64).alias(f"{name}.len")]
    inner = dtype.inner
    if isinstance(inner, pl.Struct):
        for fld in inner.fields:
            if fld.dtype.is_numeric():
                values = pl.col(name).list.eval(pl.element().struct.field(fld.name))
                exprs.append(_widen(values.list.min(), fld.dtype).alias(f"{name}.{fld.name}.min"))
                exprs.append(_widen(values.list.max(), fld.dtype).alias(f"{name}.{fld.name}.max"))
    return exprs


def to_polars(data: Any) -> pl.DataFrame:
    """Accept an Arrow table, a Polars frame (eager or lazy) or a pandas frame."""
    if isinstance(data, pl.LazyFrame):
        return data.collect()
    if isinstance(data, pl.DataFrame):
        return data
    if isinstance(data, pa.Table):
        return pl.from_arrow(data)  # type: ignore[return-value]
    if isinstance(data, pd.DataFrame):
        return pl.from_pandas(data)
    raise TypeError(f"cannot validate a {type(data).__name__}; pass a pyarrow Table, Polars or pandas frame")


def view_frame(data: Any) -> pl.DataFrame:
    """The validated columns as a Polars frame (scalars plus derived list statistics)."""
    frame = to_polars(data)
    exprs: list[pl.Expr] = []
    for name, dtype in frame.schema.items():
        if _is_scalar(dtype):
            exprs.append(_widen(pl.col(name), dtype))
        else:
            exprs.extend(_derived(name, dtype))
    return frame.select(exprs)


def pandas_view(data: Any) -> pd.DataFrame:
    """What great-expectations sees for a batch."""
    return view_frame(data).to_pandas()


def view_columns(event_type: str) -> list[str]:
    """The view's columns for a table of ``event_type`` (what each suite's column-set expects)."""
    empty = table_schema(event_type).empty_table()
    return list(view_frame(empty).columns)
