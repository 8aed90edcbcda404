"""Dask input: fit by a tree reduction of per-chunk statistics, lazy predictions.

Needs ``bayesgen[dask]``; Dask is imported only when a Dask collection is passed
(:func:`is_dask` looks at the type's module). Fit: every row chunk becomes one task that
reads it as in-memory input (:func:`bayesgen.inference.statistics.read_batch`) and
returns a :class:`bayesgen.scale.pieces.Piece`; the pieces are merged by the family's
``merge`` in a tree of fan-in :data:`SPLIT_EVERY`, on whatever scheduler is active, and
the client fits from the total (KernelNB's points are gathered: O(N) memory).
Predictions: every predict method given a Dask X returns a lazy Dask array (a
``map_blocks`` of the NumPy method; a Dask-backed ``xarray.DataArray`` for
``predict_proba_draws`` and ``predict_proba_interval``); ``score`` returns a number.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesgen.scale import pieces as _pieces

#: pieces combined per task of the tree reduction
SPLIT_EVERY = 8


def is_dask(*objects: Any) -> bool:
    """True if any of the objects is a Dask collection (checked without importing Dask)."""
    return any(type(o).__module__.startswith("dask") for o in objects if o is not None)


# ---------------------------------------------------------------------- fit
def collection_piece(tmpl, X: Any, y: Any, sample_weight: Any, method: str,
                     classes: np.ndarray | None, *, reset: bool, make_family,
                     columns: Any = None) -> _pieces.Piece:
    """The statistics of all rows of Dask (or mixed Dask/in-memory) input.

    ``classes`` None: the classes are the labels found (at least two); otherwise every
    label must be one of them. ``reset``: every chunk records its own columns (the
    merges check that they agree and unite the levels of categorical columns); else
    every chunk is checked against (and may extend) the record ``columns`` of the
    training columns. ``make_family``: see :func:`bayesgen.scale.pieces.batch_piece`.
    """
    import dask

    who = type(tmpl).__name__
    if reset:
        _check_shape(tmpl, X)
    x_blocks, y_blocks, w_blocks = _blocks(X, y, sample_weight)
    shared = dask.delayed(tmpl, pure=False)  # one copy in the graph, not one per task
    leaves = [
        dask.delayed(_chunk_piece, pure=True)(shared, xb, yb, wb, method, classes, reset,
                                              make_family, columns)
        for xb, yb, wb in zip(x_blocks, y_blocks, w_blocks, strict=True)
    ]
    if not leaves:
        raise ValueError(f"{who}: X has no rows.")
    (piece,) = dask.compute(_tree(leaves))
    if piece is None:
        raise ValueError(f"{who}: X has no rows of positive sample_weight; nothing to fit.")
    if reset and piece.n_observed is not None:
        from bayesgen.data.missing import check_columns

        check_columns(piece.n_observed, piece.feature_names, who)
    if classes is None and piece.classes.size < 2:
        raise ValueError(
            f"Classifier can't train when only one class is present: y has 1 class "
            f"({piece.classes[0]!r}); a generative classifier needs samples of at least 2 "
            "classes."
        )
    return piece


def _check_shape(tmpl, X: Any) -> None:
    """X is 2-D with a known number of columns (from its metadata: nothing computed)."""
    meta = X if is_dask(X) or hasattr(X, "shape") else np.asarray(X)  # Dask: metadata
    ndim = len(meta.shape)
    if ndim != 2:
        raise ValueError(
            f"Expected a 2-D X (n_samples, n_features); got {ndim} dimension(s). "
            "Reshape a single feature with X.reshape(-1, 1)."
        )
    n_features = X.shape[1] if not hasattr(meta, "columns") else len(meta.columns)
    if not isinstance(n_features, int | np.integer):
        raise ValueError("X has an unknown number of columns; give X with known columns.")


def _chunk_piece(tmpl, X: Any, y: Any, w: Any, method: str, classes: np.ndarray | None,
                 reset: bool, make_family, columns: Any) -> _pieces.Piece | None:
    """The statistics of one chunk (None for an empty or all-zero-weight chunk).

    ``reset`` (a first fit): the chunk records its own columns (number, names, kinds,
    the levels of categorical columns), which the merges check and unite; else it is
    read with the estimator's record ``columns``."""
    if len(X) == 0:
        return None
    if w is not None:
        values = np.asarray(w, dtype=np.float64)
        if values.size and np.all(values == 0.0):
            return None  # no weight: contributes nothing (fit checks the total)
    if classes is None:
        labels = np.asarray(y)
        classes = _pieces.unique_labels(labels.reshape(-1) if labels.ndim == 2 else labels,
                                          "y")
    return _pieces.batch_piece(tmpl, X, y, w, method, classes, reset=reset,
                               make_family=make_family, columns=columns, whole=False)


def _combine(*pieces: _pieces.Piece | None) -> _pieces.Piece | None:
    """Merge pieces left to right (the order of the rows)."""
    out = None
    for piece in pieces:
        if piece is not None:
            out = piece if out is None else _pieces.merge_pieces(out, piece)
    return out


