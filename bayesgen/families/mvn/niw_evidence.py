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

Strength and scale (``cov_scale="auto"``): with Psi0 = c s S0, the prior mean of Sigma is
s S0, a scaled copy of the structured target S0 (a diagonal matrix: the pooled
within-class variances by default, the identity in standardised coordinates). Writing
t = c s, the evidence depends on (c, t) through the same eigenvalues::

    log p(X) = const + sum_g [log Gamma_d((nu0 + N_g) / 2) - log Gamma_d(nu0 / 2)
               + nu0 d log(t) / 2 - (nu0 + N_g) sum_i log(t + lambda_gi) / 2]

so that each evaluation costs O(G d) after one eigen-decomposition per covariance
group; :func:`evidence_search` maximises it over (log c, log s) (or over one of them with
the other fixed) by L-BFGS-B with the analytic gradient::

    dF/dc       = sum_g [sum_i psi((nu0 + N_g - i) / 2) / 2 - sum_i log(t + l_gi) / 2]
                  - G [sum_i psi((nu0 - i) / 2) / 2 - d log(t) / 2]
    dF/dlog(t)  = sum_g [nu0 d / 2 - (nu0 + N_g) sum_i t / (t + l_gi) / 2]

with dF/dlog(c) = c dF/dc + dF/dlog(t) and dF/dlog(s) = dF/dlog(t). When fewer rows
than features leave zero eigenvalues, the evidence can rise without bound as t -> 0
(the prior then puts its mass where the likelihood is unbounded), which
:data:`S_BOUNDS` stops.

Class-mean strength with the prior mean integrated out (``mean_strength="auto"`` of
LDA, ``flat=True`` below). With m0 the overall mean of the rows plugged in, the
evidence is that of K class means drawn around a *known* centre and charges the Occam
factor of K free means, prod_k (kappa0 / kappa_k)^(d/2), while data centred at their
own mean leave K - 1 free contrasts: with fewer rows per class than features the extra
~(d/2) log(1 + N_k / kappa0) outweighs a real difference of the means and the evidence
merges them (kappa0 -> its upper bound). Integrating m0 out under a flat prior (the
restricted, REML-like evidence; Patterson & Thompson 1971, Harville 1977) instead:
given Sigma, xbar_k ~ N(m0, Sigma / w_k) with w_k = kappa0 N_k / (kappa0 + N_k), and
int dm0 gives (2 pi)^(d/2) |Sigma|^(1/2) W^(-d/2), W = sum_k w_k, so that::

    log p_flat(X) = const + log Gamma_d((nu0 + N - 1) / 2) - log Gamma_d(nu0 / 2)
                    + nu0 / 2 log|Psi0| - (nu0 + N - 1) / 2 log|Psi0 + B_w|
                    + d/2 sum_k log(kappa0 / (kappa0 + N_k)) - d/2 log W
    B_w = S + sum_k w_k (xbar_k - m_w)(xbar_k - m_w)^T,   m_w = sum_k w_k xbar_k / W

(S the pooled within-class scatter): the plug-in evidence with B about m_w, one
covariance degree of freedom fewer and the factor W^(-d/2). At fixed kappa0 it has
the plug-in form in (c, t), so the searches over nu0 and s are the same functions of the
eigenvalues of S0^(-1/2) B_w S0^(-1/2). QDA's classes have their own Sigma_k: the
integral over m0 couples them and has no closed form, so QDA (and the diagonal
families) keep the plug-in evidence.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import digamma, gammaln, zeta

from bayesgen.families import conjugate
from bayesgen.families.gaussian_stats import class_sum
from bayesgen.families.mvn.niw import NIW, natural_prior, posterior
from bayesgen.utils.search import log_bounded_argmax, polish_root

#: search range of c = nu0 - d - 1 for ``cov_dof="auto"``
C_BOUNDS = (1e-2, 1e6)
#: search range of the scale s (prior mean of Sigma = s S0) for ``cov_scale="auto"``
S_BOUNDS = (1e-3, 1e3)


