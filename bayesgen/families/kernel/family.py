"""Kernel-density naive Bayes: a weighted Gaussian KDE per class and feature.

Model, per class k and feature j, with the training points i of class k::

    p(x_j | y = k) = sum_i w_i N(x_j; x_ij, h_kj^2) / W_k,     W_k = sum_i w_i

The bandwidths h_kj are the only parameters; the training points are fixed data.

Estimation maximises, for every (k, j) at once, the weighted leave-one-out (LOO)
log-likelihood over t = log h::

    LOO(h) = sum_i w_i log( sum_l v_il N(x_ij; x_lj, h^2) / (W_k - u_i) )
    v_il = w_l (l != i),   v_ii = w_i - u_i,   u_i = min(w_i, 1)

Leaving out one *unit* of weight (``u_i``) rather than the whole point makes a
sample weight of 2 the same as a duplicated row (MAP, MCMC: weights are replication
counts); with unit weights this is the usual ``sum_{l != i}`` criterion. The MLE
divides the weights by the smallest one first, so that only relative weights matter.

Frame: X, the points and the bandwidths are in the internal coordinates z = (x - c) / s
set by the estimator (``frame``); :meth:`KernelFamily.to_user` converts.

MAP adds the log-normal prior ``log h_kj ~ Normal(log s_kj, bandwidth_sd^2)`` centred on
Silverman's rule of thumb ``s_kj = 0.9 min(sd, IQR / 1.34) W_k^(-1/5)`` (weighted
population sd, weighted inverted-CDF quartiles; sd alone when the IQR is 0) and
maximises the posterior density of log h.

The search runs over the bracket ``[s_kj / 1000, 10 s_kj]``: a grid of 13 points in
log h, golden-section refinement around the best grid point, then Newton steps on the
analytic derivative (:mod:`bayesgen.families.kernel.bandwidth`), vectorised over features
(one loop over classes). When the LOO objective is unbounded as h -> 0
(every value of the class has a duplicate) the answer is the lower end ``s_kj / 1000``.
A class/feature with zero spread gets ``s_kj = 1e-3`` times the feature's overall sd
(``1e-9`` times the largest sd over features if the feature is constant), so every
bracket is scale-aware: rescaling a feature rescales its bandwidths and leaves the
predictions unchanged. There is no conjugate prior, hence no closed-form posterior.

MCMC (``method="mcmc"``, :mod:`bayesgen.families.kernel.pymc`) samples the posterior
of the same model, the MAP's prior times exp(LOO(h)); ``model_`` holds the likelihood
as ``pm.Potential("x_loglik")``. The pointwise log-likelihood of ``idata_`` is the LOO
term of every training row (:meth:`KernelFamily.train_log_lik`), not :meth:`log_lik`.

Unlabeled rows (None/NaN in y, :mod:`bayesgen.semi.unlabeled`): the kernel centres stay the
labeled points; the unlabeled rows add their mixture likelihood, the bandwidths are
re-chosen by EM (``"mle"``, ``"map"``, :mod:`bayesgen.semi.kernel`;
:meth:`KernelFamily.em_m_step`) or sampled with it (``"mcmc"``, :mod:`bayesgen.semi.nuts`;
the KDEs at the unlabeled rows: :meth:`KernelFamily.pymc_rows_loglik`).

Cost: each objective evaluation is O(n_k^2 d) (all pairs of points of a class, in
blocks of bounded memory) and a fit takes about 50 evaluations per class; prediction
is O(n_test n_train d). Measured: 2 classes x 2000 points x 10 features fit in ~20 s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np

from bayesgen.data import missing
from bayesgen.families import gaussian_stats as gstats
from bayesgen.families.far import attach_frame
from bayesgen.families.kernel import far as _kernel_far
from bayesgen.families.kernel import missing as km
from bayesgen.families.kernel.bandwidth import (  # noqa: F401 (_loo re-exported for tests)
    _loo,
    _loo_slope,
    _maximise,
    _rows_slope,
    _rows_term,
    _weighted_sd,
    silverman,
)
from bayesgen.families.kernel.kde import (  # noqa: F401 (re-exported)
    _BUDGET,
    LOG_2PI,
    _fixed,
    _kde_sums,
    _logsumexp_last,
)
from bayesgen.families.protocol import Capabilities
from bayesgen.families.semi_hooks import UnlabeledHooks

NO_CONJUGATE = (
    "KernelNB has no conjugate prior; use method='mcmc' for posterior inference on the "
    "bandwidths (or method='mle'/'map' for point estimates)."
)


class KernelFamily(UnlabeledHooks):
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

    def real_columns(self, n_features: int) -> np.ndarray:
        """Every column is real-valued (transformed by the frame)."""
        return np.ones(n_features, dtype=bool)

    # ------------------------------------------------------------------ data
    def check_X(self, X: np.ndarray, *, method: str, who: str) -> np.ndarray:
        """Real-valued features: nothing beyond finiteness (checked by the caller)."""
        return X

    def stats(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """The data themselves: ``X`` (n, d), class index ``y`` (n,), weight ``w`` (n,).

        Rows of weight 0 are dropped (they add nothing to any KDE); ``row`` (n,) holds
        the positions of the kept rows among the ``n_rows`` rows given (so that
        :meth:`train_log_lik` can find each training row's own kernel). ``count`` (K,)
        is the weighted class count; ``loc``, ``scale`` the frame of X.
        """
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
        """Statistics of the union (the rows of ``a`` then those of ``b``): the points of
        both sets, counts added, ``b``'s row positions shifted by ``a``'s ``n_rows``;
        ``b``'s points are re-expressed in ``a``'s frame first (z = r z_b + o)."""
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
            return {"centre": km.per_feature(silverman, stats), "sd": sd}
        return {"centre": silverman(stats), "sd": sd}

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

    def fit_bandwidths(self, stats: dict, centre: np.ndarray, sd: float | None) -> dict:
        """Per class, h maximising LOO(h) (``sd`` None) or LOO(h) + log prior (MAP)."""
        X, y, w = stats["X"], stats["y"], stats["w"]
        h = np.empty_like(centre)
        for k in range(centre.shape[0]):
            P, wk, log_c = np.ascontiguousarray(X[y == k].T), w[y == k], np.log(centre[k])

            def objective(t, P=P, wk=wk, log_c=log_c):
                penalty = 0.0 if sd is None else 0.5 * ((t - log_c) / sd) ** 2
                return _loo(P, wk, t) - penalty

            def slope(t, P=P, wk=wk, log_c=log_c):
                f1, f2 = _loo_slope(P, wk, t)
                if sd is None:
                    return f1, f2
                return f1 - (t - log_c) / sd**2, f2 - 1.0 / sd**2

            h[k] = np.exp(_maximise(objective, centre[k], slope))
        return {"bandwidth": h, **self.fixed_params(stats)}

    def mle(self, stats: dict) -> dict:
        """Bandwidths maximising the weighted LOO log-likelihood, (K, d), plus the data.

        Only relative weights matter: the weights are divided by the smallest one (unit
        weights stay 1), so each point leaves min(w_i / w_min, 1) of its weight out of
        its own kernel and a common factor on the weights changes nothing."""
        if stats["w"].size:
            unit = stats["w"].min()
            stats = dict(stats, w=stats["w"] / unit, count=stats["count"] / unit)
        if km.has_gaps(stats):  # feature by feature on its observed points
            km.check_observed(stats, self.labels)
            return km.fit_features(self, stats, silverman, None)
        self.require_points(stats, "KernelNB")
        return self.fit_bandwidths(stats, silverman(stats), None)

    def map(self, stats: dict, prior: dict) -> dict:
        """Mode in log h of LOO(h) + log Normal(log h; log centre, sd^2), (K, d);
        weights are replication counts (each point leaves min(w_i, 1) out)."""
        if km.has_gaps(stats):  # feature by feature on its observed points
            centre = iter(prior["centre"].T)
            return km.fit_features(self, stats, lambda s: next(centre)[:, None], prior["sd"])
        self.require_points(stats, "KernelNB")
        return self.fit_bandwidths(stats, prior["centre"], prior["sd"])

    def log_prior(self, params: dict, prior: dict) -> float:
        """log p(h) up to a constant: -sum_kj (log h_kj - log c_kj)^2 / (2 sd^2), the
        log-normal prior as a density of log h (:meth:`map` is the mode in log h)."""
        z = (np.log(params["bandwidth"]) - np.log(prior["centre"])) / prior["sd"]
        return float(-0.5 * np.sum(z**2))

    # ------------------------------------------------------- unlabeled rows
    def em_m_step(self, labeled: dict, completed: dict, Z_u: np.ndarray, A: np.ndarray,
                  prior: dict | None, params: dict) -> tuple[dict, dict]:
        """EM's M-step with unlabeled rows (:mod:`bayesgen.semi.kernel`): bandwidths
        (K, d) maximising, per class and feature, the criterion

            Q_kj(t) = LOO_kj(t) + sum_n A_nk log p(z_nj | y=k, h = e^t)
                      [- (t - log c_kj)^2 / (2 sd^2)   (MAP)]

        on the ``labeled`` points (which stay the kernel centres; ``completed`` is not
        used), with the unlabeled rows ``Z_u`` (m, d) weighted by ``A`` (m, K). The
        search is the labeled fit's (grid, golden section, Newton steps on the analytic
        derivatives), centred on the prior's centres (MAP; ``prior`` None: Silverman's);
        the current ``params["bandwidth"]`` is kept where it found no higher Q_kj, so
        the step never lowers the EM objective. Missing entries: per feature on the
        observed points and rows. Returns ``(params, labeled)``."""
        if prior is None:
            sd = None
            centre = (km.per_feature(silverman, labeled) if km.has_gaps(labeled)
                      else silverman(labeled))
        else:
            centre, sd = prior["centre"], prior["sd"]
        Z_u = np.asarray(Z_u, dtype=np.float64)
        return self._fit_with_rows(labeled, Z_u, A, centre, sd, params["bandwidth"]), labeled

    def _fit_with_rows(self, stats: dict, Z_u: np.ndarray, A: np.ndarray,
                       centre: np.ndarray, sd: float | None, h_old: np.ndarray) -> dict:
        """The bandwidths of :meth:`em_m_step` from the search ``centre`` (K, d), prior
        sd ``sd`` (None: MLE) and the previous ``h_old`` (K, d); ``params``."""
        if km.has_gaps(stats) or np.isnan(Z_u).any():  # feature by feature, observed only
            h = np.empty_like(h_old)
            for j in range(Z_u.shape[1]):
                sub = km.feature_stats(stats, j)
                rows = ~np.isnan(Z_u[:, j])
                h[:, j:j + 1] = self._fit_with_rows(
                    sub, Z_u[rows, j:j + 1], A[rows], centre[:, j:j + 1], sd,
                    h_old[:, j:j + 1])["bandwidth"]
            return {"bandwidth": h, **self.fixed_params(stats)}
        self.require_points(stats, "KernelNB")
        X, y, w = stats["X"], stats["y"], stats["w"]
        U = np.ascontiguousarray(Z_u.T)
        h = np.empty_like(h_old)
        for k in range(h_old.shape[0]):
            P, wk, a = np.ascontiguousarray(X[y == k].T), w[y == k], A[:, k]
            log_c = np.log(centre[k])

            def q(t, P=P, wk=wk, a=a, log_c=log_c):
                penalty = 0.0 if sd is None else 0.5 * ((t - log_c) / sd) ** 2
                return _loo(P, wk, t) + _rows_term(U, P, wk, a, t) - penalty

            def slope(t, P=P, wk=wk, a=a, log_c=log_c):
                f1, f2 = _loo_slope(P, wk, t)
                g1, g2 = _rows_slope(U, P, wk, a, t)
                if sd is None:
                    return f1 + g1, f2 + g2
                return f1 + g1 - (t - log_c) / sd**2, f2 + g2 - 1.0 / sd**2

            t_new, t_old = _maximise(q, centre[k], slope), np.log(h_old[k])
            h[k] = np.exp(np.where(q(t_new) >= q(t_old), t_new, t_old))
        return {"bandwidth": h, **self.fixed_params(stats)}

    def em_final(self, labeled: dict, used: dict, prior: dict | None,
                 params: dict) -> tuple[dict, dict]:
        """The ``labeled`` points with their weights as given, and ``params``."""
        return labeled, params

    def posterior(self, stats: dict, prior: dict) -> dict:
        """Not available: the bandwidth prior is not conjugate (always raises ValueError)."""
        raise ValueError(NO_CONJUGATE)

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """Not available: there is no conjugate posterior (always raises ValueError)."""
        raise ValueError(NO_CONJUGATE)

    def log_predictive(self, X: np.ndarray, post: dict) -> np.ndarray:
        """Not available: there is no conjugate posterior (always raises ValueError)."""
        raise ValueError(NO_CONJUGATE)

    # ----------------------------------------------------- model comparison
    def log_evidence(self, stats: dict, prior: dict, rows: Callable[[], tuple], *,
                     method: str,
                     who: str) -> float:
        """Not available: the bandwidth prior is not conjugate (always raises ValueError)."""
        raise ValueError(
            f"{who}: KernelNB has no closed-form marginal likelihood (its bandwidth prior "
            "is not conjugate); compare it by LOO (bg.compare(..., ic='loo'))."
        )

    def loo_log_predictive(self, Z: np.ndarray, y: np.ndarray, w: np.ndarray,
                           post: dict) -> np.ndarray:
        """Not available: there is no conjugate posterior (always raises ValueError)."""
        raise ValueError(
            "KernelNB has no exact leave-one-out predictive (no conjugate posterior); "
            "its pointwise log-likelihood is already each training row's leave-one-out "
            "term, and bg.compare uses PSIS-LOO."
        )

    def loo_log_predictive_at(self, Z: np.ndarray, y: np.ndarray, w: np.ndarray, post: dict,
                              Z_test: np.ndarray | None = None) -> np.ndarray:
        """Not available: there is no conjugate posterior (always raises ValueError)."""
        raise ValueError(
            "KernelNB has no exact leave-one-out predictive (no conjugate posterior), at "
            "its training rows or elsewhere; use split conformal sets."
        )

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """sum_j log( sum_i w_i N(x_nj; x_ij, h_kj^2) / W_k ) for every row and class.

        Parameters
        ----------
        X : ndarray of shape (n, d)
        params : dict
            ``bandwidth`` (..., K, d), leading dims are posterior draws; ``points``,
            ``point_class``, ``point_weight``: the training data (see :func:`_fixed`).
        full : bool
            False drops ``-d/2 log(2 pi)`` (the same for every class).

        Returns
        -------
        ndarray of shape (..., n, K)
            Log-sum-exps over the training points of class k (:func:`_kde_sums`).
        """
        P, cls, w = _fixed(params)
        h = np.asarray(params["bandwidth"], dtype=np.float64)
        lead, (K, d) = h.shape[:-2], h.shape[-2:]
        H = h.reshape(-1, K, d)
        if missing.has_missing(X) or missing.has_missing(P):  # drop missing factors
            out = km.log_lik(X, P, cls, w, H, full)
            return out.reshape(*lead, X.shape[0], K)
        Xt = np.ascontiguousarray(X.T)
        out = np.zeros((H.shape[0], X.shape[0], K))
        for k in range(K):
            rows = cls == k
            sums = _kde_sums(Xt, np.ascontiguousarray(P[rows].T), np.log(w[rows]), H[:, k])
            log_norm = np.log(H[:, k]).sum(-1) + np.log(w[rows].sum()) * d  # (S,)
            out[:, :, k] = sums - log_norm[:, None]
        if full:
            out -= 0.5 * d * LOG_2PI
        return out.reshape(*lead, X.shape[0], K)

    def train_log_lik(self, X: np.ndarray, y: np.ndarray, params: dict) -> np.ndarray:
        """log p(x_n | y_n, h) of the training rows X (n, d), y (n,), in any order
        (each training point is found among the rows by its values, :func:`_points_among`),
        (..., n): each row's leave-one-out term, one unit of its own weight left out of
        its class's KDE as in the MLE/MAP/MCMC objective (``sum_n w_n`` of them is the LOO
        likelihood NUTS samples); rows of weight 0 get :meth:`log_lik` at their class. The
        pointwise log-likelihood of ``idata_`` (:func:`._kernel_pymc.train_log_lik`)."""
        from bayesgen.families.kernel import pymc

        params = _points_among(X, y, params)
        if np.isnan(X).any():
            return km.train_log_lik(X, y, params)
        return pymc.train_log_lik(X, y, params)

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One x per row: per feature, a training point of class y_n (chosen with
        probability proportional to its weight) plus N(0, h^2) noise.

        With missing training entries (NaN), feature j's centre is drawn among the
        points of class y_n that observe feature j (the points its KDE is built on, as in
        :meth:`log_lik`), so no NaN is drawn.

        ``bandwidth`` is (n, K, d) (one row per sample); the fixed data entries may be
        broadcast to (n, ...) and only their first row is used.
        """
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
        """Entries present in ``params`` in the units of X: bandwidth -> s h, the
        training points -> c + s p."""
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
        """The resolved prior in the units of X (for ``model_``): centre -> s centre."""
        if self.frame is None:
            return prior
        return dict(prior, centre=prior["centre"] * self.frame.scale)

    def far_terms(self, far, params: dict):
        """(a2, a1, a0) of far rows, (..., m, K) each
        (:func:`bayesgen.families.kernel.far.kernel_terms`)."""
        return _kernel_far.kernel_terms(far, params)

    def far_log_predictive(self, far, post: dict) -> np.ndarray:
        """Not available: there is no conjugate posterior (always raises ValueError)."""
        raise ValueError(NO_CONJUGATE)

    # ------------------------------------------------------------------ PyMC
    def fixed_params(self, stats: dict) -> dict:
        """The non-random ``params`` entries, as the point fits store them: the training
        ``points`` (n, d), ``point_class`` (n,), ``point_weight`` (n,) (rows of weight > 0)
        and ``point_row`` (n,), their positions among the rows given to ``stats``."""
        return {
            "points": stats["X"],
            "point_class": stats["y"],
            "point_weight": stats["w"],
            "point_row": stats["row"],
        }

    def pymc_params(self, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
        """The MAP's prior in the current PyMC model: ``log h ~ Normal(log centre, sd)``
        (``prefix + "bandwidth_log"``) and the Deterministic ``prefix + "bandwidth"``."""
        from bayesgen.families.kernel import pymc

        return pymc.bandwidth_prior(prior, prefix, (dims or self.param_dims)["bandwidth"])

    def pymc_observed(self, params: dict, X, y, *, prefix: str = "", dims: dict | None = None):
        """The unit-weight LOO likelihood of the rows of X as ``pm.Potential(prefix +
        "x_loglik")``; there is no variable ``x`` (see :mod:`._kernel_pymc`)."""
        from bayesgen.families.kernel import pymc

        pymc.observed(self, params, X, y, prefix, dims or self.param_dims)

    def pymc_stats_loglik(self, params: dict, stats: dict):
        """The weighted LOO log-likelihood ``sum_kj LOO_kj(h_kj)`` in PyTensor, the
        objective of ``mle``/``map`` (:func:`._kernel_pymc.stats_loglik`)."""
        from bayesgen.families.kernel import pymc

        if km.has_gaps(stats):  # a sum over features of their observed points
            return km.stats_loglik(self, params, stats)
        return pymc.stats_loglik(self, params, stats)

    def pymc_rows_loglik(self, params: dict, Z: np.ndarray, *, stats: dict, observed,
                         prefix: str = "", dims: dict | None = None):
        """log p(z_n | y=k, h), (m, K): the KDEs of the labeled points (``stats``) at
        the rows, no leave-one-out (:func:`.pymc.rows_loglik`; :meth:`pymc_observed` is
        the LOO potential of training rows, not a density of new rows)."""
        from bayesgen.families.kernel import pymc

        return pymc.rows_loglik(stats, params["bandwidth"], np.asarray(Z, dtype=np.float64))


def _points_among(X: np.ndarray, y: np.ndarray, params: dict) -> dict:
    """``params`` whose ``point_row`` (each training point's position among the rows)
    is that of the rows ``X`` (n, d), ``y`` (n,): unchanged when the rows are in the
    order of the fit, else found by the values (rows and points sorted by class and
    values, NaN equal to NaN, and paired in order; identical rows are interchangeable).
    ``ValueError`` when some point is not among the rows."""
    from bayesgen.families.kernel.kde import _fixed

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
