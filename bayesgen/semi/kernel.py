"""Unlabeled rows in KernelNB and in MixedNB's kernel parts (``"mle"``, ``"map"``).

The model
---------
A kernel part's class densities are the KDEs of the *labeled* points,
p(x_j | y=k, h) = sum_{i in L_k} w_i N(x_j; x_ij, h_kj^2) / W_k, and its bandwidths are
chosen, as in a labeled fit, by the weighted leave-one-out (LOO) likelihood of those
points. Unlabeled rows enter through their mixture likelihood, exactly as for the
parametric families. With lambda = ``unlabeled_weight`` the objective is

    l(h, theta, pi) = sum_{n in L} w_n [log pi_{y_n} + log p_{-n}(x_n | y_n)]
                      + lambda sum_{n in U} w_n log sum_k pi_k p(x_n | y=k)
                      [+ log p(h) + log p(theta) + sum_k (a_k - 1) log pi_k  for "map"]

with p_{-n} the labeled row's LOO term (``train_log_lik``: one unit of its own weight
left out of its class's KDE; for a MixedNB the parametric parts' ordinary log-density is
added) and p(x_n | k) the full KDE at an unlabeled row (the product over the parts).
It is the log-density that ``method="mcmc"`` samples (:mod:`bayesgen.semi.nuts` adds the
unlabeled rows' term to KernelNB's LOO potential, with the KDE of the labeled points
at each row: the family's ``pymc_rows_loglik``), so the EM estimate is that
posterior's mode, as for every other family.

Why the unlabeled rows are not kernel centres. Making row n a point of every class's
KDE with weight lambda w_n r_nk (its responsibility) would let the densities learn their
shape from the unlabeled rows, but then (a) the E-step must use leave-one-out class
densities: with its own kernel in class k, p(x_n | k) carries a term
lambda w_n r_nk N(0; 0, h^2) that grows as h -> 0 and as r_nk grows, so every row
reinforces whatever class it started in (and the likelihood is unbounded in h); and
(b) even with LOO, the class densities depend on the responsibilities themselves, so
the iteration is a fixed point, not the ascent of any objective, and no likelihood
exists for NUTS to sample. Keeping the centres labeled gives a real likelihood whose
EM is monotone and whose posterior NUTS samples; the unlabeled rows then inform the
bandwidths and the class prior (and, in a MixedNB, the parametric parts), not the
location of the kernels.

EM
--
* E-step: r_nk = p(y=k | x_n) from the family's ``log_lik`` at the unlabeled rows
  (they are no training points, so no LOO is needed there).
* M-step (the family's ``em_m_step``; a MixedNB's parts each their own): pi from
  N_k + lambda sum_n w_n r_nk; a MixedNB's parametric parts from their statistics with
  the unlabeled rows weighted lambda w_n r_nk (as :mod:`bayesgen.semi.em`); each
  kernel bandwidth h_kj re-chosen by the weighted criterion (one-dimensional and
  separate per class and feature; ``KernelFamily.em_m_step``)

      Q_kj(t) = LOO_kj(t) + lambda sum_n w_n r_nk log p(x_nj | y=k, h = e^t)
                [- (t - log c_kj)^2 / (2 sd^2)  for "map"],

  by the labeled fit's search (grid, golden section, Newton steps on the analytic
  derivatives; :func:`bayesgen.families.kernel.bandwidth._maximise`), keeping the previous
  h_kj where the search found no higher Q_kj. Every M-step therefore raises the
  expected complete-data objective, and l never decreases (a generalised EM; tested,
  ``em_objective_``). Missing entries: per feature on the observed points and rows
  (:mod:`bayesgen.families.kernel.missing`).

The bandwidths are re-chosen rather than kept at the labeled-only fit because the
labeled rows are few in a semi-supervised fit: their LOO criterion alone determines
h poorly, and the unlabeled rows' likelihood is information about it. ``"mle"`` works
with the weights divided by the smallest labeled weight, as KernelNB's MLE does (only
relative weights matter); ``"map"`` keeps them (replication counts). lambda = 0 is the
labeled-only fit. Stopping rule and ``ConvergenceWarning`` as :mod:`bayesgen.semi.em`.
"""

from __future__ import annotations

import numpy as np

from bayesgen.inference import scoring
from bayesgen.semi.em import (
    EMData,
    Result,
    em_start,
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


# ------------------------------------------------------------------ M-step
def m_step(family, stats_l: dict, data: _Data, R: np.ndarray, prior,
           params: dict) -> tuple[dict, dict]:
    """The parameters maximising the expected complete-data objective given the
    responsibilities ``R`` (m, K) (module docstring), from the current ``params``
    (the family's ``em_m_step``); and the statistics they were estimated from (a kernel
    part's labeled points ``stats_l``, a parametric part's rows with the unlabeled
    ones weighted lambda w_n r_nk)."""
    A = data.unlabeled_weights(R)
    completed = family.stats(data.Z_all, data.y_all, data.weights(A), R.shape[1])
    return family.em_m_step(stats_l, completed, data.Z_u, A, prior, params)


def run(fit, method: str, family, batch, lam: float) -> Result:
    """EM for a kernel family (or a MixedNB with a kernel part) from the labeled-only
    fit ``fit`` (:class:`bayesgen.inference.fitted.Fit`, of the statistics
    :func:`bayesgen.semi.em.start_stats` gives, under the prior resolved from all rows)
    for a batch with unlabeled rows (module docstring); the objective ``l`` after every
    iteration, the first at the labeled-only fit. The estimator stores the result."""
    classes = batch.classes
    data = _Data(batch, method, lam)
    stats_l = family.stats(data.Z_l, data.y_l, data.w_l, classes.size)
    prior, alpha, fixed, params, log_pi = em_start(fit, method)
    value, log_r = objective(family, method, params, log_pi, prior, alpha, fixed, data)
    trace = [value]
    if lam == 0.0:  # the unlabeled rows carry no weight: the labeled-only fit
        return Result(None, None, None, None, 0, np.asarray(trace))
    labeled_counts = np.bincount(data.y_l, weights=data.w_l, minlength=classes.size)

    def update(R):
        nonlocal params  # each M-step starts its bandwidth search at the last h
        params, used = m_step(family, stats_l, data, R, prior, params)
        return params, labeled_counts + lam * (data.w_u @ R), used

    n_iter, (params, counts, pi, used) = iterate(
        fit.who, method, log_r, trace, update,
        lambda params, log_pi: objective(family, method, params, log_pi, prior, alpha, fixed,
                                         data),
        alpha, fixed, max_iter=MAX_ITER, alternative="method='mcmc'")
    # the kernel parts' labeled points with their weights as given (as KernelNB's mle);
    # a parametric part's own estimate where EM's maximised the likelihood
    used, params = family.em_final(batch.stats, used, prior, params)
    return Result(used, counts * data.unit, params, pi, n_iter, np.asarray(trace))