def trigamma(a: np.ndarray) -> np.ndarray:
    """psi1(a) = zeta(2, a) (Hurwitz zeta), the value scipy's ``polygamma(1, a)``
    computes (as 1.0 * zeta(2, a)), without its Python-level overhead."""
    return zeta(2.0, a)


def _group_scatter(stats: dict, m0: np.ndarray, kappa0: float, tied: bool,
                   flat: bool = False) -> tuple[list[np.ndarray], list[float]]:
    """B_g and N_g per covariance group: one (pooled) for LDA, one per class for QDA.
    ``flat`` (LDA only): m0 integrated out under a flat prior (module docstring): the
    class means' scatter about their w-weighted mean m_w and N - 1."""
    count, mean = stats["count"], stats["mean"]
    shrink = kappa0 * count / (kappa0 + count)
    if flat:
        if not tied:
            raise ValueError("the flat-m0 evidence has a closed form for a shared "
                             "covariance (LDA) only.")
        m0 = class_sum(shrink[:, None] * mean) / class_sum(shrink)
    diff = mean - m0
    outer = shrink[:, None, None] * diff[:, :, None] * diff[:, None, :]
    if tied:
        return ([stats["scatter"] + class_sum(outer)],
                [float(class_sum(count)) - (1.0 if flat else 0.0)])
    return list(stats["scatter"] + outer), [float(c) for c in count]


def log_marginal_likelihood(stats: dict, prior: dict, *, tied: bool) -> float:
    """log p(X | y) under the NIW ``prior`` (``m0``, ``kappa0``, ``nu0``, ``Psi0``) of the
    statistics ``count`` (K,), ``mean`` (K, d), ``scatter`` (K, d, d) or (d, d) if ``tied``
    (:class:`.niw.NIW`'s log Z difference)."""
    return conjugate.log_evidence(NIW(tied=tied), natural_prior(prior),
                                  posterior(stats, prior, tied=tied))


def evidence_dof(stats: dict, m0: np.ndarray, kappa0: float, S0: np.ndarray, *,
                 tied: bool, start: float | None = None, flat: bool = False) -> float:
    """The nu0 = d + 1 + c maximising the evidence with Psi0 = (nu0 - d - 1) S0
    (``cov_dof="auto"``), c in :data:`C_BOUNDS`: the root of the slope in c
    (:func:`_newton_polish` of a bounded search), or the bound the evidence rises towards.
    ``start``: a nu0 near the answer (the choice on all rows, for the statistics without a
    row): Newton from there (:func:`_newton_root`) when it converges inside the bounds on a
    concave evidence, which is the root the search reaches, to rounding. ``flat``: the
    flat-m0 evidence (module docstring)."""
    d = m0.size
    eigen, sizes_arr = whitened_eigen(stats, m0, kappa0, S0, tied=tied, flat=flat)

    def neg_log_evidence(log_c: float) -> float:
        c = float(np.exp(log_c))
        return -profile_evidence(c, c, d, eigen, sizes_arr)[0]

    c = _at_bound(d, eigen, sizes_arr)
    if c is not None:
        return d + 1.0 + c
    if start is not None:
        c = _newton_root(float(start) - d - 1.0, d, eigen, sizes_arr)
        if c is not None:
            return d + 1.0 + c
    lo, hi = np.log(C_BOUNDS[0]), np.log(C_BOUNDS[1])
    result = minimize_scalar(neg_log_evidence, bounds=(lo, hi), method="bounded",
                             options={"xatol": 1e-4})
    return d + 1.0 + _newton_polish(float(np.exp(result.x)), d, eigen, sizes_arr)


