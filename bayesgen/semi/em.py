"""EM with unlabeled rows for ``method="mle"`` and ``"map"`` (every parametric family).

Nigam, McCallum, Thrun & Mitchell (2000). With lambda = ``unlabeled_weight``::

    l(theta, pi) = sum_{n in L} w_n [log pi_{y_n} + log p(x_n | y_n, theta)]
                   + lambda sum_{n in U} w_n log sum_k pi_k p(x_n | y=k, theta)
                   [+ log p(theta) + sum_k (a_k - 1) log pi_k   for "map"]

E-step: r_nk = p(y=k | x_n, theta, pi) of the unlabeled rows (a row impossible under
every class gets r = pi). M-step: the family's ``em_m_step``, its closed-form estimate
on the labeled statistics plus every unlabeled row in class k with weight
``lambda w_n r_nk``, and pi from ``N_k + lambda sum_n w_n r_nk``. Both maximise the
expected complete-data objective, so l never decreases (``em_objective_``, starting at
the labeled-only fit; LDA/QDA with missing entries: a generalised EM,
:mod:`bayesgen.families.mvn.em`). ``divisor="unbiased"``: EM runs with divisor N_k and
the family's estimate is taken once at the end (:func:`final`). EM stops when an
iteration raises l by at most ``TOL * max(1, |l|)``, or after ``MAX_ITER`` iterations
with a :class:`bayesgen.ConvergenceWarning`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import logsumexp

from bayesgen.data import sparse as _sparse
from bayesgen.inference import classprior, scoring

#: relative tolerance on the increase of the objective per iteration
TOL = 1e-9
#: iterations after which EM stops with a ConvergenceWarning
MAX_ITER = 1000


def stack_rows(*blocks):
    """The row blocks stacked: CSR when any is sparse, else a dense array."""
    if any(_sparse.is_sparse(A) for A in blocks):
        return sparse.vstack([sparse.csr_matrix(A) for A in blocks], format="csr")
    return np.concatenate(blocks, axis=0)


class EMData:
    """Labeled rows, unlabeled rows and the stacked rows of the M-step."""

    def __init__(self, batch, n_classes: int, lam: float) -> None:
        unl = batch.unlabeled
        self.Z_l = scoring.to_internal(batch.frame, batch.X)
        self.y_l, self.w_l = batch.y_index, batch.weights
        self.Z_u, self.w_u, self.lam = unl.Z, unl.w, lam
        m = unl.w.shape[0]
        self.Z_all = stack_rows(self.Z_l, *([self.Z_u] * n_classes))
        self.y_all = np.concatenate([self.y_l, np.repeat(np.arange(n_classes), m)])

    def unlabeled_weights(self, R: np.ndarray) -> np.ndarray:
        """A (m, K): the unlabeled rows' weights lambda w_n r_nk in every class."""
        return self.lam * self.w_u[:, None] * R

    def weights(self, A: np.ndarray) -> np.ndarray:
        """Row weights of the stacked rows: labeled w_n, then ``A`` (m, K) class by
        class."""
        return np.concatenate([self.w_l, A.T.reshape(-1)])