def _tree(leaves: list) -> Any:
    """Delayed tree of :func:`_combine` with fan-in :data:`SPLIT_EVERY`."""
    import dask

    level = leaves
    while len(level) > 1:
        level = [dask.delayed(_combine, pure=True)(*level[i : i + SPLIT_EVERY])
                 for i in range(0, len(level), SPLIT_EVERY)]
    return level[0]


# ---------------------------------------------------------------- row chunks
def _is_frame(obj: Any) -> bool:
    return hasattr(obj, "divisions")  # DataFrame or Series (arrays have npartitions too)


def _n_blocks(obj: Any) -> int:
    return obj.npartitions if _is_frame(obj) else obj.numblocks[0]


def _row_blocks(X: Any) -> tuple[list, tuple[int, ...] | None]:
    """Delayed row chunks of X and their lengths (None when unknown)."""
    if not is_dask(X):
        return [X], (len(X),)
    if _is_frame(X):
        return list(X.to_delayed()), None
    if X.ndim > 2:
        raise ValueError(
            f"Expected a 2-D Dask array X (n_samples, n_features); got {X.ndim} dimensions."
        )
    if X.ndim == 2 and X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    lengths = X.chunks[0]
    known = all(np.isfinite(c) for c in lengths)
    return list(X.to_delayed().reshape(-1)), (tuple(int(c) for c in lengths) if known else None)


class _Lengths:
    """Row counts of the chunks of a collection, computed on first need if unknown."""

    def __init__(self, collection: Any, known: tuple[int, ...] | None) -> None:
        self.collection, self.known = collection, known

    def get(self) -> tuple[int, ...]:
        if self.known is None:
            self.known = _compute_lengths(self.collection)
        return self.known


def _compute_lengths(X: Any) -> tuple[int, ...]:
    """Row counts of X's chunks (a pass over X's partitions, which Dask can often
    answer from metadata)."""
    if _is_frame(X):
        return tuple(int(n) for n in X.map_partitions(len).compute())
    return tuple(int(c) for c in X.compute_chunk_sizes().chunks[0])


def _blocks(X: Any, y: Any, sample_weight: Any) -> tuple[list, list, list]:
    """The row blocks of X, y and sample_weight, aligned on the chunks of X (or, for
    in-memory X, of the Dask y or sample_weight: X is cut into their chunks)."""
    if is_dask(X):
        x_blocks, lengths = _row_blocks(X)
        rows = _Lengths(X, lengths)
    else:
        ref = y if is_dask(y) else sample_weight
        rows = _Lengths(ref, _row_blocks(ref)[1])
        x_blocks = _aligned(X, rows, len(rows.get()))
    return (x_blocks, _aligned(y, rows, len(x_blocks)),
            _aligned(sample_weight, rows, len(x_blocks)))


def _aligned(values: Any, rows: _Lengths, n_blocks: int) -> list:
    """``values`` (X, y or sample_weight: Dask, NumPy, pandas, list or None) split into
    the row chunks ``rows``."""
    if values is None or np.isscalar(values):  # a scalar sample_weight goes to every chunk
        return [values] * n_blocks
    if is_dask(values):
        if _n_blocks(values) == n_blocks and (
                rows.known is None or _is_frame(values)
                or tuple(values.chunks[0]) == tuple(rows.known)):
            return _row_blocks(values)[0]  # same partitions (lengths checked per chunk)
        lengths = rows.get()
        array = values.to_dask_array(lengths=True) if _is_frame(values) else values
        if not all(np.isfinite(c) for c in array.chunks[0]):
            array = array.compute_chunk_sizes()
        _check_length(sum(lengths), array.shape[0])
        return _row_blocks(array.rechunk({0: lengths}))[0]
    if not hasattr(values, "shape"):
        values = np.asarray(values)
    lengths = rows.get()
    _check_length(sum(lengths), values.shape[0])
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    take = values.iloc if hasattr(values, "iloc") else values
    return [take[bounds[i] : bounds[i + 1]] for i in range(n_blocks)]


def _check_length(n_x: int, n_other: int) -> None:
    if n_x != n_other:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n_x}, {n_other}]."
        )


# ---------------------------------------------------------------- predictions
def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
    """Mean accuracy of ``predict(X)`` against ``y`` (weighted by ``sample_weight``).

    Dask input is scored chunk by chunk on the active scheduler (only two numbers per
    chunk reach the client); in-memory input as scikit-learn's ``ClassifierMixin.score``.
    """
    from sklearn.base import ClassifierMixin

    if not is_dask(X, y, sample_weight):
        return ClassifierMixin.score(self, X, y, sample_weight=sample_weight)
    import dask

    x_blocks, y_blocks, w_blocks = _blocks(X, y, sample_weight)
    shared = dask.delayed(self, pure=False)
    parts = [dask.delayed(_chunk_score, pure=True)(shared, xb, yb, wb)
             for xb, yb, wb in zip(x_blocks, y_blocks, w_blocks, strict=True)]
    (totals,) = dask.compute(dask.delayed(np.sum, pure=True)(parts, axis=0))
    return float(totals[0] / totals[1])