def _at_bound(d: int, eigen: list[np.ndarray], sizes: np.ndarray) -> float | None:
    """The bound of :data:`C_BOUNDS` the evidence still rises towards, else None (the
    bounded search would stop at a point that moves with rounding)."""
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
    lam, n = np.stack(eigen), np.asarray(sizes, dtype=np.float64)  # (G, d), (G,)
    a = (nu0 + n[:, None]) / 2.0 - half
    inv = 1.0 / (c + lam)
    g1 = (0.5 * digamma(a).sum(axis=1) - 0.5 * np.log(c + lam).sum(axis=1)
          - 0.5 * (nu0 + n) * inv.sum(axis=1))
    g2 = 0.25 * trigamma(a).sum(axis=1) - inv.sum(axis=1) + 0.5 * (nu0 + n) * (
        inv**2).sum(axis=1)
    f1, f2 = class_sum(g1), class_sum(g2)  # independent of class order
    a0 = nu0 / 2.0 - half
    G = len(eigen)
    f1 -= G * (0.5 * digamma(a0).sum() - 0.5 * d * np.log(c) - 0.5 * nu0 * d / c)
    f2 -= G * (0.25 * trigamma(a0).sum() - 0.5 * d / c - 0.5 * d * (c - nu0) / c**2)
    return float(f1), float(f2)


def _newton_polish(c: float, d: int, eigen: list[np.ndarray], sizes: np.ndarray) -> float:
    """Newton steps on the slope from the bounded search's c: the mode to machine
    precision (the same in any units); steps leaving the bounds or a non-concave evidence
    are not taken."""
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


#: Newton steps :func:`_newton_root` takes from a warm start before giving up
NEWTON_STEPS = 30
#: relative size of the last step of :func:`_newton_root`
NEWTON_TOL = 1e-12


def _newton_root(c: float, d: int, eigen: list[np.ndarray], sizes: np.ndarray
                 ) -> float | None:
    """Newton's method on the slope from a warm ``c``: the root once a step is at most
    :data:`NEWTON_TOL` relative (quadratic convergence: within the rounding band of the
    slope, as :func:`_newton_polish`'s), or None (non-concave, out of bounds, or no
    convergence in :data:`NEWTON_STEPS`)."""
    if not (np.isfinite(c) and C_BOUNDS[0] < c < C_BOUNDS[1]):
        return None
    for _ in range(NEWTON_STEPS):
        f1, f2 = _evidence_slope(c, d, eigen, sizes)
        if not f2 < 0:
            return None
        new = c - f1 / f2
        if not C_BOUNDS[0] < new < C_BOUNDS[1]:
            return None
        if abs(new - c) <= NEWTON_TOL * c:
            return new
        c = new
    return None


def whitened_eigen(stats: dict, m0: np.ndarray, kappa0: float, S0: np.ndarray, *,
                   tied: bool, flat: bool = False) -> tuple[list[np.ndarray], np.ndarray]:
    """Eigenvalues (>= 0) of S0^(-1/2) B_g S0^(-T/2) per covariance group, and N_g:
    O(G d^3) once, every evaluation of the searches O(G d) after. ``flat``: B_w and
    N - 1 of the flat-m0 evidence (module docstring)."""
    groups, sizes = _group_scatter(stats, m0, kappa0, tied, flat)
    chol = np.linalg.cholesky(S0)
    eigen = []
    for B in groups:
        W = np.linalg.solve(chol, np.linalg.solve(chol, B).T)
        eigen.append(np.clip(np.linalg.eigvalsh((W + W.T) / 2.0), 0.0, None))
    return eigen, np.asarray(sizes, dtype=np.float64)


def _mvgammaln(a: float, half: np.ndarray) -> float:
    """log Gamma_d(a) without its constant (which cancels in every ratio here)."""
    return float(gammaln(a - half).sum())


def profile_evidence(c: float, t: float, d: int, eigen: list[np.ndarray],
                     sizes: np.ndarray) -> tuple[float, float, float]:
    """The (c, t)-dependent part F of the log evidence with nu0 = d + 1 + c and
    Psi0 = t S0, and dF/dc and dF/dlog(t) (module docstring)."""
    nu0 = d + 1.0 + c
    half = np.arange(d) / 2.0
    value = dc = dlogt = 0.0
    for lam, n in zip(eigen, sizes, strict=True):
        logs = np.log(t + lam)
        value += (_mvgammaln((nu0 + n) / 2.0, half) - 0.5 * (nu0 + n) * logs.sum())
        dc += 0.5 * digamma((nu0 + n) / 2.0 - half).sum() - 0.5 * logs.sum()
        dlogt -= 0.5 * (nu0 + n) * np.sum(t / (t + lam))
    G = len(eigen)
    value -= G * (_mvgammaln(nu0 / 2.0, half) - 0.5 * nu0 * d * np.log(t))
    dc -= G * (0.5 * digamma(nu0 / 2.0 - half).sum() - 0.5 * d * np.log(t))
    dlogt += G * 0.5 * nu0 * d
    return float(value), float(dc), float(dlogt)