def objective(family, method: str, params: dict, log_pi: np.ndarray, prior: dict | None,
              alpha: np.ndarray, fixed, data: EMData) -> tuple[float, np.ndarray]:
    """The objective l (module docstring) and the unlabeled rows' log responsibilities
    (m, K) at (params, pi)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        J_l = family.log_lik(data.Z_l, params, full=True)
        rows = np.arange(data.y_l.shape[0])
        terms = log_pi[data.y_l] + J_l[rows, data.y_l]
        value = float(np.sum(np.where(data.w_l > 0, data.w_l * terms, 0.0)))
    if data.lam == 0.0:  # the unlabeled rows do not enter
        log_r = np.broadcast_to(log_pi, (data.w_u.shape[0], log_pi.size))
    else:
        mixture, log_r = unlabeled_term(family, params, log_pi, data)
        value += mixture
    return value + prior_terms(family, method, params, log_pi, prior, alpha, fixed), log_r


def em_start(fit, method: str) -> tuple:
    """(prior, class_alpha, fixed pi, params, log pi) of the fitted labeled-only start
    ``fit`` (:class:`bayesgen.inference.fitted.Fit`); prior None for ``"mle"``."""
    prior = fit.prior if method == "map" else None
    with np.errstate(divide="ignore"):
        log_pi = np.log(fit.class_prior)
    return prior, fit.class_alpha, fit.fixed_pi, fit.params, log_pi


def iterate(who: str, method: str, log_r: np.ndarray, trace: list, update, evaluate,
            alpha, fixed, *, max_iter: int, alternative: str) -> tuple[int, tuple]:
    """The EM iterations shared by every family, from the start's log responsibilities.

    Each iteration: R = exp(log_r); ``update(R)`` -> (params, class counts, extra) (the
    M-step); pi from the counts (:func:`bayesgen.inference.classprior.point`); ``evaluate(params,
    log pi)`` -> (objective, new log_r) (the E-step). Stops when the objective rises by
    at most ``TOL * max(1, |l|)``, or after ``max_iter`` iterations with a
    ``bg.ConvergenceWarning`` naming ``alternative``; appends every objective to ``trace``.

    Returns
    -------
    (n_iter, (params, counts, pi, extra)) of the last iteration.

    Raises
    ------
    ValueError
        When an unlabeled row has zero likelihood under every class (objective -inf).
    """
    n_iter, last = 0, None
    while n_iter < max_iter:
        params, counts, extra = update(np.exp(log_r))
        pi = classprior.point(method, counts, alpha, fixed)
        with np.errstate(divide="ignore"):
            log_pi = np.log(pi)
        value, log_r = evaluate(params, log_pi)
        trace.append(value)
        n_iter += 1
        last = (params, counts, pi, extra)
        if not np.isfinite(value):
            raise ValueError(
                f"{who} method={method!r}: an unlabeled row has zero "
                "likelihood under every class at the EM estimate (a probability estimated "
                "as exactly 0); use method='map', whose prior keeps probabilities positive."
            )
        if np.isfinite(trace[-2]) and value - trace[-2] <= TOL * max(1.0, abs(value)):
            return n_iter, last
    from bayesgen.exceptions import ConvergenceWarning, warn

    warn(f"{who} semi-supervised EM did not converge in {max_iter} "
         f"iterations (last change of the objective {trace[-1] - trace[-2]:.3g}); the "
         f"estimate may be inaccurate. A smaller unlabeled_weight, or {alternative}, "
         "avoids it.", ConvergenceWarning)
    return n_iter, last


def unlabeled_term(family, params: dict, log_pi: np.ndarray, data) -> tuple[float, np.ndarray]:
    """lambda sum_n w_n log sum_k pi_k p(u_n | k) over the unlabeled rows, and their log
    responsibilities log r_nk (m, K); a row impossible under every class gets the
    class prior as responsibilities (and adds -inf only if its weight is positive)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        J_u = family.log_lik(data.Z_u, params, full=True) + log_pi
        norm = logsumexp(J_u, axis=1)
        value = data.lam * float(np.sum(np.where(data.w_u > 0, data.w_u * norm, 0.0)))
        log_r = J_u - norm[:, None]
    bad = ~np.isfinite(norm)
    if bad.any():
        log_r[bad] = np.broadcast_to(log_pi, log_r[bad].shape)
    return value, log_r


def prior_terms(family, method: str, params: dict, log_pi: np.ndarray, prior, alpha,
                fixed) -> float:
    """The log prior of the objective: 0 for ``"mle"``; for ``"map"`` the family's log
    prior plus the Dirichlet log prior of pi (unless pi is fixed)."""
    if method != "map":
        return 0.0
    value = family.log_prior(params, prior)
    return value + (classprior.log_density(log_pi, alpha) if fixed is None else 0.0)


def start_stats(family, batch, lam: float) -> dict:
    """The labeled rows' statistics; for categorical families with lambda > 0 they
    also hold, at zero weight, the categories seen only in unlabeled rows (so that
    ``categories_`` has them)."""
    if lam == 0.0 or not family.capabilities.learns_categories:
        return batch.stats
    unl = batch.unlabeled
    Z = stack_rows(scoring.to_internal(batch.frame, batch.X), unl.Z)
    y = np.concatenate([batch.y_index, np.zeros(unl.w.size, dtype=np.intp)])
    w = np.concatenate([batch.weights, np.zeros(unl.w.size)])
    return family.stats(Z, y, w, batch.classes.size)