def _chunk_score(estimator, X: Any, y: Any, w: Any) -> np.ndarray:
    """(weighted number of correct predictions, total weight) of one chunk."""
    if len(X) == 0:
        return np.zeros(2)
    truth = np.asarray(y).reshape(-1)
    weights = np.ones(truth.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    correct = estimator.predict(X) == truth
    return np.array([weights @ correct, weights.sum()])


def _apply(block: Any, estimator, name: str, args: tuple, kwargs: dict) -> np.ndarray:
    """The NumPy method on one row chunk."""
    out = getattr(estimator, name)(block, *args, **kwargs)
    return np.asarray(getattr(out, "values", out))


def _output(estimator, kind: str, width: int | None) -> tuple[tuple[int, ...], np.dtype]:
    n_classes = estimator.classes_.size
    if kind == "label":
        return (), estimator.classes_.dtype
    if kind == "score":  # score_samples: one log density per row
        return (), np.dtype(np.float64)
    if kind == "decision":
        return ((), np.dtype(np.float64)) if n_classes == 2 else ((n_classes,), np.float64)
    if kind == "transform":
        return (width,), np.dtype(np.float64)
    return (n_classes,), np.dtype(np.float64)


def predict_lazily(estimator, name: str, X: Any, kind: str, args: tuple = (),
                   kwargs: dict | None = None, *, width: int | None = None,
                   posterior_size: tuple[int, int] | None = None):
    """The lazy Dask result of the predict method ``estimator.<name>(X, *args,
    **kwargs)`` for Dask X, computed chunk by chunk by the NumPy method.

    ``kind``: "proba" (n, K), "label" (n,), "decision" (n,) for two classes else (n, K),
    "transform" (n, ``width``), "score" (n,) floats; "draws" (chain, draw, obs, class)
    with ``posterior_size`` = (chains, draws), and "interval" (obs, class, hdi), as
    DataArrays over Dask arrays.
    """
    kwargs = {} if kwargs is None else kwargs
    import dask
    import dask.array as da
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator, "_params")
    n_features = len(X.columns) if _is_frame(X) else (X.shape[1] if X.ndim == 2 else None)
    if n_features != estimator.n_features_in_:
        raise ValueError(
            f"X has {n_features} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input."
        )
    if kind in ("draws", "interval"):
        return _lazy_dataarray(estimator, name, X, kind, args, kwargs, posterior_size)
    tail, dtype = _output(estimator, kind, width)
    shared = dask.delayed(estimator, pure=False)
    if _is_frame(X):
        parts = [dask.delayed(_apply, pure=True)(p, shared, name, args, kwargs)
                 for p in X.to_delayed()]
        return da.concatenate([da.from_delayed(p, shape=(np.nan, *tail), dtype=dtype)
                               for p in parts])
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    meta = np.empty((0,) * (1 + len(tail)), dtype=dtype)
    if tail:
        return X.map_blocks(_apply, shared, name, args, kwargs, dtype=dtype, meta=meta,
                            chunks=(X.chunks[0], tail))
    return X.map_blocks(_apply, shared, name, args, kwargs, dtype=dtype, meta=meta,
                        drop_axis=1)


def _lazy_dataarray(estimator, name: str, X: Any, kind: str, args: tuple, kwargs: dict,
                    posterior_size: tuple[int, int] | None):
    """``predict_proba_draws`` / ``predict_proba_interval`` for Dask X: the DataArray
    of the NumPy method over a Dask array chunked by rows (``obs``)."""
    import dask
    import dask.array as da
    import xarray as xr

    blocks, lengths = _row_blocks(X)
    if lengths is None:
        lengths = _compute_lengths(X)
    classes = [c.item() if isinstance(c, np.generic) else c for c in estimator.classes_]
    n_classes = len(classes)
    if kind == "draws":
        chains, draws = posterior_size
        dims, axis = ("chain", "draw", "obs", "class"), 2
        shape = lambda n: (chains, draws, n, n_classes)  # noqa: E731
        coords = {"chain": np.arange(chains), "draw": np.arange(draws)}
    else:
        dims, axis = ("obs", "class", "hdi"), 0
        shape = lambda n: (n, n_classes, 2)  # noqa: E731
        coords = {"hdi": ["lower", "higher"]}
    shared = dask.delayed(estimator, pure=False)
    parts = [
        da.from_delayed(dask.delayed(_apply, pure=True)(b, shared, name, args, kwargs),
                        shape=shape(n), dtype=np.float64)
        for b, n in zip(blocks, lengths, strict=True)
    ]
    coords.update({"obs": np.arange(sum(lengths)), "class": classes})
    return xr.DataArray(da.concatenate(parts, axis=axis), dims=dims, coords=coords,
                        name="p")