def evidence_search(stats: dict, m0: np.ndarray, kappa0: float, S0: np.ndarray, *,
                    tied: bool, dof: float | None = None,
                    scale: float | None = None, start: float | None = None,
                    evidence: bool = True, flat: bool = False) -> dict:
    """Type-II maximum likelihood of nu0 and/or s in Psi0 = (nu0 - d - 1) s S0.

    ``dof`` / ``scale``: fixed values, or None to choose them; ``start``: a nu0 near the
    choice (:func:`evidence_dof`); ``evidence=False`` skips the log evidence; ``flat``:
    choose them by the flat-m0 evidence (module docstring). Returns ``nu0``, ``scale``
    and ``log_evidence`` (:func:`log_marginal_likelihood` there, m0 given: the evidence
    of the prior the fit uses)."""
    d = m0.size
    if scale is None and dof is not None:
        s = _search_scale(d, float(dof) - d - 1.0, *whitened_eigen(stats, m0, kappa0, S0,
                                                                     tied=tied, flat=flat))
        nu0 = float(dof)
    elif scale is None:
        eigen, sizes = whitened_eigen(stats, m0, kappa0, S0, tied=tied, flat=flat)
        c, s = _search_both(d, eigen, sizes, evidence_dof(stats, m0, kappa0, S0, tied=tied,
                                                          start=start, flat=flat))
        nu0 = d + 1.0 + c
    else:
        s = float(scale)
        nu0 = (evidence_dof(stats, m0, kappa0, s * S0, tied=tied, start=start, flat=flat)
               if dof is None else float(dof))
    prior = {"m0": m0, "kappa0": kappa0, "nu0": nu0, "Psi0": (nu0 - d - 1.0) * s * S0}
    return {"nu0": float(nu0), "scale": float(s),
            "log_evidence": log_marginal_likelihood(stats, prior, tied=tied) if evidence
            else None}


def _search_scale(d: int, c: float, eigen: list[np.ndarray], sizes: np.ndarray) -> float:
    """argmax over s in :data:`S_BOUNDS` at fixed c: the root of dF/dlog(t) (Brent)."""
    def slope(log_s: float) -> float:
        return profile_evidence(c, c * np.exp(log_s), d, eigen, sizes)[2]

    return log_bounded_argmax(slope, S_BOUNDS)


def _search_both(d: int, eigen: list[np.ndarray], sizes: np.ndarray,
                 nu0_start: float) -> tuple[float, float]:
    """argmax over (log c, log s) by L-BFGS-B from s = 1 and the ``cov_dof="auto"``
    choice, finished by :func:`_polish_both` and the exact optimum in s."""
    from scipy.optimize import minimize

    def objective(p: np.ndarray) -> tuple[float, np.ndarray]:
        c, s = np.exp(p)
        value, dc, dlogt = profile_evidence(c, c * s, d, eigen, sizes)
        return -value, -np.array([c * dc + dlogt, dlogt])

    bounds = [tuple(np.log(C_BOUNDS)), tuple(np.log(S_BOUNDS))]
    best = minimize(objective, np.array([np.log(nu0_start - d - 1.0), 0.0]), jac=True,
                    method="L-BFGS-B", bounds=bounds,
                    options={"ftol": 1e-13, "gtol": 1e-8, "maxiter": 200})
    c = _polish_both(float(np.exp(best.x[0])), d, eigen, sizes)
    return c, _search_scale(d, c, eigen, sizes)


