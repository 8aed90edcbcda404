"""Kernel density sums of KernelNB (:mod:`bayesgen.families.kernel.family`): log-sum-exps of
Gaussian kernels per feature, in blocks of bounded memory, with an optional
leave-one-out replacement of each row's own kernel weight."""

from __future__ import annotations

import numpy as np

_BUDGET = 4_000_000  # doubles per temporary block (~32 MB)
LOG_2PI = np.log(2.0 * np.pi)


def _fixed(params: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training points (n, d), classes (n,) and weights (n,), from row 0 of any leading dims.

    The fixed data entries may have been broadcast to leading (draw or row) dims by
    the caller; they are the same in every row, so the first one is used.
    """
    points = np.asarray(params["points"])
    cls = np.asarray(params["point_class"])
    w = np.asarray(params["point_weight"])
    return (
        points.reshape(-1, *points.shape[-2:])[0],
        cls.reshape(-1, cls.shape[-1])[0].astype(np.intp),
        w.reshape(-1, w.shape[-1])[0],
    )


def _logsumexp_last(a: np.ndarray) -> np.ndarray:
    """log sum exp over the last axis, overwriting ``a`` (shifted by the row maximum).

    Rows that are ``-inf`` throughout give ``-inf`` (never NaN).
    """
    top = a.max(axis=-1)
    top = np.where(np.isfinite(top), top, 0.0)
    a -= top[..., None]
    np.exp(a, out=a)
    with np.errstate(divide="ignore"):
        return np.log(a.sum(axis=-1)) + top


def _kde_sums(Xt: np.ndarray, Pt: np.ndarray, log_w: np.ndarray, h: np.ndarray,
              own: np.ndarray | None = None, log_own: np.ndarray | None = None,
              by_feature: bool = False) -> np.ndarray:
    """Per draw and row, sum_j log sum_l exp(log w_l - (x_jn - p_jl)^2 / (2 h_sj^2)), (S, n).

    ``Xt`` (d, n) rows, ``Pt`` (d, m) points of one class, ``log_w`` (m,) their log
    weights, ``h`` (S, d) bandwidths of that class per draw. ``own`` (n,), optional: the
    position among the m points of each row's own kernel (-1 for none), whose log weight
    is replaced by ``log_own`` (n,) (leave-one-out). ``by_feature``: no sum over j,
    (S, d, n). No points: -inf. Rows and draws are processed in blocks of at most
    ``_BUDGET`` doubles.
    """
    (d, n), m, S = Xt.shape, Pt.shape[1], h.shape[0]
    out = np.full((S, d, n) if by_feature else (S, n), -np.inf)
    if m == 0:
        return out
    half_prec = 0.5 / h**2
    weighted = bool(np.any(log_w != 0.0))
    step = max(1, min(n, _BUDGET // (m * d)))
    for start in range(0, n, step):
        stop = min(n, start + step)
        sq = Xt[:, start:stop, None] - Pt[:, None, :]  # (d, c, m)
        sq *= sq
        if own is not None:
            hit = np.flatnonzero(own[start:stop] >= 0)
            cols, values = own[start:stop][hit], log_own[start:stop][hit]
        s_step = max(1, _BUDGET // sq.size)
        for s0 in range(0, S, s_step):
            s1 = min(S, s0 + s_step)
            a = sq * -half_prec[s0:s1, :, None, None]  # (s, d, c, m)
            if weighted:
                a += log_w
            if own is not None:
                a[:, :, hit, cols] = values
            lse = _logsumexp_last(a)  # (s, d, c)
            out[s0:s1, ..., start:stop] = lse if by_feature else lse.sum(axis=1)
    return out


def log_lik(X: np.ndarray, P: np.ndarray, cls: np.ndarray, w: np.ndarray, H: np.ndarray,
            full: bool) -> np.ndarray:
    """sum over the observed j of log( sum_i w_i N(x_nj; p_ij, h_kj^2) / W_kj ) for every
    draw, row and class, (S, n, K); ``H`` (S, K, d) bandwidths, ``P`` (m, d) points (NaN:
    not a point of that feature's KDE, whose weight W_kj counts the points observing j),
    ``cls``/``w`` their classes and weights; a missing x_nj drops its factor; ``full=False``
    drops the -1/2 log 2 pi of every observed factor."""
    M = np.isnan(X)
    gaps = bool(M.any())
    Xt = np.ascontiguousarray((np.where(M, 0.0, X) if gaps else X).T)
    S, K, _ = H.shape
    out = np.zeros((S, X.shape[0], K))
    O = (~M).astype(np.float64)
    for k in range(K):
        rows = cls == k
        Pk = P[rows]
        gap = np.isnan(Pk)
        Pt = np.ascontiguousarray(np.where(gap, np.inf, Pk).T)  # inf: weight exp(-inf) = 0
        sums = _kde_sums(Xt, Pt, np.log(w[rows]), H[:, k], by_feature=gaps)
        if gaps:  # (S, d, n): the missing factors dropped
            sums = np.where(M.T[None], 0.0, sums).sum(axis=1)
        W = (~gap * w[rows][:, None]).sum(axis=0)  # (d,)
        norm = np.log(H[:, k]) + np.log(W)  # (S, d)
        if full:
            norm = norm + 0.5 * LOG_2PI
        out[:, :, k] = sums - norm @ O.T
    return out
