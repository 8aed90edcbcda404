"""Category tables of CategoricalNB: observed values <-> codes, per feature.

The categories of feature j are the sorted distinct values seen in training plus any
declared ones (``min_categories``), never 0..max(x_j); codes are positions in that
list (anything ``np.unique`` and ``np.searchsorted`` sort: numbers, strings, booleans).
Text, boolean and categorical DataFrame columns reach the family as codes of their
levels (:func:`levels`, :func:`lookup`), reported as ``categories_``; a later batch's
new levels are appended (``grow``) until merging re-codes to the sorted union
(:mod:`bayesgen.scale.piece_levels`). Statistics store the categories as a padded
table (d, Cs) plus ``n_seen`` per feature, additive with :func:`union` and
:func:`reindex`.
"""

from __future__ import annotations

import numpy as np


def observed(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values of a column and each entry's code (position among them)."""
    values, codes = np.unique(column, return_inverse=True)
    return values, codes.reshape(-1)


def observed_masked(column: np.ndarray, missing: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`observed` of the entries not ``missing`` (NaN); missing entries get code 0
    (their weight is 0 wherever codes are counted)."""
    values, codes = observed(column[~missing])
    out = np.zeros(column.shape[0], dtype=np.intp)
    out[~missing] = codes
    return values, out


def table(categories: list[np.ndarray], width: int | None = None) -> np.ndarray:
    """Categories per feature as a (d, width) array, each row padded with its last value
    (rows stay sorted, so :func:`np.searchsorted` works on them unchanged)."""
    sizes = [c.size for c in categories]
    width = max(sizes, default=0) if width is None else width
    dtype = np.result_type(*categories) if categories else np.float64
    out = np.zeros((len(categories), width), dtype=dtype)
    for j, c in enumerate(categories):
        if c.size:
            out[j, : c.size] = c
            out[j, c.size :] = c[-1]
    return out


def from_table(values: np.ndarray, sizes: np.ndarray) -> list[np.ndarray]:
    """The list of per-feature category arrays stored in a padded ``table``."""
    return [values[j, : int(c)] for j, c in enumerate(sizes)]


def union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sorted union of two category arrays."""
    return np.union1d(a, b)


def reindex(counts: np.ndarray, source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Counts (..., C_source) over categories ``source`` moved to ``target`` (a sorted
    superset): (..., C_target), zero for the target categories not in ``source``."""
    out = np.zeros((*counts.shape[:-1], target.size))
    out[..., np.searchsorted(target, source)] = counts[..., : source.size]
    return out


def is_identity(categories: np.ndarray) -> bool:
    """Whether the categories are exactly 0, 1, ..., C - 1 (codes equal values)."""
    return bool(np.array_equal(categories, np.arange(categories.size)))


def encode(X: np.ndarray, categories: list[np.ndarray], who: str) -> np.ndarray:
    """Codes (n, d) of the values in X: position of x_nj among the categories of j
    (0 for a missing value, NaN, which callers weigh 0).

    Raises ``ValueError`` naming the feature and the value for a value that is not a
    category of its feature (never seen in training and not declared).
    """
    n, d = X.shape
    codes = np.empty((n, d), dtype=np.intp)
    for j, cats in enumerate(categories):
        column = X[:, j]
        gap = np.isnan(column) if column.dtype.kind == "f" else None  # missing: code 0
        if gap is not None and gap.any():
            column = np.where(gap, cats[0] if cats.size else 0, column)
        if is_identity(cats):
            bad = ~((column >= 0) & (column < cats.size))
            code = np.where(bad, 0, column).astype(np.intp)
        else:
            code = np.searchsorted(cats, column)
            bad = code >= cats.size
            bad[~bad] = cats[code[~bad]] != column[~bad]
        if bad.any():
            value = column[np.argmax(bad)]
            raise ValueError(
                f"{who}: feature {j} has category code {_show(value)}, which is not one "
                f"of the C_j = {cats.size} categories of that feature in fit "
                f"({_preview(cats)}). A category never seen in training must be declared "
                "when fitting: with integer codes, min_categories=m makes 0..m-1 "
                "categories of every feature."
            )
        codes[:, j] = code
    return codes


def _show(value) -> str:
    """A value for a message: whole floats as integers."""
    if isinstance(value, float | np.floating) and np.isfinite(value) and value == int(value):
        return str(int(value))
    return repr(value.item() if isinstance(value, np.generic) else value)


def _preview(categories: np.ndarray, shown: int = 6) -> str:
    items = [_show(v) for v in categories[:shown]]
    if categories.size > shown:
        items.append("...")
    return ", ".join(items)


# ------------------------------------------------------- levels of value columns
def levels(values: np.ndarray, where: str) -> np.ndarray:
    """Sorted distinct category values (a column's levels), as a NumPy array of their
    natural dtype: strings as an object array (as scikit-learn's encoders), booleans
    as bool, numbers as int64/float64.

    Raises ``ValueError`` naming ``where`` when the values cannot be ordered (strings
    mixed with numbers).
    """
    distinct = np.asarray(values, dtype=object)
    try:
        ordered, _ = observed(distinct)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in distinct})
        raise ValueError(
            f"{where} mixes values of types {kinds}, which have no common order; "
            "convert the column to one type (e.g. .astype(str))."
        ) from None
    return natural_dtype(ordered)


def natural_dtype(values: np.ndarray) -> np.ndarray:
    """An object array of category values as bool / int64 / float64 when they are all
    of that kind (bools are not numbers here), else object (strings)."""
    items = values.tolist()
    if not items:
        return np.zeros(0)
    if all(isinstance(v, bool | np.bool_) for v in items):
        return np.asarray(items, dtype=bool)
    if not any(isinstance(v, bool | np.bool_) for v in items):
        if all(isinstance(v, int | np.integer) for v in items):
            try:
                return np.asarray(items, dtype=np.int64)
            except OverflowError:
                return values
        if all(isinstance(v, int | float | np.integer | np.floating) for v in items):
            return np.asarray(items, dtype=np.float64)
    return np.asarray(items, dtype=object)


def lookup(values: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Position of each of ``values`` among the levels ``known`` (any order), -1 where
    it is not one of them; hash-based, so levels need not be sortable together with
    the values."""
    import pandas as pd

    index = pd.Index(np.asarray(known, dtype=object))
    return index.get_indexer(pd.Index(np.asarray(values, dtype=object)))


def inverse_cdf(theta: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One code per entry of ``theta`` (..., Cmax) (probabilities on the last axis):
    the number of cumulative probabilities <= u, with u ~ Uniform(0, total)."""
    cdf = np.cumsum(theta, axis=-1)
    u = rng.uniform(size=(*theta.shape[:-1], 1)) * cdf[..., -1:]
    return (cdf <= u).sum(axis=-1)