def _polish_both(c: float, d: int, eigen: list[np.ndarray], sizes: np.ndarray) -> float:
    """The root in log c of the profile slope (s at its optimum) near ``c``
    (:func:`bayesgen.utils.search.polish_root`): L-BFGS-B stops on a flat evidence at a
    point that moves with summation order by ~1e-7, the root only by rounding (~1e-12);
    the bound the profile rises towards when there is no sign change."""
    def slope(log_c: float) -> float:
        c_ = float(np.exp(log_c))
        s = _search_scale(d, c_, eigen, sizes)
        return c_ * profile_evidence(c_, c_ * s, d, eigen, sizes)[1]

    return float(np.exp(polish_root(slope, np.log(c), tuple(np.log(C_BOUNDS)))))


#: search range of kappa0 (``mean_strength="auto"``)
K_BOUNDS = (1e-4, 1e4)


def kappa_parts(stats: dict, m0: np.ndarray, S0: np.ndarray, *, tied: bool) -> list[tuple]:
    """Per covariance group: eigenvalues lam (d,) of the whitened scatter, the whitened
    class-mean offsets in its eigenbasis U (d, K_g), the counts n (K_g,) and N_g. With
    w_k = kappa0 n_k / (kappa0 + n_k) the determinant lemma gives
    log|t I + S0^(-1/2) B_g S0^(-T/2)| = sum_i log(t + lam_i)
    + log|I + W^(1/2) U^T diag(1 / (t + lam)) U W^(1/2)|: O(d K_g^2) for any kappa0."""
    chol = np.linalg.cholesky(S0)
    count, mean = stats["count"], stats["mean"]
    offsets = np.linalg.solve(chol, (mean - m0).T)  # (d, K)
    scatters = [stats["scatter"]] if tied else list(stats["scatter"])
    out = []
    for g, S in enumerate(scatters):
        W = np.linalg.solve(chol, np.linalg.solve(chol, S).T)
        lam, V = np.linalg.eigh((W + W.T) / 2.0)
        cols = slice(None) if tied else slice(g, g + 1)
        out.append((np.clip(lam, 0.0, None), V.T @ offsets[:, cols], count[cols],
                    float(count[cols].sum())))
    return out


def profile_kappa(c: float, t: float, kappa0: float, d: int, parts: list[tuple],
                  flat: bool = False) -> float:
    """The log evidence at (c, t, kappa0) up to a constant: :func:`profile_evidence`
    plus d / 2 sum_k log(kappa0 / (kappa0 + n_k)), via :func:`kappa_parts`; ``flat``:
    the flat-m0 evidence (module docstring)."""
    return profile_kappa_grad(c, t, kappa0, d, parts, flat)[0]


def profile_kappa_grad(c: float, t: float, kappa0: float, d: int, parts: list[tuple],
                       flat: bool = False) -> tuple[float, float, float, float]:
    """:func:`profile_kappa` F and its partial derivatives dF/dlog(kappa0), dF/dc (t
    fixed) and dF/dlog(t). With Q = (I + M)^(-1), M = W^(1/2) A W^(1/2),
    A = U^T diag(1 / (t + lam)) U and r_k = n_k / (kappa0 + n_k) = dlog(w_k)/dlog(kappa0)::

        dlog|I + M| / dlog(kappa0) = sum_k r_k (Q M)_kk
        dlog|I + M| / dlog(t)      = -t tr(Q W^(1/2) U^T diag(1 / (t + lam)^2) U W^(1/2))

    so that a gradient costs no more than a value (O(d K_g^2) per group).

    ``flat`` (one group, LDA): m0 integrated out (module docstring), through
    :func:`_flat_kappa_grad`."""
    if flat:
        return _flat_kappa_grad(c, t, kappa0, d, parts)
    nu0 = d + 1.0 + c
    half = np.arange(d) / 2.0
    value = dlogk = dc = dlogt = 0.0
    for lam, U, n, size in parts:
        w = kappa0 * n / (kappa0 + n)
        r = n / (kappa0 + n)
        inv = 1.0 / (t + lam)
        root = np.sqrt(w)
        V = U * root[None, :]  # U W^(1/2), (d, K_g)
        M = (V * inv[:, None]).T @ V
        eye = np.eye(w.size)
        _, small = np.linalg.slogdet(eye + M)
        Q = np.linalg.inv(eye + M)
        logdet = np.log(t + lam).sum() + small
        d_small_logk = float(np.sum(r * np.einsum("ij,ji->i", Q, M)))
        M2 = (V * (inv * inv)[:, None]).T @ V
        d_logdet_logt = t * (inv.sum() - float(np.sum(Q * M2)))
        value += _mvgammaln((nu0 + size) / 2.0, half) - 0.5 * (nu0 + size) * logdet
        value += 0.5 * d * np.sum(np.log(kappa0 / (kappa0 + n)))
        dlogk += -0.5 * (nu0 + size) * d_small_logk + 0.5 * d * np.sum(r)
        dc += 0.5 * digamma((nu0 + size) / 2.0 - half).sum() - 0.5 * logdet
        dlogt -= 0.5 * (nu0 + size) * d_logdet_logt
    G = len(parts)
    value -= G * (_mvgammaln(nu0 / 2.0, half) - 0.5 * nu0 * d * np.log(t))
    dc -= G * (0.5 * digamma(nu0 / 2.0 - half).sum() - 0.5 * d * np.log(t))
    dlogt += G * 0.5 * nu0 * d
    return float(value), float(dlogk), float(dc), float(dlogt)


