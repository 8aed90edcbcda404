"""LDA's linear discriminants and Fisher projection, computed after every fit.

Sets ``coef_``, ``intercept_``, ``scalings_``, ``xbar_``,
``explained_variance_ratio_`` on the fitted :class:`bayesgen.LDA` (and the internal
``_scalings``, ``_zbar``, ``_n_components`` used by ``transform``).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from bayesgen.families.mvn.linalg import _cholesky


def fit(estimator) -> None:
    """Set LDA's ``coef_``/``intercept_`` and its Fisher projection.

    The linear discriminants are
    delta_k(x) = x^T Sigma^-1 mu_k - mu_k^T Sigma^-1 mu_k / 2 + log pi_k. The
    projection solves the generalised eigenproblem S_b v = lambda Sigma v with
    S_b = sum_k (N_k/N)(mu_k - xbar)(mu_k - xbar)^T (as scikit-learn's eigen solver),
    through the Cholesky factor Sigma = L L^T: the eigenvectors of L^-1 S_b L^-T.
    Both are computed in the internal frame z = (x - c) / s and converted:
    coef = w / s, intercept = b - c . coef, scalings = V / s, xbar = c + s zbar.

    Parameters
    ----------
    estimator : bayesgen.LDA
        Fitted (point estimates or posterior means from ``framing.point_params``).
    """
    from bayesgen.inference import scoring

    internal = scoring.point_params(estimator._fitted())  # posterior means for posterior methods
    mu, cov = internal["mu"], internal["cov"]
    L = _cholesky(cov, "LDA's covariance", "the fit is degenerate")
    frame = getattr(estimator, "_frame", None)
    scale = np.ones(mu.shape[1]) if frame is None else frame.scale
    g = np.zeros(mu.shape[1]) if frame is None else frame.loc / frame.scale
    with np.errstate(divide="ignore"):
        log_pi = estimator.class_log_prior_
    if estimator.classes_.size == 2:  # differences first: exact whatever the offset g
        diff = mu[1] - mu[0]
        w = linalg.cho_solve((L, True), diff)
        coef = w[None, :]
        intercept = np.array([-0.5 * w @ (mu[1] + mu[0] + 2.0 * g) + log_pi[1] - log_pi[0]])
    else:
        coef = linalg.cho_solve((L, True), (mu + g).T).T
        intercept = -0.5 * np.sum(coef * (mu + g), axis=1) + log_pi
    estimator.coef_, estimator.intercept_ = coef / scale, intercept

    weights = estimator.class_count_ / estimator.class_count_.sum()
    if estimator._fixed_pi is not None:  # a fixed class_prior weighs the
        weights = estimator._fixed_pi  # classes (as scikit-learn's priors)
    estimator._zbar = weights @ mu
    centred = mu - estimator._zbar
    between = (centred * weights[:, None]).T @ centred
    Linv = linalg.solve_triangular(L, np.eye(L.shape[0]), lower=True)
    evals, evecs = linalg.eigh(Linv @ between @ Linv.T)
    order = np.argsort(evals)[::-1]
    n_max = n_components(estimator.n_components, estimator.classes_.size, mu.shape[1])
    evals = np.clip(evals[order], 0.0, None)
    evecs = evecs[:, order]  # sign: largest entry positive (eigh's is arbitrary, so
    evecs = evecs * np.sign(evecs[np.argmax(np.abs(evecs), axis=0),  # merged stats
                                  np.arange(evecs.shape[1])])  # could flip it)
    estimator._scalings = Linv.T @ evecs
    estimator.scalings_ = estimator._scalings / np.reshape(scale, (-1, 1))
    estimator.xbar_ = scoring.to_user_rows(estimator._fitted(), estimator._zbar)
    total = evals.sum()
    ratio = evals / total if total > 0 else np.zeros_like(evals)
    estimator.explained_variance_ratio_ = ratio[:n_max]
    estimator._n_components = n_max


def n_components(n_components: int | None, n_classes: int, n_features: int) -> int:
    """Directions kept by LDA's transform: ``n_components``, at most min(K - 1, d)."""
    n_max = min(n_classes - 1, n_features)
    if n_components is None:
        return n_max
    if n_components > n_max:
        raise ValueError(
            f"n_components={n_components} cannot be larger than min(n_features, "
            f"n_classes - 1) = min({n_features}, {n_classes - 1}) = {n_max}; use "
            "n_components=None for that maximum."
        )
    return int(n_components)
