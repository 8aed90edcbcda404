"""Kernel-density naive Bayes: a weighted Gaussian KDE per class and feature.

Model, per class k and feature j, with the training points i of class k::

    p(x_j | y = k) = sum_i w_i N(x_j; x_ij, h_kj^2) / W_k,     W_k = sum_i w_i

The bandwidths h_kj are the only parameters; the training points are fixed data.
Estimation maximises, for every (k, j) at once, the weighted leave-one-out (LOO)
log-likelihood over t = log h::

    LOO(h) = sum_i w_i log( sum_l v_il N(x_ij; x_lj, h^2) / (W_k - u_i) )
    v_il = w_l (l != i),   v_ii = w_i - u_i,   u_i = min(w_i, 1)

(one *unit* of weight left out, so a weight of 2 is a duplicated row; the MLE divides
the weights by the smallest first). MAP adds ``log h_kj ~ Normal(log s_kj,
bandwidth_sd^2)`` around Silverman's ``s_kj = 0.9 min(sd, IQR / 1.34) W_k^(-1/5)``.
The search (:mod:`.bandwidth`) runs over ``[s_kj / 1000, 10 s_kj]`` (the lower end when
LOO is unbounded as h -> 0); a zero spread gets a scale-aware floor, so rescaling a
feature rescales its bandwidths. No conjugate prior: no closed-form posterior, evidence
or exact LOO. MCMC (:mod:`.pymc`) samples the MAP's prior times exp(LOO(h)) as
``pm.Potential("x_loglik")``; ``idata_``'s pointwise log-likelihood is each training
row's LOO term (:meth:`KernelFamily.train_log_lik`). Unlabeled rows: the centres stay
the labeled points and EM re-chooses the bandwidths (:mod:`bayesgen.semi.kernel`).
Everything is in the internal frame z = (x - c) / s (``frame``). Cost: O(n_k^2 d) per
objective evaluation, about 50 per class; prediction O(n_test n_train d)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from bayesgen.families import gaussian_stats as gstats
from bayesgen.families.far import RealColumns, attach_frame
from bayesgen.families.kernel import far as _kernel_far
from bayesgen.families.kernel import missing as km
from bayesgen.families.kernel import pymc
from bayesgen.families.kernel.bandwidth import (
    _loo,
    _loo_slope,
    _maximise,
    _rows_slope,
    _rows_term,
    silverman,
)
from bayesgen.families.kernel.kde import _fixed, log_lik
from bayesgen.families.protocol import Capabilities
from bayesgen.families.semi_hooks import UnlabeledHooks


def _silverman(stats: dict) -> np.ndarray:
    """Silverman's bandwidths (K, d); with missing entries, each feature's from its
    observed points (:func:`.missing.per_feature`)."""
    return km.per_feature(silverman, stats) if km.has_gaps(stats) else silverman(stats)


class KernelFamily(RealColumns, UnlabeledHooks):
    """Per-class, per-feature Gaussian KDE whose bandwidths are the parameters.

    Parameters
    ----------
    bandwidth_sd : float
        Prior sd of log h_kj around log of Silverman's bandwidth (MAP), > 0.
    """

    name = "kernel"
    param_dims: ClassVar[dict] = {"bandwidth": ("class", "feature")}
    positive_only = False
    #: NaN in X is a missing value: per-feature KDEs of the observed points, a missing
    #: x_j drops its factor (:mod:`bayesgen.families.kernel.missing`). No conjugate prior:
    #: no closed-form posterior, evidence or exact LOO. The training points are fixed
    #: entries of ``params`` and each training row's likelihood is its leave-one-out term;
    #: the class densities are KDEs of the labeled points (:mod:`bayesgen.semi.kernel`).
    capabilities = Capabilities(missing=True, conjugate=False, evidence=False,
                                exact_loo=False, real_valued=True, far_rows=True,
                                fixed_params=True, train_log_lik=True, continuous=True,
                                kernel_density=True)

    def __init__(self, *, bandwidth_sd: float = 1.0) -> None:
        self.bandwidth_sd = bandwidth_sd
        self.labels: np.ndarray | None = None
        self.frame = None  # bayesgen.data.frame.Frame of the internal coordinates, set at fit

    # ------------------------------------------------------------------ data
    def stats(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """The rows of positive weight: ``X`` (n, d), ``y`` (n,), ``w`` (n,), their positions
        ``row`` among the ``n_rows`` given, ``count`` (K,) and the frame."""
        keep = w > 0
        y = np.asarray(y, dtype=np.intp)[keep]
        w = np.asarray(w, dtype=np.float64)[keep]
        return attach_frame({
            "count": np.bincount(y, weights=w, minlength=n_classes).astype(np.float64),
            "X": np.array(X[keep], dtype=np.float64),
            "y": y,
            "w": w,
            "row": np.flatnonzero(keep),
            "n_rows": int(keep.size),
        }, self.frame)

    def merge(self, a: dict, b: dict) -> dict:
        """The rows of ``a`` then ``b`` (``b``'s points in ``a``'s frame, rows shifted)."""
        Xb = b["X"]
        if "loc" in a and "loc" in b:
            r = b["scale"] / a["scale"]
            Xb = Xb * r + (b["loc"] - a["loc"]) / a["scale"]
        frame = {"loc": a["loc"], "scale": a["scale"]} if "loc" in a else {}
        return {
            **frame,
            "count": a["count"] + b["count"],
            "X": np.concatenate([a["X"], Xb]),
            "y": np.concatenate([a["y"], b["y"]]),
            "w": np.concatenate([a["w"], b["w"]]),
            "row": np.concatenate([a["row"], b["row"] + a["n_rows"]]),
            "n_rows": a["n_rows"] + b["n_rows"],
        }

    # ----------------------------------------------------------------- prior
    def prior(self, stats: dict, *, record: bool = True) -> dict:
        """``centre`` (K, d): Silverman's bandwidths; ``sd``: prior sd of log h."""
        try:
            sd = float(self.bandwidth_sd)
        except (TypeError, ValueError):
            sd = np.nan
        if not (np.isfinite(sd) and sd > 0):
            raise ValueError(
                f"bandwidth_sd must be a finite number > 0; got {self.bandwidth_sd!r}."
            )
        if km.has_gaps(stats):
            km.check_observed(stats, self.labels)
        return {"centre": _silverman(stats), "sd": sd}

    # -------------------------------------------------------------- estimates
    def require_points(self, stats: dict, what: str) -> None:
        """Every class must keep positive weight when one unit of weight is left out."""
        y, w = stats["y"], stats["w"]
        for k, total in enumerate(stats["count"]):
            wk = w[y == k]
            if wk.size == 0 or total - min(wk.max(), 1.0) <= 0:
                raise ValueError(
                    f"{what} needs at least 2 samples in every class (the leave-one-out "
                    f"likelihood of a single point is undefined); class "
                    f"{gstats.label(self.labels, k)} has {total:g}."
                )

    def fit_bandwidths(self, stats: dict, centre: np.ndarray, sd: float | None,
                       rows: tuple | None = None) -> dict:
        """Per class k, h maximising LOO(h) (``sd`` None) or LOO(h) + log prior (MAP), around
        ``centre`` (K, d). ``rows = (Z_u, A, h_old)``: plus sum_n A_nk log p(z_nj | y=k, h)
        of other rows (EM's M-step, :meth:`em_m_step`), keeping ``h_old`` where the search
        found no higher value. With missing entries, feature by feature on its observed
        points and rows (exact: the objective of (k, j) involves feature j only)."""
        Z_u, A, h_old = rows if rows is not None else (None, None, None)
        if km.has_gaps(stats) or (Z_u is not None and np.isnan(Z_u).any()):
            h = np.empty_like(centre)
            for j in range(centre.shape[1]):
                part = None
                if rows is not None:
                    seen = ~np.isnan(Z_u[:, j])
                    part = (Z_u[seen, j:j + 1], A[seen], h_old[:, j:j + 1])
                h[:, j:j + 1] = self.fit_bandwidths(km.feature_stats(stats, j),
                                                    centre[:, j:j + 1], sd, part)["bandwidth"]
            return {"bandwidth": h, **self.fixed_params(stats)}
        self.require_points(stats, "KernelNB")
        X, y, w = stats["X"], stats["y"], stats["w"]
        U = None if Z_u is None else np.ascontiguousarray(Z_u.T)
        h = np.empty_like(centre)
        for k in range(centre.shape[0]):
            P, wk, log_c = np.ascontiguousarray(X[y == k].T), w[y == k], np.log(centre[k])
            a = None if A is None else A[:, k]

            def objective(t, P=P, wk=wk, a=a, log_c=log_c):
                value = _loo(P, wk, t)
                if U is not None:
                    value = value + _rows_term(U, P, wk, a, t)
                return value - (0.0 if sd is None else 0.5 * ((t - log_c) / sd) ** 2)

            def slope(t, P=P, wk=wk, a=a, log_c=log_c):
                f1, f2 = _loo_slope(P, wk, t)
                if U is not None:
                    g1, g2 = _rows_slope(U, P, wk, a, t)
                    f1, f2 = f1 + g1, f2 + g2
                if sd is None:
                    return f1, f2
                return f1 - (t - log_c) / sd**2, f2 - 1.0 / sd**2

            t_new = _maximise(objective, centre[k], slope)
            if h_old is not None:
                t_old = np.log(h_old[k])
                t_new = np.where(objective(t_new) >= objective(t_old), t_new, t_old)
            h[k] = np.exp(t_new)
        return {"bandwidth": h, **self.fixed_params(stats)}

    def mle(self, stats: dict) -> dict:
        """Bandwidths maximising the weighted LOO log-likelihood, (K, d), plus the data
        (weights divided by the smallest: only relative weights matter)."""
        if stats["w"].size:
            unit = stats["w"].min()
            stats = dict(stats, w=stats["w"] / unit, count=stats["count"] / unit)
        if km.has_gaps(stats):
            km.check_observed(stats, self.labels)
        return self.fit_bandwidths(stats, _silverman(stats), None)

    def map(self, stats: dict, prior: dict) -> dict:
        """Mode in log h of LOO(h) + log Normal(log h; log centre, sd^2), (K, d)."""
        return self.fit_bandwidths(stats, prior["centre"], prior["sd"])

    def log_prior(self, params: dict, prior: dict) -> float:
        """-sum_kj (log h_kj - log c_kj)^2 / (2 sd^2), the prior as a density of log h."""
        z = (np.log(params["bandwidth"]) - np.log(prior["centre"])) / prior["sd"]
        return float(-0.5 * np.sum(z**2))

    # ------------------------------------------------------- unlabeled rows
    def em_m_step(self, labeled: dict, completed: dict, Z_u: np.ndarray, A: np.ndarray,
                  prior: dict | None, params: dict) -> tuple[dict, dict]:
        """EM's M-step (:mod:`bayesgen.semi.kernel`): per class and feature, the bandwidth
        maximising LOO_kj(t) + sum_n A_nk log p(z_nj | y=k, h = e^t) (minus the MAP penalty) on
        the ``labeled`` points, by the labeled fit's search; the current bandwidth is kept where
        the search found no higher value, so EM never descends. Returns ``(params, labeled)``."""
        centre, sd = (_silverman(labeled), None) if prior is None else (prior["centre"],
                                                                           prior["sd"])
        rows = (np.asarray(Z_u, dtype=np.float64), A, params["bandwidth"])
        return self.fit_bandwidths(labeled, centre, sd, rows), labeled

    def log_evidence(self, stats: dict, prior: dict, rows, *, method: str,
                     who: str = "KernelNB") -> float:
        """No closed form: ``ValueError`` (the bandwidth prior is not conjugate)."""
        raise ValueError(
            f"{who}: KernelNB has no closed-form marginal likelihood (its bandwidth prior "
            "is not conjugate); compare it by LOO (bg.compare(..., ic='loo')).")

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """sum_j log( sum_i w_i N(x_nj; x_ij, h_kj^2) / W_k ), (..., n, K) for ``bandwidth``
        (..., K, d) and the fixed ``points``, ``point_class``, ``point_weight``
        (:func:`.kde.log_lik`); ``full=False`` drops -d/2 log 2pi; missing entries drop."""
        P, cls, w = _fixed(params)
        h = np.asarray(params["bandwidth"], dtype=np.float64)
        lead, (K, d) = h.shape[:-2], h.shape[-2:]
        out = log_lik(X, P, cls, w, h.reshape(-1, K, d), full)
        return out.reshape(*lead, X.shape[0], K)

    def train_log_lik(self, X: np.ndarray, y: np.ndarray, params: dict) -> np.ndarray:
        """Each training row's LOO term, (..., n), the rows in any order (found by value,
        :func:`_points_among`); the pointwise log-likelihood of ``idata_``."""
        return pymc.train_log_lik(X, y, _points_among(X, y, params))

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One x per row: per feature a training point of class y_n drawn by weight (among
        those observing the feature) plus N(0, h^2) noise."""
        P, cls, w = _fixed(params)
        rows = np.arange(y.shape[0])
        h = np.asarray(params["bandwidth"])[rows, y]  # (n, d)
        d = P.shape[1]
        centre = np.empty((y.shape[0], d))
        gaps = np.isnan(P).any()
        for k in np.unique(y):
            mine = np.flatnonzero(y == k)
            Pk, wk = P[cls == k], w[cls == k]
            if not gaps:
                pick = rng.choice(Pk.shape[0], size=(mine.size, d), p=wk / wk.sum())
                centre[mine] = Pk[pick, np.arange(d)]
                continue
            for j in range(d):
                seen = np.flatnonzero(~np.isnan(Pk[:, j]) & (wk > 0))
                pick = rng.choice(seen, size=mine.size, p=wk[seen] / wk[seen].sum())
                centre[mine, j] = Pk[pick, j]
        return centre + h * rng.standard_normal(centre.shape)

    def attributes(self, params: dict) -> dict:
        """``bandwidth_`` (K, d): the fitted bandwidths."""
        return {"bandwidth_": params["bandwidth"]}

    # ----------------------------------------------------------------- frame
    def to_user(self, params: dict) -> dict:
        """bandwidth -> s h, points -> c + s p (entries present)."""
        if self.frame is None:
            return params
        out = dict(params)
        if "bandwidth" in params:
            with np.errstate(over="ignore"):
                out["bandwidth"] = params["bandwidth"] * self.frame.scale
        if "points" in params:
            out["points"] = self.frame.user(params["points"])
        return out

    def prior_to_user(self, prior: dict) -> dict:
        """centre -> s centre."""
        if self.frame is None:
            return prior
        return dict(prior, centre=prior["centre"] * self.frame.scale)

    def far_terms(self, far, params: dict):
        """:func:`.far.kernel_terms`."""
        return _kernel_far.kernel_terms(far, params)

    # ------------------------------------------------------------------ PyMC
    def fixed_params(self, stats: dict) -> dict:
        """The training ``points``, ``point_class``, ``point_weight`` and ``point_row``."""
        return {
            "points": stats["X"],
            "point_class": stats["y"],
            "point_weight": stats["w"],
            "point_row": stats["row"],
        }

    pymc_params = pymc.pymc_params
    pymc_observed = pymc.observed

    def pymc_stats_loglik(self, params: dict, stats: dict):
        """sum_kj LOO_kj(h_kj) in PyTensor (:func:`.pymc.stats_loglik`)."""
        if km.has_gaps(stats):  # a sum over features of their observed points
            return km.stats_loglik(self, params, stats)
        return pymc.stats_loglik(self, params, stats)

    pymc_rows_loglik = pymc.rows_loglik


def _points_among(X: np.ndarray, y: np.ndarray, params: dict) -> dict:
    """``params`` whose ``point_row`` (each training point's position among the rows)
    is that of the rows ``X`` (n, d), ``y`` (n,): unchanged when the rows are in the
    order of the fit, else found by the values (rows and points sorted by class and
    values, NaN equal to NaN, and paired in order; identical rows are interchangeable).
    ``ValueError`` when some point is not among the rows."""
    P, cls, _ = _fixed(params)
    y = np.asarray(y, dtype=np.intp)
    stored = np.asarray(params["point_row"]).reshape(-1, P.shape[0])[0].astype(np.intp)
    n = X.shape[0]
    if stored.size == 0 or (stored.max() < n and np.array_equal(y[stored], cls)
                            and np.array_equal(X[stored], P, equal_nan=True)):
        return params

    def order(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
        nan = np.isnan(values)
        keys = [np.where(nan[:, j], 0.0, values[:, j]) for j in range(values.shape[1])]
        keys += [nan[:, j] for j in range(values.shape[1])]
        return np.lexsort([*keys[::-1], labels])

    rows, points = order(X, y), order(P, cls)
    found = np.full(P.shape[0], -1, dtype=np.intp)
    i = 0
    for p in points:
        while i < n and not (y[rows[i]] == cls[p]
                             and np.array_equal(X[rows[i]], P[p], equal_nan=True)):
            i += 1
        if i == n:
            raise ValueError(
                "train_log_lik needs the training rows X, y (in any order); a fitted "
                "point is not among these rows. Use log_lik for other data."
            )
        found[p] = rows[i]
        i += 1
    return {**params, "point_row": found}