def _flat_kappa_grad(c: float, t: float, kappa0: float, d: int, parts: list[tuple]
                     ) -> tuple[float, float, float, float]:
    """:func:`profile_kappa_grad` of the flat-m0 evidence (module docstring), one
    covariance group. The between-class scatter about m_w is U P U^T with the (K, K)
    matrix P = diag(w) - w w^T / W (P 1 = 0: any reference point of the offsets U
    gives the same P U^T), so that with A = U^T diag(1 / (t + lam)) U,
    A2 = U^T diag(1 / (t + lam)^2) U and X = I + P A (Sylvester's determinant identity)::

        log|t I + lam + U P U^T| = sum_i log(t + lam_i) + log|X|
        dlog|X| / dlog(kappa0)   = tr(X^(-1) P' A),   dlog|X| / dlog(t) = -t tr(X^(-1) P A2)
        P' = dP / dlog(kappa0) = diag(w r) - (w r w^T + w (w r)^T) / W
                                 + w w^T sum_k(w_k r_k) / W^2

    (r_k = n_k / (kappa0 + n_k) = dlog(w_k) / dlog(kappa0)), and with N' = N - 1::

        F = log Gamma_d((nu0 + N') / 2) - (nu0 + N') / 2 log|t I + lam + U P U^T|
            + d/2 sum_k log(kappa0 / (kappa0 + n_k)) - d/2 log W
            - log Gamma_d(nu0 / 2) + nu0 d / 2 log(t)
        dF/dlog(kappa0) = -(nu0 + N') / 2 tr(X^(-1) P' A) + d/2 sum_k r_k
                          - d/2 sum_k w_k r_k / W"""
    if len(parts) != 1:
        raise ValueError("the flat-m0 evidence has a closed form for a shared "
                         "covariance (LDA) only.")
    ((lam, U, n, size),) = parts
    nu0 = d + 1.0 + c
    half = np.arange(d) / 2.0
    size = size - 1.0
    w = kappa0 * n / (kappa0 + n)
    r = n / (kappa0 + n)
    wr = w * r
    W, WR = float(class_sum(w)), float(class_sum(wr))
    inv = 1.0 / (t + lam)
    A = (U * inv[:, None]).T @ U
    A2 = (U * (inv * inv)[:, None]).T @ U
    P = np.diag(w) - np.outer(w, w) / W
    dP = (np.diag(wr) - (np.outer(wr, w) + np.outer(w, wr)) / W
          + np.outer(w, w) * WR / W**2)
    X = np.eye(w.size) + P @ A
    _, small = np.linalg.slogdet(X)
    Xi = np.linalg.inv(X)
    logdet = np.log(t + lam).sum() + small
    d_small_logk = float(np.sum(Xi * (dP @ A).T))
    d_logdet_logt = t * (inv.sum() - float(np.sum(Xi * (P @ A2).T)))
    value = (_mvgammaln((nu0 + size) / 2.0, half) - 0.5 * (nu0 + size) * logdet
             + 0.5 * d * float(class_sum(np.log(kappa0 / (kappa0 + n)))) - 0.5 * d * np.log(W)
             - _mvgammaln(nu0 / 2.0, half) + 0.5 * nu0 * d * np.log(t))
    dlogk = (-0.5 * (nu0 + size) * d_small_logk + 0.5 * d * float(class_sum(r))
             - 0.5 * d * WR / W)
    dc = (0.5 * digamma((nu0 + size) / 2.0 - half).sum() - 0.5 * logdet
          - 0.5 * digamma(nu0 / 2.0 - half).sum() + 0.5 * d * np.log(t))
    dlogt = -0.5 * (nu0 + size) * d_logdet_logt + 0.5 * nu0 * d
    return float(value), float(dlogk), float(dc), float(dlogt)


