"""Leave-one-out predictives with the prior re-resolved without the row (refit semantics).

A default prior that reads the data is a function prior(stats) of the weighted
statistics; for every training row i::

    stats_-i = stats(rows without i)            the family's ``stats`` hook
    prior_-i = prior(stats_-i)                  the family's ``prior`` hook
    post_-i  = posterior(stats_-i, prior_-i)    the family's ``posterior`` hook
    out[i]   = log_predictive(z, post_-i)       at z_i itself, or at test rows

the conjugate part of ``predict_joint_log_proba`` of the refit without row i, in the
fit's frame (the default priors are affine-equivariant). Every class's posterior moves.
Up to :data:`REFIT_MAX_ROWS` training rows; beyond, the hyper-parameters are held at
their full-data values (they move by O(1/N)) and the downdates of
:mod:`bayesgen.inference.exact_loo` are used. For the Gaussian families (:data:`PURE`)
the statistics without row i are the full ones downdated (:func:`downdated`) where that
is exact to rounding, one copy of the family serves every row, and the evidence search
starts at the full-data choice. The family is deep-copied once per call, so the fitted
family never changes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayesgen.data import missing
from bayesgen.families import gaussian_stats as gstats
from bayesgen.families.mvn.diagonal import DiagonalMVNFamily
from bayesgen.families.mvn.family import MVNFamily

#: training rows up to which a data-dependent prior is re-resolved without each row
REFIT_MAX_ROWS = 1000

#: family types (exact types, not subclasses) whose ``prior(record=False)`` and
#: ``posterior`` leave the family unchanged and whose statistics are Gaussian class
#: moments (``count``, ``mean``, ``scatter``, ``rows``) that :func:`downdated` subtracts
PURE = (MVNFamily, DiagonalMVNFamily)


def applies(family, n_rows: int) -> bool:
    """Whether the leave-one-out of ``n_rows`` training rows re-resolves the prior of
    ``family`` per row: its prior reads the data and n_rows <= :data:`REFIT_MAX_ROWS`."""
    return bool(family.prior_uses_data()) and n_rows <= REFIT_MAX_ROWS


@dataclass(frozen=True)
class RowPosteriors:
    """The posterior without each training row, with the prior re-resolved: row i's
    ``posts[i]`` is scored by ``families[i]``, the family ``learned`` from the statistics
    without row i (e.g. the categories of a categorical part)."""

    families: tuple
    posts: tuple

    def log_predictive(self, Z_test: Any) -> np.ndarray:
        """log p(z_test_j | y = k, D without training row i), (n, m, K), internal frame."""
        return np.stack([fam.log_predictive(Z_test, post)
                         for fam, post in zip(self.families, self.posts, strict=True)])


def posteriors(family, Z: Any, y: np.ndarray, w: np.ndarray, n_classes: int,
               leave: np.ndarray | None = None) -> RowPosteriors:
    """The posterior without each training row i: stats(rows without i), then
    ``prior(..., record=False)`` and ``posterior`` of the family (deep-copied: the fitted
    family is not modified). Z (n, d) internal frame; y, w (n,); row i leaves with
    ``leave[i]`` of its weight (None: its whole weight w_i; a weight is a replication
    count, so leave = min(w, 1) leaves out one copy of the row)."""
    own = copy.deepcopy(family)
    index = np.arange(y.size)
    w = np.asarray(w, dtype=float)
    leave = w if leave is None else np.asarray(leave, dtype=float)
    pure = type(own) in PURE
    full = start = safe = None
    if pure:
        full = own.stats(Z, y, w, n_classes)
        if "groups" not in full:
            start = own.prior(full, record=False)
        safe = subtractable(Z, y, w, n_classes, full)
    families, posts = [], []
    for i in range(y.size):
        rest = w[i] - leave[i]
        if safe is not None and safe[i]:
            stats = downdated(full, Z[i], int(y[i]), leave[i], dropped=rest <= 0 < w[i])
        elif rest > 0:
            weights = w.copy()
            weights[i] = rest
            stats = own.stats(Z, y, weights, n_classes)
        else:
            keep = np.delete(index, i)
            stats = own.stats(Z[keep], y[keep], w[keep], n_classes)
        prior = (own.prior(stats, record=False) if start is None
                 else own.prior(stats, record=False, start=start))
        posts.append(own.posterior(stats, prior))
        families.append(own.learned(stats))
    return RowPosteriors(tuple(families), tuple(posts))


def subtractable(Z: Any, y: np.ndarray, w: np.ndarray, n_classes: int,
                 full: dict) -> np.ndarray | None:
    """Whether the statistics without each row may be :func:`downdated` ones, (n,) bool,
    or None when none may (sparse rows, or missing entries: pattern-grouped statistics).

    Row i qualifies when every feature takes at least three distinct values over the
    positive-weight rows of its class: without the row the class keeps two, so no
    feature becomes constant within it (``scatter_stats`` gives a constant feature exact
    zeros, a subtraction its rounding residue) and the class keeps rows."""
    if not isinstance(Z, np.ndarray) or "groups" in full or missing.has_missing(Z):
        return None
    varied = np.zeros(n_classes, dtype=bool)
    positive = w > 0
    for k in range(n_classes):
        rows = Z[(y == k) & positive]
        if rows.shape[0] >= 3:
            ordered = np.sort(rows, axis=0)
            distinct = 1 + (np.diff(ordered, axis=0) != 0).sum(axis=0)
            varied[k] = bool(np.all(distinct >= 3))
    return varied[y]


def downdated(full: dict, z: np.ndarray, k: int, weight: float, *, dropped: bool) -> dict:
    """The Gaussian class statistics without ``weight`` of one row ``z`` (d,) of class k.

    :func:`bayesgen.families.gaussian_stats.merge` of ``full`` with the row at weight
    -``weight``: with n = N_k - weight and delta = z - mean_k, mean_k - weight delta / n
    and S - (N_k weight / n) delta delta^T (per class, or pooled), the other classes
    unchanged; ``rows`` one less in class k when the row leaves entirely (``dropped``).
    Exact algebra, rounding of the order of the full statistics' where
    :func:`subtractable` allows it (``tests/test_loo_refit.py`` compares it with
    recomputation)."""
    K, d = full["mean"].shape
    count = np.zeros(K)
    count[k] = -weight
    mean = np.zeros((K, d))
    mean[k] = z
    row = {"count": count, "mean": mean, "scatter": np.zeros_like(full["scatter"])}
    if "loc" in full:
        row["loc"], row["scale"] = full["loc"], full["scale"]
    out = gstats.merge(full, row)
    out["scatter"] = (out["scatter"] + np.swapaxes(out["scatter"], -1, -2)) / 2.0
    rows = full["rows"].copy()
    rows[k] -= float(dropped)
    out["rows"] = rows
    return out


def log_predictive(family, Z: Any, y: np.ndarray, w: np.ndarray, n_classes: int,
                   Z_test: Any = None, leave: np.ndarray | None = None) -> np.ndarray:
    """log p(z | y = k, D without training row i) with the prior of D without row i.

    Parameters
    ----------
    family : Family
        The fitted family (not modified: a deep copy is used).
    Z : ndarray or sparse matrix of shape (n, d)
        The training rows in the fit's internal frame.
    y, w : ndarray of shape (n,)
        Class indices and weights of the training rows (row i leaves with its whole
        weight w_i).
    n_classes : int
        K.
    Z_test : ndarray or sparse matrix of shape (m, d), optional
        Rows to score; None: each training row at itself.
    leave : ndarray of shape (n,), optional
        The weight row i leaves with (None: all of w_i).

    Returns
    -------
    ndarray of shape (n, K), or (n, m, K) with ``Z_test``
        In the internal frame (no Jacobian), no label term.
    """
    rows = posteriors(family, Z, y, w, n_classes, leave)
    if Z_test is not None:
        return rows.log_predictive(Z_test)
    return np.stack([fam.log_predictive(Z[i:i + 1], post)[0] for i, (fam, post)
                     in enumerate(zip(rows.families, rows.posts, strict=True))])
