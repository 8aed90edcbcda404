"""The prior strength nu0 from an analytic shrinkage intensity (``cov_dof="oas"``).

The posterior mean of a covariance under the Normal-Inverse-Wishart prior with
Psi0 = c S0 and nu0 = d + 1 + c is a shrinkage estimator towards S0 (kappa0 -> 0)::

    E[Sigma | X] = (c S0 + S) / (c + N) = delta S0 + (1 - delta) S / N,
    delta = c / (c + N)

so a shrinkage intensity delta in [0, 1) is a prior strength c = N delta / (1 - delta):
the prior counts as c pseudo-rows out of c + N. ``cov_dof="oas"`` takes delta from the
Oracle Approximating Shrinkage estimator (Chen, Wiesel, Eldar and Hero 2010, eq. 23,
in scikit-learn's form, ``sklearn.covariance.oas``), computed in the coordinates where
the target is the identity, W = S0^(-1/2) (S / N) S0^(-T/2)::

    delta = min(1, (alpha + mu^2) / ((N + 1) (alpha - mu^2 / d))),
    alpha = mean of the squared entries of W,  mu = tr(W) / d

(the paper's factors 2/d are left out, as scikit-learn does). OAS assumes Gaussian rows,
the model's own assumption, and needs only the scatter matrix, so it works on the
sufficient statistics: streaming, merged fits, sample weights (N = the weighted count)
and, with missing entries, the expected complete-data statistics. OAS shrinks towards
mu I; the prior's target stays s S0 (``cov_scale``), which for LDA's default S0 (the
pooled within-class variances) is exactly mu I in these coordinates (mu = 1).

Why not the evidence: type-II maximum likelihood of p(X | y) scores the fit of the
features; when there are few rows for the dimension and the features are collinear
(scikit-learn's breast cancer and digits at 10 to 50 rows per class) it chooses weak
priors that fit the training rows' subspace and predict p(y | x) poorly, whereas
shrinkage that targets the mean squared error of Sigma predicts well (validation study
``validation/prior_study.py``). The evidence remains the better choice when the
covariance is strongly non-diagonal and the Gaussian model holds (``cov_dof="auto"``).

QDA: one intensity per class (its own rows and scatter, N_k), and the prior's single
strength is the count-weighted mean c = sum_k N_k c_k / N.
"""

from __future__ import annotations

import numpy as np

from bayesgen.families.mvn.niw_evidence import C_BOUNDS


def oas_intensity(W: np.ndarray, n: float) -> float:
    """OAS shrinkage intensity of the covariance estimate ``W`` (d, d) from ``n`` rows
    towards tr(W)/d I (scikit-learn's formula, see the module docstring), in [0, 1]."""
    d = W.shape[0]
    mu = np.trace(W) / d
    alpha = np.mean(W ** 2)
    num = alpha + mu ** 2
    den = (n + 1.0) * (alpha - mu ** 2 / d)
    return 1.0 if den <= 0 else float(min(num / den, 1.0))


def oas_dof(stats: dict, S0: np.ndarray, *, tied: bool) -> tuple[float, list[float]]:
    """nu0 = d + 1 + c from the OAS intensities of the class statistics.

    Parameters
    ----------
    stats : dict
        Complete-data statistics: ``count`` (K,) and ``scatter`` (d, d) if ``tied``
        (pooled within-class), else (K, d, d).
    S0 : ndarray of shape (d, d)
        The shrinkage target (the prior mean of Sigma), positive definite.
    tied : bool
        LDA (one pooled scatter, N = sum_k N_k) or QDA (one per class).

    Returns
    -------
    nu0 : float
        d + 1 + c with c = N delta / (1 - delta) (QDA: the count-weighted mean of the
        classes' c_k), clipped to :data:`C_BOUNDS` (delta = 1 gives its upper end).
    intensities : list of float
        delta (LDA: one; QDA: one per class).
    """
    d = S0.shape[0]
    chol = np.linalg.cholesky(S0)
    count = np.asarray(stats["count"], dtype=np.float64)
    scatter = stats["scatter"]
    groups = [(scatter, float(count.sum()))] if tied else list(zip(scatter, count, strict=True))
    strengths, intensities, weights = [], [], []
    for B, n in groups:
        if n <= 0:
            continue
        W = np.linalg.solve(chol, np.linalg.solve(chol, B / n).T)  # S0^-1/2 (B/n) S0^-T/2
        delta = oas_intensity((W + W.T) / 2.0, n)
        intensities.append(delta)
        strengths.append(C_BOUNDS[1] if delta >= 1.0 else n * delta / (1.0 - delta))
        weights.append(n)
    c = float(np.average(strengths, weights=weights))
    return d + 1.0 + float(np.clip(c, *C_BOUNDS)), intensities
