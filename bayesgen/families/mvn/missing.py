"""Missing entries (NaN) in LDA/QDA: statistics at fit, marginal densities at predict.

Missingness is ignorable: a row's likelihood is the Gaussian marginal
N(x_o; mu_{k,o}, Sigma_{k,oo}) of its observed coordinates o, and the conjugate
predictive the marginal of the Student-t, which keeps its degrees of freedom
(the family's Student-t on the columns o with nu_k lowered by d - |o|). A row with
nothing observed has p = 1. Rows are grouped by pattern: one set of Cholesky factors
per pattern, class and draw; far rows likewise. With a data-augmentation posterior
(:mod:`.augment`) ``post`` stacks T conjugate posteriors and the predictive is their
Rao-Blackwellised average."""

from __future__ import annotations

import numpy as np

from bayesgen.families import far as _far
from bayesgen.families import gaussian_stats as gstats
from bayesgen.families.far import attach_frame
from bayesgen.families.mvn import patterns as pat
from bayesgen.utils.logspace import log_mean_exp


def patterns(missing: np.ndarray):
    """Yield (rows, observed columns) per distinct missingness pattern of ``missing``."""
    uniq, inverse = np.unique(missing, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(uniq.shape[0] + 1))
    for p in range(uniq.shape[0]):
        yield order[bounds[p]:bounds[p + 1]], np.flatnonzero(~uniq[p])


# ------------------------------------------------------------------ fit
def _with_groups(groups: dict, count: np.ndarray, rows: np.ndarray, tied: bool) -> dict:
    """The statistics of :func:`stats` around their ``groups``."""
    return {"count": count, "rows": rows, "groups": groups,
            **pat.available_case(groups, count, tied)}


