"""Posterior draws of one class's mixture by data augmentation (a Gibbs sampler).

For the rows Z (n, d) of a class, weights v (n,), M components, one sweep is
(Diebolt and Robert 1994):

1. component labels given the parameters: z_n ~ Categorical(r_n),
   r_nm proportional to w_m f(z_n | theta_m) (drawn by the Gumbel-max trick);
2. the parameters given the labels, by the component family's conjugate update:
   theta_m ~ p(theta | rows with z_n = m, prior) (``conditional_posterior`` then
   ``draw``), and w ~ Dirichlet(alpha + N), N_m = sum_{z_n = m} v_n.

Missing entries (NaN; Tanner and Wong 1987): step 1 draws each label from the
component densities of the row's observed coordinates (the family's ``log_lik``
integrates the missing ones out), i.e. from p(z_n | x_obs, theta) with the missing
coordinates summed out; step 2 first draws the missing coordinates given the label,
x_mis | x_obs, z_n = m ~ N(mu_m,mis + B (x_obs - mu_m,obs), C) for a full-covariance
Gaussian component (the regression B and residual covariance C of
:mod:`bayesgen.families.mvn.patterns`), and then the component from the completed
statistics: the component family's ``conditional_posterior`` hook does both, drawing
the completed statistics of every (missing pattern, component) group exactly
(:func:`bayesgen.families.mvn.augment.conditional_posterior`). Together the sweep draws
(z, x_mis) from p(z, x_mis | x_obs, theta) and then theta | z, x: a blocked Gibbs
sampler of the observed-data posterior. Diagonal Gaussian, Bernoulli and Poisson
components need no completion (a missing entry drops its factor and its count), and
their hook is the plain conjugate posterior. Without missing entries the hook uses no
random numbers and is ``posterior``.

A row weight v_n counts as v_n copies of the row that share one label (exact for
integer weights). Each chain starts at the MAP (EM's mode), runs ``tune`` sweeps of
warm-up and keeps ``draws``.

Label switching: the likelihood is invariant to permuting the components, so the
posterior is symmetric and a chain may permute them. The predictive densities
(``predict_proba``, ``score_samples``, the pointwise log-likelihood, LOO) are sums over
components and do not depend on the labeling. Parameter summaries do: every kept draw
is relabeled by the permutation that brings its means (Gaussian mu in the internal,
standardised frame; Bernoulli theta; Poisson rate) closest, in squared distance, to the
pivot, the MAP's means (Hungarian algorithm; Marin, Mengersen and Robert 2005's pivotal
relabeling). With well separated
components that is the identity; with overlapping ones the summaries of the relabeled
draws are the meaningful ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from bayesgen.utils.logspace import fast_logsumexp


@dataclass(frozen=True)
class ClassDraws:
    """Draws of one class's mixture.

    Attributes
    ----------
    weights : ndarray (chains, draws, M)
    params : dict
        The component parameters with leading dims (chains, draws, M): ``mu``
        (chains, draws, M, d), ``cov`` (chains, draws, M, d, d), ``theta`` or ``rate``
        (chains, draws, M, d); internal frame.
    log_lik : ndarray (chains, draws)
        sum_n v_n log p(z_n | theta) of each kept draw.
    relabeled : ndarray (chains, draws) of bool
        Draws whose components were permuted to match the pivot.
    """

    weights: np.ndarray
    params: dict
    log_lik: np.ndarray
    relabeled: np.ndarray


def run(component, Z: np.ndarray, v: np.ndarray, prior: dict, start_weights: np.ndarray,
        start_params: dict, *, alpha: float, chains: int, draws: int, tune: int,
        rng: np.random.Generator) -> ClassDraws:
    """``chains`` chains of data augmentation for one class, each from the MAP.

    The chains run side by side: their C * M components are the "classes" of one call
    of each component hook per sweep (labels of chain c are offset by c M).
    ``start_params``: the component family's parameters of the M components (leading
    dim M); its first key is the components' mean, the pivot of :func:`relabel`."""
    M = start_weights.shape[0]
    n = Z.shape[0]
    C = chains
    keys = list(start_params)
    W = np.empty((C, draws, M))
    P = {key: np.empty((C, draws, *np.shape(value))) for key, value in start_params.items()}
    LL = np.empty((C, draws))
    weights = np.tile(start_weights, (C, 1))  # (C, M)
    params = {key: np.concatenate([value] * C) for key, value in start_params.items()}
    Z_all, v_all = np.tile(Z, (C, 1)), np.tile(v, C)
    offset = np.repeat(np.arange(C) * M, n)
    for t in range(tune + draws):
        with np.errstate(divide="ignore"):
            L = (component.log_lik(Z, params, full=True).reshape(n, C, M)
                 + np.log(weights))  # (n, C, M)
        if t >= tune:
            s = t - tune
            W[:, s] = weights
            for key in keys:
                P[key][:, s] = params[key].reshape(C, *P[key].shape[2:])
            LL[:, s] = v @ fast_logsumexp(L, axis=2)
        if M == 1:
            labels = np.zeros((n, C), dtype=np.intp)
        else:
            labels = np.argmax(L + rng.gumbel(size=L.shape), axis=2)
        stats = component.stats(Z_all, labels.T.ravel() + offset, v_all, C * M)
        post = component.conditional_posterior(stats, params, prior, rng)  # + x_mis
        drawn = component.draw(post, 1, rng)
        params = {key: drawn[key][0] for key in keys}
        counts = np.asarray(stats["count"]).reshape(C, M)
        weights = np.stack([_dirichlet(alpha + counts[c], rng) for c in range(C)])
    flat = {key: value.reshape(C * draws, *value.shape[2:]) for key, value in P.items()}
    W, flat, relabeled = relabel(W.reshape(C * draws, M), flat, start_params[keys[0]])
    return ClassDraws(W.reshape(C, draws, M),
                      {key: value.reshape(C, draws, *value.shape[1:])
                       for key, value in flat.items()},
                      LL, relabeled.reshape(C, draws))


