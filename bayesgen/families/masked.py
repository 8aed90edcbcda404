"""Missing entries (NaN) in the factorised families: statistics and log-likelihoods.

A factorised likelihood ``log p(x | y=k) = sum_j l_kj(x_j)`` marginalises a missing
x_j by dropping its term; with O (n, d) the observed indicator (1 - M, see
:mod:`bayesgen.data.missing`) every log-likelihood here is the complete-data one on X with
its NaN set to a harmless value, with the dropped terms removed in matrix form (no
per-row branches):

- terms linear in x (Bernoulli, multinomial, Poisson) see x = 0 where it is missing,
  and the x-free terms are summed over the observed features only: ``O @ c_k`` in
  place of ``sum_j c_kj``;
- Gaussian: ``-1/2 [O (x - c)^2 @ (1/var)^T - 2 O (x - c) @ ((mu - c)/var)^T
  + O @ ((mu - c)^2/var + log var + log 2 pi)^T]``.

Fitting uses, per class and feature, the observed entries only: the Gaussian keeps
per-(class, feature) counts ``observed`` N_kj next to its means and centred sums of
squares (Chan et al.'s merge per entry); the count families use ``observed`` N_kj
where the complete case has the class count N_k.
"""

from __future__ import annotations

import numpy as np

from bayesgen.data import missing
from bayesgen.families import gaussian_stats as gstats


# ---------------------------------------------------------------- Gaussian
def gaussian_stats(X: np.ndarray, M: np.ndarray, y: np.ndarray, w: np.ndarray,
                   n_classes: int) -> dict:
    """Per (class, feature) statistics of the observed entries: ``count`` (K,) the
    class weights, ``observed`` N_kj (K, d), ``mean`` (K, d) and centred ``m2`` (K, d)
    over the observed entries, ``rows`` (K,) and ``observed_rows`` (K, d) (rows of
    positive weight); a (class, feature) pair never observed has mean 0 and m2 0."""
    O = (~M).astype(np.float64)
    X0 = np.where(M, 0.0, X)
    R = gstats.one_hot(y, w, n_classes)
    n = R.T @ O
    mean = R.T @ X0 / np.where(n > 0, n, 1.0)
    dev = np.where(M, 0.0, X0 - mean[y])
    m2 = R.T @ (dev * dev)
    constant = _constant_observed(X, y, w, n, mean, m2)
    m2[constant] = 0.0
    positive = (w > 0).astype(np.float64)
    rows = np.bincount(y, weights=positive, minlength=n_classes)
    return {"count": R.sum(axis=0), "mean": mean, "m2": m2, "rows": rows, "observed": n,
            "observed_rows": missing.class_observed_rows(M, y, w, n_classes)}


def _constant_observed(X, y, w, n, mean, m2) -> np.ndarray:
    """(K, d) whether a feature's observed values are constant within a class (then
    m2 is set to exactly 0, as in :func:`._gaussian_stats.diagonal_stats`); only pairs
    whose m2 is within rounding residue of 0 are checked against the data."""
    eps = 4.0 * max(X.shape[0], 1) * np.finfo(np.float64).eps
    with np.errstate(over="ignore"):
        maybe = m2 <= n * (eps * mean) ** 2
    positive = w > 0
    for k, j in np.argwhere(maybe):
        column = X[(y == k) & positive, j]
        column = column[~np.isnan(column)]
        maybe[k, j] = column.size == 0 or column.max() == column.min()
    return maybe


def gaussian_merge(a: dict, b: dict) -> dict:
    """Chan et al.'s merge per (class, feature) with the observed counts N_kj, in
    ``a``'s frame (``b``'s if ``a`` holds no weight)."""
    if a["count"].sum() <= 0 < b["count"].sum():
        a = gstats.reframe(a, *gstats.frame_of(b))
    else:
        b = gstats.reframe(b, *gstats.frame_of(a))
    d = a["mean"].shape[1]
    na = _full(missing.observed_count(a), d)
    nb = _full(missing.observed_count(b), d)
    n = na + nb
    delta = b["mean"] - a["mean"]
    safe = np.where(n > 0, n, 1.0)
    out = {"count": a["count"] + b["count"], "mean": a["mean"] + delta * nb / safe,
           "m2": a["m2"] + b["m2"] + delta**2 * na * nb / safe, "observed": n}
    ra, rb = a.get("rows", a["count"]), b.get("rows", b["count"])
    out["rows"] = ra + rb
    out["observed_rows"] = (_full(a.get("observed_rows", ra[:, None]), d)
                            + _full(b.get("observed_rows", rb[:, None]), d))
    if "loc" in a:
        out["loc"], out["scale"] = a["loc"], a["scale"]
    return out


