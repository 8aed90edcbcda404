"""Per-class weighted counts, means and centred second moments in one pass over X.

The rows of each class are visited in cached blocks of about :data:`BLOCK_ROWS` rows;
within a block the moments are two-pass (mean, then a BLAS product on the centred
block) and blocks are combined by Chan, Golub & LeVeque's update
(:mod:`bayesgen.families.gaussian_stats`): X is read once, no (n, d) temporary, the
accuracy of the two-pass formula. Each class depends only on its own rows in their
order (relabeling permutes the result bit for bit); with ``n_jobs`` > 1 and at least
2^21 entries, runs of blocks go to threads and are merged in the same order (bit for
bit one thread's result)."""

from __future__ import annotations

import numpy as np

from bayesgen.utils.threads import map_threads, n_threads, one_blas_thread

#: rows per block: BLOCK_ROWS x d float64 stays within a core's cache for d ~ 30
BLOCK_ROWS = 2048


def class_order(y: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Row positions sorted by class, stable (n,), and the class boundaries (K + 1,):
    the rows of class k are ``order[bounds[k]:bounds[k + 1]]``, in their order in X."""
    codes = y.astype(np.uint16) if n_classes <= 2**16 else y  # radix sort: O(n)
    order = np.argsort(codes, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(y, minlength=n_classes))))
    return order, bounds


def class_moments(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, *,
                  full: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted counts (K,), means (K, d) and centred second moments of every class.

    ``full=False``: the sums of squares ``m2`` (K, d),
    ``sum_{y_n=k} w_n (x_nj - mean_kj)^2``; ``full=True``: the scatter matrices
    (K, d, d), ``sum_{y_n=k} w_n (x_n - mean_k)(x_n - mean_k)^T`` (symmetric to
    rounding). A class without weight gets count, mean and moments 0.
    """
    d = X.shape[1]
    count = np.zeros(n_classes)
    mean = np.zeros((n_classes, d))
    m2 = np.zeros((n_classes, d, d) if full else (n_classes, d))
    unit = bool(np.all(w == 1.0))
    order, bounds = class_order(y, n_classes)
    blocks = [(k, start, min(start + BLOCK_ROWS, bounds[k + 1]))
              for k in range(n_classes) for start in range(bounds[k], bounds[k + 1], BLOCK_ROWS)]
    n_chunks = min(n_threads(X.size), max(len(blocks), 1))  # the estimator's n_jobs
    edges = np.linspace(0, len(blocks), n_chunks + 1).astype(int)
    rows = min(BLOCK_ROWS, X.shape[0])

    def chunk(c: int) -> list:  # consecutive blocks with their own buffer (one thread)
        buffer = np.empty((rows, d))
        return [_block(X, w, order[a:b], unit, full, buffer)
                for _, a, b in blocks[edges[c] : edges[c + 1]]]

    with one_blas_thread():  # many small products (see bayesgen.utils.threads)
        results = [r for part in map_threads(chunk, n_chunks) for r in part]
    for (k, _, _), result in zip(blocks, results, strict=True):  # in order: deterministic
        if result is not None:
            _merge_into(k, count, mean, m2, *result)
    return count, mean, m2


def _block(X: np.ndarray, w: np.ndarray, rows: np.ndarray, unit: bool, full: bool,
           buffer: np.ndarray) -> tuple | None:
    """Weight, mean and centred moments (nb, mb, Mb) of the rows ``rows`` of X, or None
    when they have no weight; ``unit``: all weights are 1 (plain sums, and
    ``Xb.T @ Xb``, a symmetric rank-k update)."""
    Xb = np.take(X, rows, axis=0, out=buffer[: rows.size])
    if unit:
        nb, mb = float(rows.size), Xb.sum(axis=0) / rows.size  # pairwise summation
        Xb -= mb
        return nb, mb, (Xb.T @ Xb if full else np.einsum("nj,nj->j", Xb, Xb))
    wb = w[rows]
    nb = float(wb.sum())
    if not nb > 0:
        return None
    mb = (wb @ Xb) / nb
    Xb -= mb
    return nb, mb, ((Xb.T * wb) @ Xb if full else wb @ (Xb * Xb))


def _merge_into(k: int, count: np.ndarray, mean: np.ndarray, m2: np.ndarray,
                nb: float, mb: np.ndarray, Mb: np.ndarray) -> None:
    """Add a block (weight nb, mean mb, centred moments Mb) to class k's statistics."""
    na = count[k]
    if na == 0:
        count[k], mean[k], m2[k] = nb, mb, Mb
        return
    n = na + nb
    delta = mb - mean[k]
    mean[k] += delta * (nb / n)
    f = na * nb / n
    m2[k] += Mb
    m2[k] += np.multiply.outer(delta, delta * f) if m2.ndim == 3 else delta * delta * f
    count[k] = n


def diagonal_quadratic(X: np.ndarray, centre: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``[(X - centre)^2, X - centre] @ W`` for X (n, d), centre (d,), W (2 d, K):
    the scores of a diagonal Gaussian as one product per block of rows, (n, K).

    Each block's centred values and their squares are written side by side into one
    cached buffer (no (n, d) temporary), then multiplied by W with one BLAS thread.
    """
    n, d = X.shape
    out = np.empty((n, W.shape[1]))
    buffer = np.empty((min(BLOCK_ROWS, n), 2 * d))
    with one_blas_thread():  # many small products (see bayesgen.utils.threads)
        for start in range(0, n, BLOCK_ROWS):
            stop = min(start + BLOCK_ROWS, n)
            H = buffer[: stop - start]
            np.subtract(X[start:stop], centre, out=H[:, d:])
            np.multiply(H[:, d:], H[:, d:], out=H[:, :d])
            np.matmul(H, W, out=out[start:stop])
    return out