#: points of the fixed grid over log kappa0 (:data:`K_BOUNDS`) on which
#: :func:`evidence_search_kappa` brackets the local maxima when only kappa0 is searched
K_GRID = 25


def evidence_search_kappa(stats: dict, m0: np.ndarray, S0: np.ndarray, *, tied: bool,
                          dof: float | None = None, scale: float | None = None,
                          start_kappa0: float = 1.0, flat: bool = False) -> dict:
    """Type-II maximum likelihood of kappa0 (``mean_strength="auto"``) with nu0 and/or
    s when None, then :func:`evidence_search` at that kappa0. Returns ``kappa0``, ``nu0``,
    ``scale``, ``log_evidence`` (the evidence with m0 given, of the prior the fit uses).
    ``flat`` (LDA): every choice by the evidence with m0 integrated out under a flat
    prior (module docstring), m0 then only the reference point of the offsets.

    kappa0 alone (nu0 and s given): the slope dF/dlog(kappa0) of :func:`profile_kappa_grad`
    on a fixed grid of :data:`K_GRID` points over log :data:`K_BOUNDS`, each sign change
    (+ to -) a local maximum found by Brent's method on the slope (xtol 1e-14 in
    log kappa0), a bound when the evidence rises towards it; the best of them. With nu0
    and/or s searched too: L-BFGS-B on :func:`profile_kappa_grad` (analytic gradient) from
    two starts, then kappa0 polished as the root of the slope of the evidence profiled
    over nu0 and/or s (each evaluation their roots at that kappa0, by
    :func:`evidence_search`; :func:`bayesgen.utils.search.polish_root`). Either way the
    answer is a root of a slope (or a bound), so that equal statistics give equal choices
    to ~1e-12, not a point where a search on values stopped."""
    d = m0.size
    parts = kappa_parts(stats, m0, S0, tied=tied)
    free_c, free_s = dof is None, scale is None
    if not (free_c or free_s):
        c, s = float(dof) - d - 1.0, float(scale)
        kappa0 = _kappa_alone(c, c * s, d, parts, flat)
    else:
        kappa0, c, s = _kappa_with(d, parts, dof, scale, start_kappa0, flat)

        def profile_slope(lk: float) -> float:
            # slope of the evidence maximised over the searched nu0 and/or s at this
            # kappa0 (envelope theorem: the partial slope at their roots)
            k = float(np.exp(lk))
            at = evidence_search(stats, m0, k, S0, tied=tied, dof=dof, scale=scale,
                                 evidence=False, flat=flat)
            c_ = at["nu0"] - d - 1.0
            return profile_kappa_grad(c_, c_ * at["scale"], k, d, parts, flat)[1]

        kappa0 = float(np.exp(polish_root(profile_slope, np.log(kappa0),
                                          tuple(np.log(K_BOUNDS)))))
    found = evidence_search(stats, m0, kappa0, S0, tied=tied, dof=dof, scale=scale,
                            flat=flat)
    return dict(found, kappa0=float(kappa0))


