"""DataFrames as they come: column kinds, conversion to the numeric matrix, levels.

A pandas or polars DataFrame becomes the float64 matrix column by column, and what each
column was is kept at fit (:class:`Columns`, given back to read later rows):

kind of a column
    ``"float"``, ``"int"`` (nullable and pyarrow dtypes included), ``"bool"`` or
    ``"category"`` (text, ``string``, ``category``, pyarrow strings and dictionaries,
    polars ``String``/``Categorical``/``Enum``); an ``object`` column by its values.
    Dates, times, complex numbers and intervals raise ``ValueError`` naming the column.
family of a column
    The estimator's family, or a composite family's ``column_families(names, kinds)``.
levels of a column
    A ``"category"`` or ``"bool"`` column whose family reads category values
    (``capabilities.levels``) enters as codes, positions among the sorted values seen
    in training (:func:`bayesgen.data.categories.levels`); an unseen value at predict is
    a ``ValueError`` naming the column, a later batch (``grow=True``) appends its new
    values, and merged pieces are re-coded by :mod:`bayesgen.scale.piece_levels`.

Every other column becomes float64 (booleans 0/1; text there is a ``ValueError`` naming
the column and the family). Missing values (None, NaN, ``pd.NA``, polars null) become
NaN; a column with no observed value at fit is a ``ValueError``. Plain arrays pass
through, except object/string arrays given to an estimator with categorical columns.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from bayesgen.data import categories as cats

# ------------------------------------------------------------ column readers
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


def read(X: Any, takes_values: bool) -> tuple[list, list[Column]] | None:
    """Column labels and readers of a DataFrame (or of an object array given to an
    estimator whose family ``takes_values``, reading text columns as category values:
    ``capabilities.levels``; for MixedNB, whether one of its parts may); None for
    everything that passes through."""
    module = type(X).__module__
    if module.startswith("pandas") and hasattr(X, "iloc") and getattr(X, "ndim", 0) == 2:
        return list(X.columns), [pandas_column(X.columns[j], X.iloc[:, j])
                                 for j in range(X.shape[1])]
    if module.startswith("polars") and type(X).__name__ == "DataFrame":
        return list(X.columns), [polars_column(s) for s in X.get_columns()]
    if (isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind in "OUS"
            and takes_values):
        import pandas as pd

        frame = pd.DataFrame(X.astype(object) if X.dtype.kind != "O" else X)
        return list(frame.columns), [pandas_column(j, frame.iloc[:, j])
                                     for j in range(frame.shape[1])]
    return None


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
        _unsupported(label, dtype)

    def numbers():
        if kind == "category" or types.is_object_dtype(dtype):
            return _from_factorized(*factorize(), label)
        values = s.to_numpy(dtype=np.float64, na_value=np.nan)
        return values, np.isnan(values)

    def factorize():
        if isinstance(dtype, pd.CategoricalDtype):
            return s.cat.codes.to_numpy(), s.cat.categories.to_numpy(dtype=object)
        try:
            codes, distinct = pd.factorize(s, use_na_sentinel=True)
        except TypeError:  # an unhashable entry (a dict, a list): not a label or a number
            bad = next(v for v in s if not isinstance(v, Hashable))
            raise TypeError(
                f"column {label!r} holds a {type(bad).__name__} ({bad!r:.60}), neither a "
                "category label nor a value: as float()'s argument must be a string or a "
                "number, so must every entry of X."
            ) from None
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
        _unsupported(label, dtype)

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


def _unsupported(label: Any, dtype: Any) -> None:
    raise ValueError(
        f"column {label!r} has dtype {dtype}, which is not numbers, booleans, text or "
        "categories; convert it (e.g. dates to numbers of days) before fitting."
    )


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


# ------------------------------------------------------------ the matrix
#: dtype kind letter -> column kind of a plain array
_ARRAY_KINDS = {"b": "bool", "i": "int", "u": "int", "f": "float"}


@dataclass
class Columns:
    """What the training columns were (kept by the estimator with its fit).

    Attributes
    ----------
    names : ndarray of str or None
        Column names when all are strings (as ``feature_names_in_``), else None.
    kinds : ndarray of str
        Kind per column, or one kind for all columns (``uniform``; plain arrays).
    families : ndarray of str or None
        Family name per column (None for plain arrays).
    levels : dict
        ``{str(j): levels of column j}`` for the columns read as category values.
    uniform : bool
        Whether ``kinds`` holds one kind shared by every column.
    """

    names: np.ndarray | None
    kinds: np.ndarray
    families: np.ndarray | None = None
    levels: dict = field(default_factory=dict)
    uniform: bool = False

    def kind_list(self, n_features: int) -> list[str]:
        """The kind of each of ``n_features`` columns."""
        if self.uniform:
            return [str(self.kinds[0])] * n_features
        return [str(k) for k in self.kinds]

    def level_list(self) -> list[np.ndarray | None] | None:
        """Levels per column (None for numeric columns), or None without any."""
        if not self.levels:
            return None
        return [self.levels.get(str(j)) for j in range(self.kinds.size)]


# ------------------------------------------------------------------ public
def to_numeric(X: Any, *, family: Any, table: Columns | None, who: str, reset: bool,
               grow: bool = False, whole: bool = True) -> tuple[Any, Columns | None]:
    """X as scikit-learn's ``validate_data`` can take it (float64 for DataFrames).

    Parameters
    ----------
    X : DataFrame (pandas, polars), array-like, or sparse/Dask array
    family : family object
        The estimator's family (its ``capabilities.levels``; a composite's
        ``column_families``).
    table : Columns or None
        The record of the training columns (``reset=False``), or None before a fit.
    who : str
        The estimator's name, for messages.
    reset : bool
        Fit (first batch): record the columns. Otherwise read X with the recorded kinds
        and levels of ``table``.
    grow : bool
        A later training batch: values that are not yet levels of their column are
        appended to its levels instead of raising.
    whole : bool
        X is the whole training set: at fit, a column with no observed value is a
        ``ValueError``. False for a Dask chunk (checked on the total instead).

    Returns
    -------
    X, table
        X unchanged (plain arrays), or a pandas DataFrame of float64 with X's column
        labels (so that ``feature_names_in_`` is set and checked as for any
        DataFrame); and the record of the columns: a new one with ``reset``, else
        ``table``, or a copy of it whose levels this batch extended (``grow``).
    """
    source = read(X, family.capabilities.levels)
    if source is None:
        if reset:
            return X, _array_columns(X)
        _check_not_codes(table, X, who)
        return X, table
    labels, columns = source
    names = _names(labels)
    by_levels: list[bool] = []  # at fit: whether each column's family reads levels
    if reset:
        kinds = [c.kind for c in columns]
        families = (family.column_families(names, kinds) if family.capabilities.composite
                    else [family] * len(kinds))
        by_levels = [f.capabilities.levels for f in families]
        table = Columns(names=None if names is None else np.asarray(names, dtype=object),
                        kinds=np.asarray(kinds, dtype=str),
                        families=np.asarray([f.name for f in families], dtype=str))
    else:
        if not _matches(table, names, len(columns)):
            return X, table  # scikit-learn reports the different names or width
        if grow:  # levels this batch extends go to a copy, never to the caller's record
            table = replace(table, levels=dict(table.levels))
    out = np.empty((columns[0].size if columns else 0, len(columns)), order="F")  # by column
    missing = {}
    for j, col in enumerate(columns):
        family = "" if table.families is None else str(table.families[j])
        if reset and by_levels[j] and col.kind in ("category", "bool"):
            codes, distinct = col.factorize()
            used = distinct[np.unique(codes[codes >= 0])]  # not a dtype's unused categories
            table.levels[str(j)] = cats.levels(used, f"{who}: column {col.label!r}")
            out[:, j], mask = _codes(who, table, j, col, grow=False, read=(codes, distinct))
        elif str(j) in table.levels:
            out[:, j], mask = _codes(who, table, j, col, grow=grow and not reset)
        else:
            out[:, j], mask = _numbers(col, family, who)
        if mask is not None and mask.any():
            missing[col.label] = mask
    if reset and whole:
        _check_missing(missing, out.shape[0], who)
    return _wrap(out, X), table


def kinds(table: Columns | None, n_features: int | None = None) -> list[str] | None:
    """Column kinds of the record ``table``, or None (no record, or plain arrays of an
    unknown width ``n_features``)."""
    if table is None:
        return None
    if table.uniform:
        return None if n_features is None else table.kind_list(n_features)
    return table.kind_list(table.kinds.size)


def levels(table: Columns | None) -> list[np.ndarray | None] | None:
    """Levels per training column of the record ``table`` (None where a column is
    numeric), or None."""
    return None if table is None else table.level_list()


def to_user(table: Columns | None, names: list[str], X_new: np.ndarray):
    """Rows drawn by ``sample`` (codes for level columns) in the user's values: a pandas
    DataFrame with the training column names ``names``, each level column's values
    (from the fit's column record ``table``), and integer and boolean columns as such
    where the draws are whole numbers (0/1), when there are level columns; else
    ``X_new`` unchanged."""
    if table is None or not table.levels:
        return X_new
    import pandas as pd

    data = {}
    for j, (name, kind) in enumerate(zip(names, table.kind_list(len(names)), strict=True)):
        level = table.levels.get(str(j))
        column = X_new[:, j] if level is None else level[X_new[:, j].astype(np.intp)]
        if level is None and kind in ("int", "bool") and np.all(column == np.round(column)):
            if kind == "int" or np.all((column == 0) | (column == 1)):  # e.g. counts, 0/1
                column = column.astype(np.int64 if kind == "int" else bool)
        data[name] = column
    return pd.DataFrame(data)


# --------------------------------------------------------------- converting
def _numbers(col: Column, family: str, who: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        return col.numbers()
    except Text as err:
        value = err.args[0]
    if family == "":
        hint = "Encode it first (e.g. sklearn.preprocessing.OrdinalEncoder)."
    elif who == "MixedNB":
        hint = ("Put it in a 'categorical' part (families='auto' does so for text and "
                "category columns), or encode it first.")
    else:
        hint = ("Use CategoricalNB or MixedNB(families='auto') for text and category "
                "columns, or encode it first (sklearn.preprocessing.OrdinalEncoder or "
                "OneHotEncoder).")
    modelled = f"its {family} family needs" if family else "it needs"
    raise ValueError(
        f"{who}: column {col.label!r} holds text or other non-numeric values (e.g. "
        f"{value!r}), but {modelled} numbers. {hint}"
    )


def _codes(who: str, table: Columns, j: int, col: Column, *, grow: bool,
           read: tuple | None = None):
    """Codes of a level column: each value's position among the column's levels
    (``read``: the column's factorisation when already at hand)."""
    codes, distinct = col.factorize() if read is None else read
    known = table.levels[str(j)]
    position = cats.lookup(distinct, known)
    unseen = (position < 0) & np.isin(np.arange(distinct.size), codes)
    if unseen.any():
        new = distinct[unseen]
        if not grow:
            shown = ", ".join(repr(v) for v in known[:6].tolist()) + (
                ", ..." if known.size > 6 else "")
            raise ValueError(
                f"{who}: column {col.label!r} has the value {new[0]!r}, which is not one of "
                f"its {known.size} categories in fit ({shown}). A category never seen in "
                "training has no probability under the model: drop or recode those rows, "
                "or refit on data that contain it."
            )
        table.levels[str(j)] = cats.natural_dtype(
            np.concatenate([known.astype(object), new.astype(object)]))
        position = cats.lookup(distinct, table.levels[str(j)])
    lookup = np.append(position.astype(np.float64), np.nan)  # code -1 (missing) -> NaN
    return lookup[codes], codes < 0


def _check_not_codes(table: Columns | None, X: Any, who: str) -> None:
    """A numeric array given to a model fitted with text/category columns would be read
    as their codes: ValueError asking for the values instead."""
    if table is None or not table.levels:
        return
    names = [str(table.names[int(j)]) if table.names is not None else f"x{j}"
             for j in table.levels]
    raise ValueError(
        f"{who} was fitted with text, boolean or category columns "
        f"({', '.join(names)}); give X with their values, as a DataFrame (or an object "
        "array), not a numeric array."
    )


def _check_missing(missing: dict, n_rows: int, who: str) -> None:
    """Missing values are kept (NaN in the matrix, see :mod:`bayesgen.data.missing`); a
    column with no observed value is a ``ValueError`` naming it. ``missing`` maps each
    column with missing entries to its mask."""
    for label, mask in missing.items():
        if n_rows and int(mask.sum()) == n_rows:
            raise ValueError(
                f"{who}: column {label!r} has no observed value (every entry is None, "
                "NaN, NA or null), so nothing can be learned about it. Drop the column."
            )


# ----------------------------------------------------------------- helpers
def _names(labels: list) -> list[str] | None:
    """The column names as scikit-learn's ``feature_names_in_`` (all strings), or None."""
    if labels and all(isinstance(label, str) for label in labels):
        return [str(label) for label in labels]
    return None


def _matches(table: Columns | None, names: list[str] | None, width: int) -> bool:
    """Whether X's columns can be read with the fitted table (same width and, when
    both have names, the same names in the same order)."""
    if table is None:
        return False
    if table.uniform:  # fitted on a plain array: every column is read as numbers
        return True
    if table.kinds.size != width:
        return False
    return table.names is None or names is None or list(table.names) == names


def _array_columns(X: Any) -> Columns:
    """The record of a plain array: the kind of its dtype for every column."""
    dtype = getattr(X, "dtype", None)
    kind = _ARRAY_KINDS.get(getattr(dtype, "kind", "f"), "float")
    return Columns(names=None, kinds=np.asarray([kind]), uniform=True)


def _wrap(values: np.ndarray, X: Any):
    """The float64 matrix with X's column labels (a pandas DataFrame) for DataFrames."""
    if isinstance(X, np.ndarray):
        return values
    import pandas as pd

    return pd.DataFrame(values, columns=list(X.columns), copy=False)
