"""EM for the posterior mode of one class's mixture, and BIC.

Model of the rows Z (n, d) of one class, weights v (n,)::

    w ~ Dirichlet(alpha 1_M),   theta_m ~ prior (the component family's conjugate prior)
    z_n | theta, w ~ sum_m w_m f(z_n | theta_m)

EM (Dempster, Laird and Rubin 1977) for the MAP (Fraley and Raftery 2007): the E-step
computes the responsibilities r_nm = w_m f(z_n | theta_m) / sum_j w_j f(z_n | theta_j);
the M-step is the component family's closed-form posterior mode of the statistics of
the rows weighted by v_n r_nm (each component is a "class" of the component family,
:func:`component_stats`; Gaussian: the NIW mode; Bernoulli with a Beta(a, a) prior:
theta_mj = (c_mj + a - 1) / (N_m + 2 (a - 1)); Poisson with a Gamma(a, beta_j) prior:
lambda_mj = (c_mj + a - 1) / (N_m + beta_j), with c_mj = sum_n v_n r_nm x_nj), and
w_m = (N_m + alpha - 1)_+ / sum_j (N_j + alpha - 1)_+ with N_m = sum_n v_n r_nm.
Each iteration does not decrease the objective

    sum_n v_n log sum_m w_m f(z_n | theta_m) + log p(theta) + (alpha - 1) sum_m log w_m,

and it stops when an iteration changes the log-likelihood (the first term) by at most
``tol`` times (1 + abs(log-likelihood)) (mclust's relative tolerance, 1e-5 by default), or
after ``max_iter`` iterations.
The conjugate prior keeps every covariance positive definite, so no component can
collapse onto a point (the MLE's singularity).

Missing entries (NaN in Z) of Bernoulli and Poisson components need nothing more: their
statistics count each feature's observed entries, and a missing entry drops its factor
of the density. Gaussian components: the E-step also fills in each row's missing coordinates
given its observed ones under each component (Little and Rubin 2002, ch. 11): the
responsibilities use the Gaussian marginal of the observed coordinates (the component
family's ``log_lik``), and the M-step takes the expected complete-data statistics of
every (missing pattern, component) group at the current parameters (:func:`completed`,
the MVN family's E-step; the first from the available-case moments of the start's
partition; the k-means starts impute the observed column means). The
objective is then the observed-data log posterior, and it still never decreases.

Starts: M = 1 needs none (r = 1). Otherwise each of ``n_init`` starts takes the hard
partition of weighted k-means (k-means++ seeding, one seeding per start, then Lloyd
steps: :func:`_kmeans_labels`) as its first responsibilities; the start with the largest
final objective wins.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from bayesgen.utils.logspace import fast_logsumexp


@dataclass(frozen=True)
class ClassFit:
    """The MAP mixture of one class.

    Attributes
    ----------
    weights : ndarray (M,)
    params : dict
        The component family's parameters of the M components (``mu`` (M, d), ``cov``
        (M, d, d); ``theta`` or ``rate`` (M, d)), internal frame.
    log_lik : float
        sum_n v_n log p(z_n | theta) at the mode.
    objective : float
        The MAP objective (log-likelihood + log prior, up to a constant).
    n_iter : int
        EM iterations of the winning start.
    converged : bool
    bic : float
        2 log_lik - p log N (mclust's sign: larger is better), p the free parameters.
    """

    weights: np.ndarray
    params: dict
    log_lik: float
    objective: float
    n_iter: int
    converged: bool
    bic: float


def component_log_joint(component, Z: np.ndarray, fit: ClassFit) -> np.ndarray:
    """log w_m + log f(z_n | theta_m) of rows Z (n, d) under one class's fit, (n, M)."""
    with np.errstate(divide="ignore"):
        return component.log_lik(Z, fit.params, full=True) + np.log(fit.weights)


def hard_labels(component, Z: np.ndarray, fit: ClassFit) -> np.ndarray:
    """The most probable component of every row under ``fit``, (n,)."""
    return np.argmax(component_log_joint(component, Z, fit), axis=1).astype(np.intp)


def log_lik(component, Z: np.ndarray, fit: ClassFit) -> np.ndarray:
    """log sum_m w_m f(z_n | theta_m) of rows Z (n, d) under one class's fit, (n,)."""
    return logsumexp(component_log_joint(component, Z, fit), axis=1)


def component_stats(component, Z: np.ndarray, R: np.ndarray, v: np.ndarray) -> dict:
    """The component family's statistics of M "classes" whose rows are Z weighted by
    v_n r_nm (R (n, M) responsibilities, v (n,) row weights)."""
    n, M = R.shape
    if M == 1:
        return component.stats(Z, np.zeros(n, dtype=np.intp), v, 1)
    return component.stats(np.tile(Z, (M, 1)), np.repeat(np.arange(M), n),
                           (R * v[:, None]).T.ravel(), M)


def map_weights(counts: np.ndarray, alpha: float) -> np.ndarray:
    """Mode of the Dirichlet(alpha + N) posterior of the weights, (M,):
    (N_m + alpha - 1)_+ normalised (the MLE N_m / N at alpha = 1)."""
    numer = np.maximum(np.asarray(counts, dtype=np.float64) + alpha - 1.0, 0.0)
    total = numer.sum()
    if total <= 0:  # every component emptied by a sparse prior: keep the largest
        numer = (counts == counts.max()).astype(np.float64)
        total = numer.sum()
    return numer / total


def n_parameters(M: int, per_component: int) -> int:
    """Free parameters of an M-component mixture: M - 1 weights and M components of
    ``per_component`` free parameters each (:func:`component_size`)."""
    return (M - 1) + M * int(per_component)


def component_size(kind: str, d: int) -> int:
    """Free parameters of one component in d dimensions: a Gaussian's d means and its
    covariance's d(d + 1)/2 entries (``kind="full"``) or d variances (``"diag"``); d
    probabilities (``"bernoulli"``) or rates (``"poisson"``)."""
    if kind == "full":
        return d + d * (d + 1) // 2
    if kind == "diag":
        return 2 * d
    if kind in ("bernoulli", "poisson"):
        return d
    raise ValueError(f"component_size: unknown component kind {kind!r}.")


def _log_prior(component, params: dict, prior: dict, weights: np.ndarray,
               alpha: float) -> float:
    used = weights > 0
    comp = {key: value[used] for key, value in params.items()}
    total = float(component.log_prior(comp, prior))
    return total + float((alpha - 1.0) * np.sum(np.log(weights[used])))


def run(component, Z: np.ndarray, v: np.ndarray, prior: dict, M: int, *, alpha: float,
        n_init: int, max_iter: int, tol: float, rng: np.random.Generator,
        per_component: int, start: np.ndarray | None = None) -> ClassFit:
    """The MAP mixture of M components of rows Z (n, d) with weights v (n,): the best of
    ``n_init`` EM runs (one when M = 1). ``rng`` seeds the k-means starts;
    ``per_component``: the free parameters of one component (:func:`component_size`),
    for BIC. ``start``: hard labels (n,) to start one EM run from instead (a warm
    start)."""
    if start is not None:
        starts = [start]
    elif M == 1:
        starts = [np.zeros(Z.shape[0], dtype=np.intp)]
    else:
        starts = [_kmeans_labels(Z, v, M, rng) for _ in range(max(1, n_init))]
    best = None
    for labels in starts:
        fit = _em(component, Z, v, prior, np.eye(M)[labels], alpha, max_iter, tol)
        if best is None or fit[3] > best[3]:
            best = fit
    weights, params, log_lik, objective, n_iter, converged = best
    N = float(v.sum())
    bic = 2.0 * log_lik - n_parameters(M, per_component) * np.log(max(N, 1.0))
    return ClassFit(weights, params, log_lik, objective, n_iter, converged, float(bic))


def _kmeans_labels(Z: np.ndarray, v: np.ndarray, M: int, rng: np.random.Generator,
                   n_steps: int = 20) -> np.ndarray:
    """Hard k-means partition, (n,) labels in [0, M): k-means++ seeding (Arthur and
    Vassilvitskii 2007; each next centre drawn with probability proportional to v_n
    times the squared distance to the nearest centre so far), then at most ``n_steps``
    weighted Lloyd steps. A centre left without rows keeps its place."""
    n = Z.shape[0]
    if np.isnan(Z).any():  # missing entries: the starts only see the observed means
        Z = np.where(np.isnan(Z), np.nanmean(Z, axis=0), Z)
        Z = np.nan_to_num(Z)  # a column with nothing observed
    p = v / v.sum()
    centres = np.empty((M, Z.shape[1]))
    centres[0] = Z[rng.choice(n, p=p)]
    d2 = ((Z - centres[0]) ** 2).sum(axis=1)
    for m in range(1, M):
        q = v * d2
        total = q.sum()
        pick = rng.choice(n, p=q / total) if total > 0 else rng.choice(n, p=p)
        centres[m] = Z[pick]
        d2 = np.minimum(d2, ((Z - centres[m]) ** 2).sum(axis=1))
    labels = np.full(n, -1, dtype=np.intp)
    for _ in range(n_steps):
        dist = (Z**2).sum(axis=1)[:, None] - 2.0 * Z @ centres.T + (centres**2).sum(axis=1)
        new = np.argmin(dist, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        mass = np.bincount(labels, weights=v, minlength=M)
        sums = np.zeros_like(centres)
        np.add.at(sums, labels, Z * v[:, None])
        filled = mass > 0
        centres[filled] = sums[filled] / mass[filled, None]
    return labels


def completed(component, stats: dict, params: dict) -> dict:
    """The expected complete-data statistics of pattern-grouped statistics (rows with
    missing entries) at the component parameters ``params``: E[z_mis | z_obs, m] and
    its conditional covariance filled in per (pattern, component) group (the MVN
    family's E-step, :func:`bayesgen.families.mvn.em.completed_stats`)."""
    from bayesgen.families.mvn.em import completed_stats

    out = completed_stats(component, stats, params)
    out.update({key: stats[key] for key in ("loc", "scale") if key in stats})
    return out


def _m_step(component, stats: dict, prior: dict, params: dict | None) -> dict:
    """The components' posterior mode given the responsibility-weighted statistics;
    with missing entries ("groups"), at the E-step's completed statistics under the
    current ``params`` (None on the first iteration: the available-case moments of
    each component's rows)."""
    if "groups" in stats:
        if params is None:  # the available-case moments of the start's partition
            from bayesgen.families.mvn.em import start

            params = start(stats, False)
        stats = completed(component, stats, params)
    found = component.map(stats, prior)
    return {key: found[key] for key in component.param_dims}


def _em(component, Z, v, prior, R, alpha, max_iter, tol):
    previous = -np.inf
    converged = False
    n_iter = 0
    params = None
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (n_iter is reported)
        stats = component_stats(component, Z, R, v)
        params = _m_step(component, stats, prior, params)
        weights = map_weights(stats["count"], alpha)
        with np.errstate(divide="ignore"):
            L = component.log_lik(Z, params, full=True) + np.log(weights)
        rows = fast_logsumexp(L, axis=1)
        log_lik = float(v @ rows)
        R = np.exp(L - rows[:, None])
        if abs(log_lik - previous) <= tol * (1.0 + abs(log_lik)):
            converged = True
            break
        previous = log_lik
    objective = log_lik + _log_prior(component, params, prior, weights, alpha)
    return weights, params, log_lik, objective, n_iter, converged
