"""Unlabeled rows in KernelNB and in MixedNB's kernel parts (``"mle"``, ``"map"``).

The class densities stay the KDEs of the *labeled* points, with bandwidths h_kj; the
unlabeled rows enter through their mixture likelihood (lambda = ``unlabeled_weight``)::

    l(h, theta, pi) = sum_{n in L} w_n [log pi_{y_n} + log p_{-n}(x_n | y_n)]
                      + lambda sum_{n in U} w_n log sum_k pi_k p(x_n | y=k)
                      [+ log p(h) + log p(theta) + sum_k (a_k - 1) log pi_k  for "map"]

p_{-n} the labeled row's leave-one-out KDE term (``train_log_lik``). This is the
log-density ``method="mcmc"`` samples, so EM finds its mode. Unlabeled rows are not made
kernel centres: with their own kernel every row would reinforce its starting class (the
likelihood is unbounded as h -> 0) and the iteration would ascend no objective.

EM: E-step r_nk = p(y=k | x_n) from ``log_lik``; M-step (the family's ``em_m_step``) pi
from N_k + lambda sum_n w_n r_nk, MixedNB's parametric parts from statistics weighted
lambda w_n r_nk, and each h_kj re-chosen by the labeled fit's search
(:func:`bayesgen.families.kernel.bandwidth._maximise`) on

    Q_kj(t) = LOO_kj(t) + lambda sum_n w_n r_nk log p(x_nj | y=k, h = e^t)
              [- (t - log c_kj)^2 / (2 sd^2)  for "map"],

keeping the previous h_kj where no higher Q_kj is found, so l never decreases (a
generalised EM; ``em_objective_``). ``"mle"`` divides the weights by the smallest labeled
weight, as KernelNB's MLE does. Stopping rule and warnings: :mod:`bayesgen.semi.em`.
"""

from __future__ import annotations

import numpy as np

from bayesgen.inference import scoring
from bayesgen.semi.em import (
    EMData,
    Result,
    em_start,
    final,
    iterate,
    prior_terms,
    unlabeled_term,
)

#: iterations after which EM stops with a ConvergenceWarning
MAX_ITER = 500


# ------------------------------------------------------------------ objective
class _Data(EMData):
    """Labeled rows, unlabeled rows, their (possibly rescaled) weights and the stacked
    rows of the M-step (labeled, then every unlabeled row once per class)."""

    def __init__(self, batch, method: str, lam: float) -> None:
        self.Z_l = scoring.to_internal(batch.frame, batch.X)
        self.Z_u = np.asarray(batch.unlabeled.Z, dtype=np.float64)
        self.y_l, self.lam = batch.y_index, lam
        w_l, w_u = batch.weights, batch.unlabeled.w
        positive = w_l[w_l > 0]
        self.unit = float(positive.min()) if method == "mle" and positive.size else 1.0
        self.w_l, self.w_u = w_l / self.unit, w_u / self.unit
        n_classes = batch.classes.size
        self.Z_all = np.concatenate([self.Z_l, *([self.Z_u] * n_classes)], axis=0)
        self.y_all = np.concatenate([self.y_l, np.repeat(np.arange(n_classes),
                                                         self.Z_u.shape[0])])


def objective(family, method: str, params: dict, log_pi: np.ndarray, prior, alpha,
              fixed, data: _Data) -> tuple[float, np.ndarray]:
    """The objective l (module docstring) and the unlabeled rows' log
    responsibilities (m, K)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        T = family.train_log_lik(data.Z_l, data.y_l, params)
        terms = log_pi[data.y_l] + T
        value = float(np.sum(np.where(data.w_l > 0, data.w_l * terms, 0.0)))
    mixture, log_r = unlabeled_term(family, params, log_pi, data)
    value += mixture + prior_terms(family, method, params, log_pi, prior, alpha, fixed)
    return value, log_r


def run(fit, method: str, family, batch, lam: float) -> Result:
    """EM for a kernel family (or a MixedNB with a kernel part) from the labeled-only
    fit ``fit`` (:class:`bayesgen.inference.fitted.Fit`, of the statistics
    :func:`bayesgen.semi.em.start_stats` gives, under the prior resolved from all rows)
    for a batch with unlabeled rows (module docstring); the objective ``l`` after every
    iteration, the first at the labeled-only fit. The estimator stores the result."""
    family = fit.family  # ``learned`` from the fit's statistics (a categorical part's)
    classes = batch.classes
    data = _Data(batch, method, lam)
    stats_l = family.stats(data.Z_l, data.y_l, data.w_l, classes.size)
    prior, alpha, fixed, params, log_pi = em_start(fit, method)
    value, log_r = objective(family, method, params, log_pi, prior, alpha, fixed, data)
    trace = [value]
    if lam == 0.0:  # the unlabeled rows carry no weight: the labeled-only fit
        return Result(None, None, None, None, 0, np.asarray(trace))
    labeled_counts = np.bincount(data.y_l, weights=data.w_l, minlength=classes.size)

    def update(R):  # the M-step (module docstring), from the current params
        nonlocal params  # each M-step starts its bandwidth search at the last h
        A = data.unlabeled_weights(R)
        completed = family.stats(data.Z_all, data.y_all, data.weights(A), classes.size)
        # used: a kernel part's labeled points, a parametric part's completed statistics
        params, used = family.em_m_step(stats_l, completed, data.Z_u, A, prior, params)
        return params, labeled_counts + lam * (data.w_u @ R), used

    n_iter, (params, counts, pi, used) = iterate(
        fit.who, method, log_r, trace, update,
        lambda params, log_pi: objective(family, method, params, log_pi, prior, alpha, fixed,
                                         data),
        alpha, fixed, max_iter=MAX_ITER, alternative="method='mcmc'")
    # the kernel parts' labeled points with their weights as given (as KernelNB's mle);
    # a parametric part's own estimate where EM's maximised the likelihood
    used, params = final(family, batch.stats, used, prior, params)
    return Result(used, counts * data.unit, params, pi, n_iter, np.asarray(trace))
