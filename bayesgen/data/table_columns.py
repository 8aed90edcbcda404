"""Readers of DataFrame columns for :mod:`bayesgen.data.tables`: each column's kind and
two readers, its numbers and its factorisation (codes into distinct values).

pandas columns of every dtype family (NumPy, nullable, pyarrow-backed, object,
``string``, ``category``), polars columns (imported only when X is a polars
DataFrame), and object/string NumPy arrays read as columns for estimators with
categorical columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bayesgen.data import categories as cats

#: pandas.api.types.infer_dtype of an object column -> column kind ("empty": every value
#: missing, e.g. in one Dask partition or batch: read as the dtype suggests, categories)
INFERRED = {"string": "category", "boolean": "bool", "integer": "int", "floating": "float",
            "mixed-integer-float": "float", "decimal": "float", "empty": "category",
            "bytes": "category", "categorical": "category"}


@dataclass
class Column:
    """One input column: label, kind and two readers."""

    label: Any
    kind: str
    size: int
    numbers: Any  # () -> (float64 values with NaN where missing, missing mask)
    factorize: Any  # () -> (codes with -1 where missing, distinct values (object))


def read(estimator, X: Any) -> tuple[list, list[Column]] | None:
    """Column labels and readers of a DataFrame (or of an object array given to an
    estimator with categorical columns); None for everything that passes through."""
    module = type(X).__module__
    if module.startswith("pandas") and hasattr(X, "iloc") and getattr(X, "ndim", 0) == 2:
        return list(X.columns), [pandas_column(X.columns[j], X.iloc[:, j])
                                 for j in range(X.shape[1])]
    if module.startswith("polars") and type(X).__name__ == "DataFrame":
        return list(X.columns), [polars_column(s) for s in X.get_columns()]
    if (isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind in "OUS"
            and _takes_values(estimator)):
        import pandas as pd

        frame = pd.DataFrame(X.astype(object) if X.dtype.kind != "O" else X)
        return list(frame.columns), [pandas_column(j, frame.iloc[:, j])
                                     for j in range(frame.shape[1])]
    return None


def _takes_values(estimator) -> bool:
    """Whether the estimator's family may read text columns as category values
    (``capabilities.levels``; for MixedNB, whether one of its parts may)."""
    return estimator._make_family().capabilities.levels


def pandas_column(label: Any, s) -> Column:
    import pandas as pd
    from pandas.api import types

    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        kind = "category"
    elif types.is_bool_dtype(dtype):
        kind = "bool"
    elif types.is_integer_dtype(dtype):
        kind = "int"
    elif types.is_float_dtype(dtype):
        kind = "float"
    elif types.is_object_dtype(dtype):
        kind = INFERRED.get(types.infer_dtype(s, skipna=True), "category")
    elif types.is_string_dtype(dtype) or "dictionary" in str(dtype):
        kind = "category"
    elif "decimal" in str(dtype):
        kind = "float"
    else:
        raise ValueError(
            f"column {label!r} has dtype {dtype}, which is not numbers, booleans, text or "
            "categories; convert it (e.g. dates to numbers of days) before fitting."
        )

    def numbers():
        if kind == "category" or types.is_object_dtype(dtype):
            return _from_factorized(*factorize(), label)
        values = s.to_numpy(dtype=np.float64, na_value=np.nan)
        return values, np.isnan(values)

    def factorize():
        if isinstance(dtype, pd.CategoricalDtype):
            return s.cat.codes.to_numpy(), s.cat.categories.to_numpy(dtype=object)
        codes, distinct = pd.factorize(s, use_na_sentinel=True)
        return codes, np.asarray(distinct, dtype=object)

    return Column(label, kind, len(s), numbers, factorize)


def polars_column(s) -> Column:
    import pandas as pd
    import polars as pl
    from pandas.api import types

    dtype, label = s.dtype, s.name
    if dtype == pl.Boolean:
        kind = "bool"
    elif dtype.is_integer():
        kind = "int"
    elif dtype.is_float() or dtype == pl.Decimal or dtype == pl.Null:
        kind = "float"
    elif dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Categorical | pl.Enum):
        kind = "category"
    elif dtype == pl.Object:
        kind = INFERRED.get(types.infer_dtype(s.to_numpy(), skipna=True), "category")
    else:
        raise ValueError(
            f"column {label!r} has dtype {dtype}, which is not numbers, booleans, text or "
            "categories; convert it (e.g. dates to numbers of days) before fitting."
        )

    def numbers():
        if kind == "category" or dtype == pl.Object:
            return _from_factorized(*factorize(), label)
        values = s.cast(pl.Float64).to_numpy().astype(np.float64, copy=False)
        return values, s.is_null().to_numpy() | np.isnan(values)

    def factorize():
        raw = s.cast(pl.String) if kind == "category" and dtype != pl.String else s
        codes, distinct = pd.factorize(np.asarray(raw.to_numpy(), dtype=object),
                                       use_na_sentinel=True)
        return codes, np.asarray(distinct, dtype=object)

    return Column(label, kind, len(s), numbers, factorize)


def _from_factorized(codes: np.ndarray, distinct: np.ndarray, label: Any):
    """Numbers of a text/categorical/object column whose values are all numbers;
    ``_Text`` (caught by :func:`bayesgen.data.tables._numbers`) when some are not."""
    values = cats.natural_dtype(distinct)
    if values.dtype == object:
        text = next(v for v in distinct if not isinstance(v, int | float | np.number))
        raise Text(text)
    table = np.append(values.astype(np.float64), np.nan)  # code -1 (missing) -> NaN
    return table[codes], codes < 0


class Text(Exception):
    """A value that is not a number in a column read as numbers."""
