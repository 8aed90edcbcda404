"""Category tables of CategoricalNB: observed values <-> codes, per feature.

The categories of feature j are the sorted distinct values observed in training
(plus any declared ones, e.g. ``min_categories``), never the range 0..max(x_j): a
code of 1e9 makes one category, not a billion. Codes are positions in that sorted
list, so the per-feature counts and parameters have C_j = (number of categories)
entries.

Everything here works on any 1-D array that ``np.unique`` and ``np.searchsorted`` can
sort: numbers now, and equally strings, booleans or the values of a pandas
categorical column (converted to a NumPy array), which the estimator can pass once its
validation lets them through.

Statistics store the categories as a padded table (d, Cs) plus the number of valid
entries per feature (``n_seen``), so that they stay a dict of arrays (additive with
:func:`union` and :func:`reindex`, savable, mergeable across batches).
"""

from __future__ import annotations

import numpy as np


def observed(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values of a column and each entry's code (position among them)."""
    values, codes = np.unique(column, return_inverse=True)
    return values, codes.reshape(-1)


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
    """Codes (n, d) of the values in X: position of x_nj among the categories of j.

    Raises ``ValueError`` naming the feature and the value for a value that is not a
    category of its feature (never seen in training and not declared).
    """
    n, d = X.shape
    codes = np.empty((n, d), dtype=np.intp)
    for j, cats in enumerate(categories):
        column = X[:, j]
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


def inverse_cdf(theta: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One code per entry of ``theta`` (..., Cmax) (probabilities on the last axis):
    the number of cumulative probabilities <= u, with u ~ Uniform(0, total)."""
    cdf = np.cumsum(theta, axis=-1)
    u = rng.uniform(size=(*theta.shape[:-1], 1)) * cdf[..., -1:]
    return (cdf <= u).sum(axis=-1)
