"""Marginal likelihood of the Normal-Inverse-Wishart model and the empirical-Bayes
choice of its degrees of freedom (``cov_dof="auto"`` of LDA and QDA).

For one group of N rows with a Normal-Inverse-Wishart prior NIW(m0, kappa0, nu0, Psi0)
the evidence is (Murphy 2007, eq. 266; Gelman et al., BDA3 sec. 3.6)::

    p(X) = pi^(-N d / 2) Gamma_d(nu_N / 2) / Gamma_d(nu0 / 2)
           |Psi0|^(nu0 / 2) / |Psi_N|^(nu_N / 2) (kappa0 / kappa_N)^(d / 2)

with kappa_N = kappa0 + N, nu_N = nu0 + N, Psi_N = Psi0 + B and
B = S + kappa0 N / kappa_N (xbar - m0)(xbar - m0)^T. QDA multiplies one such factor per
class. LDA's classes share Sigma, so its evidence has one Gamma_d / determinant ratio
with nu_N = nu0 + sum_k N_k and B = sum_k B_k, and one (kappa0 / kappa_k)^(d/2) factor
per class.

Empirical Bayes: with Psi0 = c S0 (c = nu0 - d - 1 > 0, so that E[Sigma] = S0), the
evidence as a function of c needs only the eigenvalues lambda_i of S0^(-1/2) B S0^(-1/2),
since log|Psi_N| = log|S0| + sum_i log(c + lambda_i). :func:`evidence_dof` maximises it
over log c (bounded, scipy's ``minimize_scalar``): a large c means the class
covariances are close to S0 (strong shrinkage), a small one that the data depart from
it. The choice is equivariant under rescaling the features, like S0.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import digamma, multigammaln, polygamma

from bayesgen.families.gaussian_stats import class_sum

#: search range of c = nu0 - d - 1 for ``cov_dof="auto"``
C_BOUNDS = (1e-2, 1e6)


def _group_scatter(stats: dict, m0: np.ndarray, kappa0: float, tied: bool
                   ) -> tuple[list[np.ndarray], list[float]]:
    """B_g and N_g per covariance group: one (pooled) for LDA, one per class for QDA."""
    count, mean = stats["count"], stats["mean"]
    diff = mean - m0
    shrink = kappa0 * count / (kappa0 + count)
    outer = shrink[:, None, None] * diff[:, :, None] * diff[:, None, :]
    if tied:
        return [stats["scatter"] + class_sum(outer)], [float(class_sum(count))]
    return list(stats["scatter"] + outer), [float(c) for c in count]


def log_marginal_likelihood(stats: dict, prior: dict, *, tied: bool) -> float:
    """log p(X | y) under the NIW prior ``prior`` (``m0``, ``kappa0``, ``nu0``, ``Psi0``).

    Parameters
    ----------
    stats : dict
        ``count`` (K,), ``mean`` (K, d), ``scatter`` (K, d, d), or (d, d) if ``tied``.
    prior : dict
        NIW hyper-parameters as returned by ``MVNFamily.prior``.
    tied : bool
        One covariance shared by the classes (LDA) or one per class (QDA).

    Returns
    -------
    float
        The log evidence of the features given the labels (weighted counts as counts).
    """
    m0, kappa0, nu0, Psi0 = prior["m0"], prior["kappa0"], prior["nu0"], prior["Psi0"]
    d = m0.size
    count = stats["count"]
    groups, sizes = _group_scatter(stats, m0, kappa0, tied)
    _, logdet0 = np.linalg.slogdet(Psi0)
    total = -0.5 * count.sum() * d * np.log(np.pi)
    total += 0.5 * d * np.sum(np.log(kappa0 / (kappa0 + count)))
    for B, n in zip(groups, sizes, strict=True):
        _, logdet_n = np.linalg.slogdet(Psi0 + B)
        total += (multigammaln((nu0 + n) / 2.0, d) - multigammaln(nu0 / 2.0, d)
                  + 0.5 * nu0 * logdet0 - 0.5 * (nu0 + n) * logdet_n)
    return float(total)


def evidence_dof(stats: dict, m0: np.ndarray, kappa0: float, S0: np.ndarray, *,
                 tied: bool) -> float:
    """The nu0 maximising the evidence with Psi0 = (nu0 - d - 1) S0 (``cov_dof="auto"``).

    Returns
    -------
    float
        nu0 = d + 1 + c with c in :data:`C_BOUNDS`.
    """
    d = m0.size
    groups, sizes = _group_scatter(stats, m0, kappa0, tied)
    chol = np.linalg.cholesky(S0)
    eigen = []
    for B in groups:
        W = np.linalg.solve(chol, np.linalg.solve(chol, B).T)  # S0^-1/2 B S0^-T/2
        eigen.append(np.clip(np.linalg.eigvalsh((W + W.T) / 2.0), 0.0, None))
    sizes_arr = np.asarray(sizes)

    def neg_log_evidence(log_c: float) -> float:
        c = np.exp(log_c)
        nu0 = d + 1.0 + c
        per_group = [multigammaln((nu0 + n) / 2.0, d) - 0.5 * (nu0 + n) * np.sum(np.log(c + lam))
                     for lam, n in zip(eigen, sizes, strict=True)]
        value = class_sum(np.array(per_group)) - len(sizes) * (
            multigammaln(nu0 / 2.0, d) - 0.5 * nu0 * d * np.log(c))
        return -float(value)

    lo, hi = np.log(C_BOUNDS[0]), np.log(C_BOUNDS[1])
    result = minimize_scalar(neg_log_evidence, bounds=(lo, hi), method="bounded",
                             options={"xatol": 1e-4})
    c = _at_bound(d, eigen, sizes_arr)
    if c is None:
        c = _newton_polish(float(np.exp(result.x)), d, eigen, sizes_arr)
    return d + 1.0 + c


def _at_bound(d: int, eigen: list[np.ndarray], sizes: np.ndarray) -> float | None:
    """The bound of :data:`C_BOUNDS` itself when the evidence still rises towards it
    (slope > 0 at the upper bound, < 0 at the lower one), else None.

    The bounded search stops within its tolerance of such a bound, at a point that moves
    with the rounding of the statistics (summation order, weights as repeated rows);
    the bound is the exact answer of the bounded problem."""
    hi, lo = C_BOUNDS[1], C_BOUNDS[0]
    if _evidence_slope(hi, d, eigen, sizes)[0] >= 0:
        return hi
    if _evidence_slope(lo, d, eigen, sizes)[0] <= 0:
        return lo
    return None


def _evidence_slope(c: float, d: int, eigen: list[np.ndarray], sizes: np.ndarray):
    """First and second derivatives in c of the log evidence maximised by
    :func:`evidence_dof` (nu0 = d + 1 + c; psi, psi1 the digamma and trigamma)::

        F'  = sum_g [sum_i psi((nu0 + N_g - i) / 2) / 2 - sum_i log(c + l_gi) / 2
                     - (nu0 + N_g) sum_i 1 / (c + l_gi) / 2]
              - G [sum_i psi((nu0 - i) / 2) / 2 - d log(c) / 2 - nu0 d / (2 c)]
        F'' = sum_g [sum_i psi1((nu0 + N_g - i) / 2) / 4 - sum_i 1 / (c + l_gi)
                     + (nu0 + N_g) sum_i 1 / (c + l_gi)^2 / 2]
              - G [sum_i psi1((nu0 - i) / 2) / 4 - d / (2 c) - d (c - nu0) / (2 c^2)]
    """
    nu0 = d + 1.0 + c
    half = np.arange(d) / 2.0
    g1, g2 = [], []
    for lam, n in zip(eigen, sizes, strict=True):
        a = (nu0 + n) / 2.0 - half
        inv = 1.0 / (c + lam)
        g1.append(0.5 * digamma(a).sum() - 0.5 * np.log(c + lam).sum()
                  - 0.5 * (nu0 + n) * inv.sum())
        g2.append(0.25 * polygamma(1, a).sum() - inv.sum() + 0.5 * (nu0 + n) * (inv**2).sum())
    f1, f2 = class_sum(np.array(g1)), class_sum(np.array(g2))  # independent of class order
    a0 = nu0 / 2.0 - half
    G = len(eigen)
    f1 -= G * (0.5 * digamma(a0).sum() - 0.5 * d * np.log(c) - 0.5 * nu0 * d / c)
    f2 -= G * (0.25 * polygamma(1, a0).sum() - 0.5 * d / c - 0.5 * d * (c - nu0) / c**2)
    return float(f1), float(f2)


def _newton_polish(c: float, d: int, eigen: list[np.ndarray], sizes: np.ndarray) -> float:
    """Newton steps on the derivative from the bounded search's c (whose comparisons of
    function values locate the mode only to ~1e-8 relative): the mode to machine
    precision, so that cov_dof="auto" is the same in any units of the features. Steps
    that leave C_BOUNDS or meet a non-concave evidence are not taken."""
    for _ in range(6):
        f1, f2 = _evidence_slope(c, d, eigen, sizes)
        if not f2 < 0:
            break
        new = c - f1 / f2
        if not C_BOUNDS[0] < new < C_BOUNDS[1]:
            break
        if abs(new - c) <= 1e-15 * c:
            return new
        c = new
    return c