def _kappa_alone(c: float, t: float, d: int, parts: list[tuple], flat: bool = False
                 ) -> float:
    """argmax over kappa0 in :data:`K_BOUNDS` of :func:`profile_kappa` at fixed (c, t):
    the best local maximum bracketed on the fixed grid (:func:`evidence_search_kappa`)."""
    from scipy.optimize import brentq

    def slope(lk: float) -> float:
        return profile_kappa_grad(c, t, float(np.exp(lk)), d, parts, flat)[1]

    grid = np.linspace(*np.log(K_BOUNDS), K_GRID)
    slopes = [slope(lk) for lk in grid]
    found = [grid[0]] if slopes[0] < 0 else []
    found += [brentq(slope, a, b, xtol=1e-14, rtol=4 * np.finfo(float).eps)
              for a, b, fa, fb in zip(grid[:-1], grid[1:], slopes[:-1], slopes[1:],
                                      strict=True) if fa > 0 >= fb or fa >= 0 > fb]
    found += [grid[-1]] if slopes[-1] > 0 else []
    if not found:  # a constant evidence (no class rows at all): the lower bound
        found = [grid[0]]
    values = [profile_kappa(c, t, float(np.exp(lk)), d, parts, flat) for lk in found]
    return float(np.exp(found[int(np.argmax(values))]))


def _kappa_with(d: int, parts: list[tuple], dof: float | None, scale: float | None,
                start_kappa0: float, flat: bool = False) -> tuple[float, float, float]:
    """(kappa0, c, s) by L-BFGS-B on log(kappa0) and log c and/or log s from two starts
    (:func:`evidence_search_kappa`)."""
    from scipy.optimize import minimize

    free_c, free_s = dof is None, scale is None

    def unpack(p: np.ndarray) -> tuple[float, float, float]:
        values = list(np.exp(p))
        kappa0 = values.pop(0)
        c = values.pop(0) if free_c else float(dof) - d - 1.0
        s = values.pop(0) if free_s else float(scale)
        return kappa0, c, s

    def objective(p: np.ndarray) -> tuple[float, np.ndarray]:
        kappa0, c, s = unpack(p)
        value, dlogk, dc, dlogt = profile_kappa_grad(c, c * s, kappa0, d, parts, flat)
        grad = [dlogk] + [c * dc + dlogt] * free_c + [dlogt] * free_s
        return -value, -np.array(grad)

    bounds = [tuple(np.log(K_BOUNDS))] + [tuple(np.log(C_BOUNDS))] * free_c + [
        tuple(np.log(S_BOUNDS))] * free_s
    best = None
    for kappa_start, c_start in ((start_kappa0, d + 1.0), (0.01, 1.0)):
        start = [np.log(kappa_start)] + [np.log(c_start)] * free_c + [0.0] * free_s
        result = minimize(objective, np.array(start), jac=True, method="L-BFGS-B",
                          bounds=bounds, options={"ftol": 1e-14, "gtol": 1e-9, "maxiter": 500})
        if best is None or result.fun < best.fun:
            best = result
    return unpack(best.x)


def pooled_target(stats: dict, m0: np.ndarray, kappa0: float, D: np.ndarray) -> np.ndarray:
    """The pooled covariance (d, d) that QDA's ``cov_target="pooled"`` centres every
    class on: LDA's posterior mean of the shared covariance under its evidence-chosen prior
    around the diagonal target ``D``::

        S_pool = (c D + sum_k B_k) / (c + N),   c = argmax_c p(X | y; LDA, c)

    positive definite for any N and d. With ``cov_dof="auto"`` the evidence then chooses
    how strongly the class covariances are pooled (nu0 -> d + 1: their own; nu0 -> inf:
    S_pool), the Bayesian counterpart of Friedman's RDA."""
    scatter = stats["scatter"]
    tied = dict(stats, scatter=class_sum(scatter) if scatter.ndim == 3 else scatter)
    d = m0.size
    c = evidence_dof(tied, m0, kappa0, D, tied=True) - d - 1.0
    (B,), (n,) = _group_scatter(tied, m0, kappa0, True)
    pooled = (c * D + B) / (c + n)
    return (pooled + pooled.T) / 2.0