def _full(value: np.ndarray, d: int) -> np.ndarray:
    return np.broadcast_to(value, (value.shape[0], d)).astype(np.float64)


def gaussian_log_lik(X: np.ndarray, M: np.ndarray, params: dict, full: bool) -> np.ndarray:
    """sum over the observed j of log N(x_nj; mu_kj, var_kj), (..., n, K)."""
    mu, var = params["mu"], params["var"]
    centre = mu.reshape(-1, mu.shape[-1]).mean(axis=0)
    O = (~M).astype(np.float64)
    Xc = np.where(M, 0.0, X - centre)
    mc = mu - centre
    prec = 1.0 / var
    const = mc * mc * prec + np.log(var)
    if full:
        const = const + np.log(2.0 * np.pi)
    T = np.swapaxes
    quad = (Xc * Xc) @ T(prec, -1, -2)
    quad -= 2.0 * (Xc @ T(mc * prec, -1, -2))
    quad += O @ T(const, -1, -2)
    quad *= -0.5
    return quad


# ----------------------------------------------------------- count families
def observed_matmul(M, B: np.ndarray) -> np.ndarray:
    """``O @ B^T`` over the last axis, O = 1 - M the observed indicator (n, d) (dense,
    or sparse M: ``sum_j B - M @ B^T``) and B (..., K, d): (..., n, K)."""
    from bayesgen.data import sparse

    if sparse.is_sparse(M):
        return B.sum(axis=-1)[..., None, :] - missing.missing_matmul(M, B)
    return sparse.matmul_t((~M).astype(np.float64), B)


def count_stats(X, y: np.ndarray, w: np.ndarray, n_classes: int, who: str) -> dict:
    """:func:`._dirichlet.class_sums` of X (BernoulliNB, PoissonNB); with missing
    entries (NaN), those count as 0 and the observed counts N_kj (``observed``, (K, d))
    are added."""
    from bayesgen.families import dirichlet as dr

    M = missing.mask(X)
    if M is None:
        return dr.class_sums(X, y, w, n_classes, who)
    stats = dr.class_sums(missing.filled(X), y, w, n_classes, who)
    return missing.with_observed(stats, M, y, w)


class CountStats:
    """``check_X`` (counts), ``stats``, ``merge`` and ``stats_attributes`` of the families
    whose statistics are the weighted class counts N_k (K,) and feature sums
    ``feature_count`` (K, d) (:func:`count_stats`): PoissonNB, MultinomialNB, and
    BernoulliNB and ExponentialNB with their own ``check_X``; ``who`` names the estimator."""

    who: str

    def check_X(self, X, *, method: str, who: str):
        """Non-negative values; whole numbers for posterior methods (sparse X: its
        stored values, duplicates summed first)."""
        from bayesgen.data import sparse
        from bayesgen.data.validation import check_counts

        return check_counts(sparse.canonical(X), method, who)

    def stats(self, X, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """:func:`count_stats` (``ValueError`` naming ``sample_weight`` on overflow)."""
        return count_stats(X, y, w, n_classes, self.who)

    def merge(self, a: dict, b: dict) -> dict:
        """Statistics of the union of two disjoint data sets (sums)."""
        return add_count_stats(a, b)

    def stats_attributes(self, stats: dict) -> dict:
        """``feature_count_`` (K, d): the weighted feature counts of the fit."""
        return {"feature_count_": stats["feature_count"]}


def add_count_stats(a: dict, b: dict) -> dict:
    """Sums of two sets of count statistics, ``observed`` included when either side
    has it (the other's is its class count)."""
    out = {key: a[key] + b[key] for key in a if key != "observed"}
    return missing.merge_observed(out, a, b)


def renormalise(out: np.ndarray, impossible, X, M, theta: np.ndarray):
    """Multinomial with missing counts: ``out - n_O log s_O`` with s_O = O @ theta^T the
    probability of the observed words (..., n, K) and n_O the observed row total (X
    with 0 for NaN). A row whose observed words all have probability 0 in a class
    (MLE) but some count is impossible there (``impossible`` updated); a row with no
    observed count (n_O = 0) has log-likelihood 0 under every class."""
    from bayesgen.data import sparse

    total = sparse.row_sum(X)[:, None]  # n_O (n, 1)
    s = observed_matmul(M, theta)
    positive = s > 0
    with np.errstate(divide="ignore"):
        log_s = np.log(np.where(positive, s, 1.0))
    out = out - np.where(total > 0, total * log_s, 0.0)
    dead = (total > 0) & ~positive
    if dead.any():
        impossible = dead if impossible is None else impossible | dead
    return out, impossible