def relabel(W: np.ndarray, params: dict,
            pivot: np.ndarray) -> tuple[np.ndarray, dict, np.ndarray]:
    """Draws of one class's M components relabeled to the pivot's order (module
    docstring): W (S, M), ``params`` the component parameters with leading dims (S, M)
    (e.g. ``mu`` (S, M, d), ``cov`` (S, M, d, d)), its first key the components' means;
    pivot (M, d) the MAP's means. Each draw's components are permuted by the assignment
    that minimises the summed squared distances of its means to the pivot's
    (Hungarian algorithm). Returns the relabeled copies and ``relabeled`` (S,) of
    bool: the draws that were permuted."""
    S, M = W.shape
    W = W.copy()
    params = {key: np.array(value, copy=True) for key, value in params.items()}
    relabeled = np.zeros(S, dtype=bool)
    if M == 1:
        return W, params, relabeled
    means = params[next(iter(params))]
    for s in range(S):
        cost = ((means[s][:, None, :] - pivot[None, :, :]) ** 2).sum(axis=-1)
        _, perm = linear_sum_assignment(cost.T)  # perm[j]: the draw's match of j
        if np.any(perm != np.arange(M)):
            relabeled[s] = True
            W[s] = W[s][perm]
            for value in params.values():
                value[s] = value[s][perm]
    return W, params, relabeled


def _dirichlet(concentration: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One Dirichlet draw (normalised Gammas; a zero concentration gives weight 0)."""
    g = np.where(concentration > 0, rng.standard_gamma(np.maximum(concentration, 1e-300)),
                 0.0)
    total = g.sum()
    if not total > 0:  # every Gamma underflowed (tiny concentrations): the largest wins
        g = (concentration == concentration.max()).astype(np.float64)
        total = g.sum()
    return g / total