def stats(family, Z: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
    """Statistics of training rows with missing entries (internal frame).

    ``count`` (K,) and ``rows`` (K,) count every row (for the class prior); ``groups``
    the (pattern, class) statistics of the rows with an observed entry
    (:func:`.patterns.group_stats`); ``mean``, ``scatter`` and ``observed`` the
    available-case class statistics (:func:`.patterns.available_case`), which set
    the prior's data defaults and EM's start.
    """
    rows = np.bincount(y, weights=(w > 0).astype(np.float64), minlength=n_classes)
    out = _with_groups(pat.group_stats(Z, y, w, n_classes),
                       np.bincount(y, weights=w, minlength=n_classes), rows, family.tied)
    return attach_frame(out, family.frame)


def _as_groups(stats: dict, tied: bool) -> dict:
    """The groups of complete-data statistics: one fully observed group per class (LDA:
    the pooled scatter goes with the first class that has weight)."""
    if "groups" in stats:
        return stats["groups"]
    count = stats["count"]
    K, d = stats["mean"].shape
    has = np.flatnonzero(count > 0)
    if tied:
        scatter = np.zeros((K, d, d))
        if has.size:
            scatter[has[0]] = stats["scatter"]
    else:
        scatter = stats["scatter"]
    return {"obs": np.ones((has.size, d), dtype=bool), "cls": has.astype(np.intp),
            "count": count[has], "rows": gstats.sample_rows(stats)[has],
            "mean": stats["mean"][has], "scatter": scatter[has]}


def merge(family, a: dict, b: dict) -> dict:
    """Statistics of two disjoint batches, either with missing entries (partial_fit,
    bg.merge, Dask): groups merged key by key, in ``a``'s frame (``b``'s if ``a`` is
    empty)."""
    target = b if a["count"].sum() <= 0 < b["count"].sum() else a
    loc, scale = gstats.frame_of(target)
    parts = []
    for one in (a, b):
        c_old, s_old = gstats.frame_of(one)
        groups = _as_groups(one, family.tied)
        if not (np.array_equal(c_old, loc) and np.array_equal(s_old, scale)):
            groups = pat.reframe_groups(groups, s_old / scale, (c_old - loc) / scale)
        parts.append(groups)
    out = _with_groups(pat.merge_groups(*parts), a["count"] + b["count"],
                       gstats.sample_rows(a) + gstats.sample_rows(b), family.tied)
    if "loc" in target:
        out["loc"], out["scale"] = loc, scale
    return out


# ------------------------------------------------------------ predict
def _sub_params(params: dict, o: np.ndarray) -> dict:
    return {"mu": params["mu"][..., o], "cov": params["cov"][..., o[:, None], o]}


def _by_pattern(M: np.ndarray, shape: tuple, score, n_out: int = 1):
    """Arrays of ``shape`` (..., n, K) holding ``score(rows, o)`` (``n_out`` arrays
    (..., len(rows), K)) for each missingness pattern of ``M`` (n, d) with observed
    columns o, and 0 for a row with nothing observed."""
    out = [np.zeros(shape) for _ in range(n_out)]
    for rows, o in patterns(M):
        if o.size:
            values = score(rows, o)
            for target, value in zip(out, values if n_out > 1 else (values,), strict=True):
                target[..., rows, :] = value
    return out if n_out > 1 else out[0]


def log_lik(family, X: np.ndarray, params: dict, full: bool) -> np.ndarray:
    """log N(x_o; mu_{k,o}, Sigma_{k,oo}) per row and class, (..., n, K); 0 for a row
    with nothing observed. ``full=False`` (point estimates): the family's discriminant
    form within each pattern (it differs from the full log-density by a term equal for
    every class of a row)."""
    shape = (*params["mu"].shape[:-2], X.shape[0], params["mu"].shape[-2])
    return _by_pattern(np.isnan(X), shape, lambda rows, o: family.log_lik(
        X[np.ix_(rows, o)], _sub_params(params, o), full=full))


def _sub_post(post: dict, o: np.ndarray) -> dict:
    d = post["m"].shape[-1]
    return dict(post, m=post["m"][..., o], Psi=post["Psi"][..., o[:, None], o],
                nu=np.asarray(post["nu"], dtype=np.float64) - (d - o.size))


def _predictive(post: dict, M: np.ndarray, score) -> np.ndarray:
    """(n, K): ``score(rows, o, sub)`` of each missingness pattern of ``M`` (n, d) at the
    posterior's marginal ``sub`` over the observed columns o, 0 for a row with nothing
    observed, averaged over a data-augmentation stack (a posterior with ``m`` (T, K, d))."""
    stack = ([post] if post["m"].ndim == 2 else
             [dict(post, m=post["m"][t], Psi=post["Psi"][t]) for t in range(post["m"].shape[0])])
    values = [_by_pattern(M, (M.shape[0], one["m"].shape[0]),
                          lambda rows, o, one=one: score(rows, o, _sub_post(one, o)))
              for one in stack]
    return values[0] if len(values) == 1 else log_mean_exp(np.stack(values), axis=0)


def log_predictive(family, X: np.ndarray, post: dict) -> np.ndarray:
    """Posterior predictive log p(x_o | y=k, data), (n, K): the Student-t marginal
    (module docstring), averaged over a data-augmentation stack."""
    return _predictive(post, np.isnan(X), lambda rows, o, sub: family.log_predictive(
        X[np.ix_(rows, o)], sub))


def loo_at_patterns(algebra, post: dict, X: np.ndarray, y: np.ndarray, w: np.ndarray,
                    X_test: np.ndarray) -> np.ndarray:
    """``algebra.loo_at`` (:meth:`.niw.NIW.loo_at`, (n, m, K)) at test rows with missing
    entries: per pattern, the posterior's marginal over the observed columns (the
    downdate of a marginal is the marginal of the downdate); 0 for nothing observed."""
    shape = (y.size, X_test.shape[0], post["m"].shape[0])
    return _by_pattern(np.isnan(X_test), shape, lambda rows, o: algebra.loo_at(
        _sub_post(post, o), X[:, o], y, w, X_test[np.ix_(rows, o)]))


def far_terms(family, far, params: dict):
    """(a2, a1, a0) of far rows with missing entries: per pattern, the terms of the
    observed columns (:func:`._far.mvn_terms`)."""
    shape = (*params["mu"].shape[:-2], far.rows.size, params["mu"].shape[-2])
    return tuple(_by_pattern(np.isnan(far.ZN), shape, lambda rows, o: _far.mvn_terms(
        family, far.take(rows).columns(o), _sub_params(params, o)), n_out=3))


def far_log_predictive(family, far, post: dict) -> np.ndarray:
    """Student-t predictive of far rows with missing entries or from a stack, (m, K)."""
    return _predictive(post, np.isnan(far.ZN), lambda rows, o, sub: _far.mvn_predictive(
        family, far.take(rows).columns(o), sub))


# ------------------------------------------------------------ LDA transform
def expected_rows(Z: np.ndarray, mu: np.ndarray, cov: np.ndarray,
                  resp: np.ndarray) -> np.ndarray:
    """Z (n, d) with each missing entry replaced by its expectation given the row's
    observed entries under the fitted Gaussian mixture (shared covariance ``cov``
    (d, d), class means ``mu`` (K, d), class probabilities ``resp`` (n, K) = p(k | z_o))::

        E[z_m | z_o] = sum_k p(k | z_o) (mu_km + S_mo S_oo^-1 (z_o - mu_ko))

    Used by LDA's ``transform``: the projection of a row with gaps is the projection of
    its posterior mean (projection is linear). Complete rows are returned unchanged; a
    row with nothing observed becomes sum_k p(k) mu_k.
    """
    out = Z.copy()
    for rows, o in patterns(np.isnan(Z)):
        m = np.setdiff1d(np.arange(Z.shape[1]), o)
        cond = np.broadcast_to(mu[:, m], (rows.size, *mu[:, m].shape))  # (r, K, |m|)
        if o.size and m.size:
            gain = np.linalg.solve(cov[np.ix_(o, o)], cov[np.ix_(o, m)])  # (|o|, |m|)
            cond = cond + (Z[np.ix_(rows, o)][:, None, :] - mu[:, o]) @ gain
        out[np.ix_(rows, m)] = np.einsum("rk,rkm->rm", resp[rows], cond)
    return out
