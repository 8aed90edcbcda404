"""Type-II maximum likelihood of GaussianNB's Normal-Inverse-Gamma prior
(``var_dof="auto"``, ``var_scale="auto"``).

The prior of each (class k, feature j) is sigma2_kj ~ InvGamma(a0, b0_j) with
a0 = nu0 / 2 and b0_j = (nu0 - 2) s s0_j / 2: the prior mean of sigma2_kj is s s0_j, a
scaled copy of the target s0 (the pooled within-class variances by default). With
c = nu0 - 2 > 0, t = c s and, per (k, j) with N_kj observed entries,
beta_kj = [S_kj + kappa0 N_kj (xbar_kj - m0_j)^2 / (kappa0 + N_kj)] / s0_j, the log
evidence is, up to a constant in (c, t)::

    F(c, t) = sum_kj [lgamma(a0 + N_kj / 2) - lgamma(a0) + a0 log t
                      - (a0 + N_kj / 2) log(t + beta_kj)]

    dF/dc      = sum_kj [psi(a0 + N_kj / 2) - psi(a0) + log t - log(t + beta_kj)] / 2
    dF/dlog(t) = sum_kj [a0 - (a0 + N_kj / 2) t / (t + beta_kj)]

O(K d) per evaluation, from the statistics only; a (class, feature) never observed
contributes 0 (a missing entry is integrated out exactly, so the search is exact with
missing values too). :func:`search_entries` maximises F over (log c, log s) in
:data:`C_BOUNDS` x :data:`S_BOUNDS`, or over one of them with the other fixed.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import digamma, gammaln

from bayesgen.utils.search import log_bounded_argmax, polish_root

#: search range of c = nu0 - 2 (``var_dof="auto"``)
C_BOUNDS = (1e-2, 1e6)
#: search range of the scale s (prior mean of sigma2_kj = s s0_j, ``var_scale="auto"``)
S_BOUNDS = (1e-3, 1e3)


def profile(c: float, t: float, beta: np.ndarray, n: np.ndarray
            ) -> tuple[float, float, float]:
    """F(c, t), dF/dc and dF/dlog(t) of the module docstring."""
    a0 = (c + 2.0) / 2.0
    a_n = a0 + n / 2.0
    log_tb = np.log(t + beta)
    value = np.sum(gammaln(a_n) - gammaln(a0) + a0 * np.log(t) - a_n * log_tb)
    dc = 0.5 * np.sum(digamma(a_n) - digamma(a0) + np.log(t) - log_tb)
    dlogt = np.sum(a0 - a_n * t / (t + beta))
    return float(value), float(dc), float(dlogt)


def search_entries(beta: np.ndarray, n: np.ndarray, *, dof: float | None = None,
                   scale: float | None = None, ftol: float = 1e-13,
                   start: float | None = None) -> tuple[float, float]:
    """(nu0, s) maximising the evidence F given beta and N of the module docstring (any
    matching shapes); ``dof`` (> 2) or ``scale`` (> 0) fixed when given, chosen when None;
    ``ftol``: L-BFGS-B's relative tolerance on the evidence when both are searched
    (above 1e-13 the gradient tolerance is loosened to 1e-5 too). ``start``: a nu0 near
    the answer (e.g. the choice on all rows, for statistics without one row): with s
    fixed, the root of the slope is bracketed from there (``polish_root``) instead of
    from a bounded search, the same root to Brent's tolerance."""
    if dof is not None and scale is not None:
        return float(dof), float(scale)
    if scale is None and dof is not None:
        return float(dof), _scale(float(dof) - 2.0, beta, n)
    if scale is not None:
        s = float(scale)
        lo, hi = np.log(C_BOUNDS[0]), np.log(C_BOUNDS[1])

        def neg(log_c: float) -> float:
            c = np.exp(log_c)
            return -profile(c, c * s, beta, n)[0]

        def slope(c: float) -> float:  # dF/dc along t = c s
            _, dc, dlogt = profile(c, c * s, beta, n)
            return dc + dlogt / c

        if slope(C_BOUNDS[1]) >= 0:
            return 2.0 + C_BOUNDS[1], s
        if slope(C_BOUNDS[0]) <= 0:
            return 2.0 + C_BOUNDS[0], s
        if start is not None and np.isfinite(start) and start > 2.0:
            x0 = float(np.log(start - 2.0))
        else:
            x0 = float(minimize_scalar(neg, bounds=(lo, hi), method="bounded",
                                       options={"xatol": 1e-10}).x)
        log_c = polish_root(lambda x: slope(float(np.exp(x))), x0, (lo, hi))
        return 2.0 + float(np.exp(log_c)), s

    def objective(p: np.ndarray) -> tuple[float, np.ndarray]:
        c, s = np.exp(p)
        value, dc, dlogt = profile(c, c * s, beta, n)
        return -value, -np.array([c * dc + dlogt, dlogt])

    bounds = [tuple(np.log(C_BOUNDS)), tuple(np.log(S_BOUNDS))]
    best = None
    gtol = 1e-8 if ftol <= 1e-13 else 1e-5
    for start in ((0.0, 0.0), (np.log(1e3), 0.0)):  # the second if the first ends low
        result = minimize(objective, np.array(start), jac=True, method="L-BFGS-B",
                          bounds=bounds, options={"ftol": ftol, "gtol": gtol,
                                                  "maxiter": 200})
        if best is None or result.fun < best.fun:
            best = result
        if np.all(best.x - np.array(bounds)[:, 0] > 1e-6):
            break
    def profile_slope(log_c: float) -> float:  # d/dlog c of the evidence at the best s
        c = float(np.exp(log_c))
        return c * profile(c, c * _scale(c, beta, n), beta, n)[1]

    c = float(np.exp(polish_root(profile_slope, float(best.x[0]), tuple(np.log(C_BOUNDS)))))
    return 2.0 + c, _scale(c, beta, n)


def _scale(c: float, beta: np.ndarray, n: np.ndarray) -> float:
    """argmax over s in :data:`S_BOUNDS` at fixed c: the root of dF/dlog(t)
    (decreasing in t)."""
    def slope(log_s: float) -> float:
        return profile(c, c * np.exp(log_s), beta, n)[2]

    return log_bounded_argmax(slope, S_BOUNDS)