def resolve_prior(estimator, family, batch, start: dict, lam: float) -> dict | None:
    """The prior of a semi-supervised fit, resolved once from *all* rows.

    The data-aware defaults (prior means and scales, LDA/QDA's empirical-Bayes
    ``cov_dof="auto"``) would otherwise come from the few labeled rows alone. They are
    resolved from the statistics of the labeled rows plus the unlabeled rows weighted
    by lambda times their responsibilities under the labeled-only MAP fit, and then
    held fixed (EM's objective, the augmentation and NUTS target one posterior).
    None when lambda = 0 (the labeled-only fit, prior included).
    """
    if lam == 0.0:
        return None
    from bayesgen.data.validation import check_concentration

    classes = batch.classes
    alpha = check_concentration(estimator.class_alpha, classes.size, "class_alpha", "class")
    fixed = classprior.check_fixed(getattr(estimator, "class_prior", None), classes.size)
    family = family.learned(start)
    params = family.map(start, family.prior(start))  # the labeled-only MAP
    with np.errstate(divide="ignore"):
        log_pi = np.log(classprior.point("map", batch.counts, alpha, fixed))
    data = EMData(batch, classes.size, lam)
    _, log_r = objective(family, "mle", params, log_pi, None, alpha, fixed, data)
    A = data.unlabeled_weights(np.exp(log_r))
    stats = family.stats(data.Z_all, data.y_all, data.weights(A), classes.size)
    return family.prior(stats)


@dataclass(frozen=True)
class Result:
    """What semi-supervised EM computed from a labeled-only start.

    Attributes
    ----------
    stats, counts, params, pi : dict, ndarray (K,), dict, ndarray (K,) or None
        The fitted statistics, weighted class counts, estimate and class
        probabilities; None when EM did not run (lambda = 0: the labeled-only fit
        stands).
    n_iter : int
        EM iterations (``n_iter_``).
    objective : ndarray
        The objective at the start and after every iteration (``em_objective_``).
    """

    stats: dict | None
    counts: np.ndarray | None
    params: dict | None
    pi: np.ndarray | None
    n_iter: int
    objective: np.ndarray


def run(fit, method: str, family, batch, lam: float) -> Result:
    """EM from the labeled-only fit ``fit`` (:class:`bayesgen.inference.fitted.Fit` of
    the labeled rows' statistics, under the prior resolved from all rows) for a batch
    with unlabeled rows (module docstring); the estimator stores the result."""
    classes = batch.classes
    n_classes = classes.size
    data = EMData(batch, n_classes, lam)
    start = start_stats(family, batch, lam)
    family = fit.family  # ``learned`` from ``start`` (a categorical family's categories)
    prior, alpha, fixed, params, log_pi = em_start(fit, method)
    value, log_r = objective(family, method, params, log_pi, prior, alpha, fixed, data)
    trace = [value]
    if lam == 0.0:  # the unlabeled rows carry no weight: the labeled-only fit
        return Result(None, None, None, None, 0, np.asarray(trace))

    def update(R):
        nonlocal params
        A = data.unlabeled_weights(R)
        completed = family.stats(data.Z_all, data.y_all, data.weights(A), n_classes)
        params, used = family.em_m_step(start, completed, data.Z_u, A, prior, params)
        return params, batch.counts + lam * (data.w_u @ R), used

    n_iter, (params, counts, pi, stats) = iterate(
        fit.who, method, log_r, trace, update,
        lambda params, log_pi: objective(family, method, params, log_pi, prior, alpha, fixed,
                                         data),
        alpha, fixed, max_iter=MAX_ITER, alternative="method='conjugate'/'mcmc'")
    # the family's own estimate (divisor N_k - 1) where EM's maximised the likelihood
    stats, params = final(family, start, stats, prior, params)
    return Result(stats, counts, params, pi, n_iter, np.asarray(trace))


def final(family, labeled: dict, used: dict, prior: dict | None,
          params: dict) -> tuple[dict, dict]:
    """``(stats, params)`` once EM has converged at the family's ``em_m_step`` result
    ``(params, used)``: a kernel density's ``labeled`` points with their weights as given
    (as KernelNB's ``mle``), the family's own ``mle``/``map`` of ``used`` where its
    estimator is not the likelihood's maximiser (``divisor="unbiased"``), else ``used``
    and ``params``; a composite family's parts each so. ``prior`` None for the MLE."""
    caps = family.capabilities
    if caps.composite:
        parts = family.parts_
        priors = [None] * len(parts) if prior is None else prior["parts"]
        stats, out = zip(*[final(q["family"], s_l, s_u, pr, sub) for q, s_l, s_u, pr, sub in zip(
            parts, labeled["parts"], used["parts"], priors, family.split(params), strict=True)],
            strict=True)
        return dict(used, parts=list(stats)), family.namespaced(out)
    if caps.kernel_density:
        return labeled, params
    if family.likelihood_maximiser() is family:
        return used, params
    return used, (family.mle(used) if prior is None else family.map(used, prior))
