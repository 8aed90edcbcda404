"""Unlabelled rows in KernelNB and in MixedNB's kernel parts (``"mle"``, ``"map"``).

The model
---------
A kernel part's class densities are the KDEs of the *labelled* points,
p(x_j | y=k, h) = sum_{i in L_k} w_i N(x_j; x_ij, h_kj^2) / W_k, and its bandwidths are
chosen, as in a labelled fit, by the weighted leave-one-out (LOO) likelihood of those
points. Unlabelled rows enter through their mixture likelihood, exactly as for the
parametric families. With lambda = ``unlabeled_weight`` the objective is

    l(h, theta, pi) = sum_{n in L} w_n [log pi_{y_n} + log p_{-n}(x_n | y_n)]
                      + lambda sum_{n in U} w_n log sum_k pi_k p(x_n | y=k)
                      [+ log p(h) + log p(theta) + sum_k (a_k - 1) log pi_k  for "map"]

with p_{-n} the labelled row's LOO term (``train_log_lik``: one unit of its own weight
left out of its class's KDE; for a MixedNB the parametric parts' ordinary log-density is
added) and p(x_n | k) the full KDE at an unlabelled row (the product over the parts).
It is the log-density that ``method="mcmc"`` samples (:func:`kernel_columns` adds the
unlabelled rows' term to KernelNB's LOO potential), so the EM estimate is that
posterior's mode, as for every other family.

Why the unlabelled rows are not kernel centres. Making row n a point of every class's
KDE with weight lambda w_n r_nk (its responsibility) would let the densities learn their
shape from the unlabelled rows, but then (a) the E-step must use leave-one-out class
densities: with its own kernel in class k, p(x_n | k) carries a term
lambda w_n r_nk N(0; 0, h^2) that grows as h -> 0 and as r_nk grows, so every row
reinforces whatever class it started in (and the likelihood is unbounded in h); and
(b) even with LOO, the class densities depend on the responsibilities themselves, so
the iteration is a fixed point, not the ascent of any objective, and no likelihood
exists for NUTS to sample. Keeping the centres labelled gives a real likelihood whose
EM is monotone and whose posterior NUTS samples; the unlabelled rows then inform the
bandwidths and the class prior (and, in a MixedNB, the parametric parts), not the
location of the kernels.

EM
--
* E-step: r_nk = p(y=k | x_n) from the family's ``log_lik`` at the unlabelled rows
  (they are no training points, so no LOO is needed there).
* M-step: pi from N_k + lambda sum_n w_n r_nk; a MixedNB's parametric parts from their
  statistics with the unlabelled rows weighted lambda w_n r_nk (as :mod:`._semi_em`);
  each kernel bandwidth h_kj re-chosen by the weighted criterion (one-dimensional and
  separate per class and feature)

      Q_kj(t) = LOO_kj(t) + lambda sum_n w_n r_nk log p(x_nj | y=k, h = e^t)
                [- (t - log c_kj)^2 / (2 sd^2)  for "map"],

  by the labelled fit's search (grid, golden section, Newton steps on the analytic
  derivatives; :func:`bayesgen.families.kernel.bandwidth._maximise`), keeping the previous
  h_kj where the search found no higher Q_kj. Every M-step therefore raises the
  expected complete-data objective, and l never decreases (a generalised EM; tested,
  ``em_objective_``). Missing entries: per feature on the observed points and rows
  (:mod:`bayesgen.families.kernel.missing`).

The bandwidths are re-chosen rather than kept at the labelled-only fit because the
labelled rows are few in a semi-supervised fit: their LOO criterion alone determines
h poorly, and the unlabelled rows' likelihood is information about it. ``"mle"`` works
with the weights divided by the smallest labelled weight, as KernelNB's MLE does (only
relative weights matter); ``"map"`` keeps them (replication counts). lambda = 0 is the
labelled-only fit. Stopping rule and ``ConvergenceWarning`` as :mod:`._semi_em`.
"""

from __future__ import annotations

import numpy as np

from bayesgen.families.kernel import missing as km
from bayesgen.families.kernel.bandwidth import LOG_2PI, _loo, _loo_slope, _maximise, silverman
from bayesgen.families.kernel.kde import _BUDGET, _kde_sums
from bayesgen.inference import scoring
from bayesgen.semi.em import prior_terms, unlabelled_term

#: iterations after which EM stops with a ConvergenceWarning
MAX_ITER = 500


def has_kernel(family) -> bool:
    """Whether the family is KernelNB's or a MixedNB with a kernel part."""
    if family.name == "mixed":
        return any(q["name"] == "kernel" for q in family._parts())
    return family.name == "kernel"


# ------------------------------------------------------------------ objective
class _Data:
    """Labelled rows, unlabelled rows and their (possibly rescaled) weights."""

    def __init__(self, estimator, batch, method: str, lam: float) -> None:
        self.Z_l = scoring.internal(estimator, batch.X)
        self.Z_u = np.asarray(batch.unlabeled.Z, dtype=np.float64)
        self.y_l, self.lam = batch.y_index, lam
        w_l, w_u = batch.weights, batch.unlabeled.w
        positive = w_l[w_l > 0]
        self.unit = float(positive.min()) if method == "mle" and positive.size else 1.0
        self.w_l, self.w_u = w_l / self.unit, w_u / self.unit


def objective(family, method: str, params: dict, log_pi: np.ndarray, prior, alpha,
              fixed, data: _Data) -> tuple[float, np.ndarray]:
    """The objective l (module docstring) and the unlabelled rows' log
    responsibilities (m, K)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        T = family.train_log_lik(data.Z_l, data.y_l, params)
        terms = log_pi[data.y_l] + T
        value = float(np.sum(np.where(data.w_l > 0, data.w_l * terms, 0.0)))
    mixture, log_r = unlabelled_term(family, params, log_pi, data)
    value += mixture + prior_terms(family, method, params, log_pi, prior, alpha, fixed)
    return value, log_r


# ------------------------------------------------------------------ M-step
def _unlabelled_term(U: np.ndarray, P: np.ndarray, w: np.ndarray, a: np.ndarray,
                     t: np.ndarray) -> np.ndarray:
    """sum_n a_n log p(u_nj | h_j = e^t_j) per feature, (d,): ``U`` (d, m) rows, ``P``
    (d, n) points of the class with weights ``w``, ``a`` (m,) row weights."""
    sums = _kde_sums(U, P, np.log(w), np.exp(t)[None], by_feature=True)[0]  # (d, m)
    return (sums @ a) - a.sum() * (np.log(w.sum()) + t + 0.5 * LOG_2PI)


def _unlabelled_slope(U: np.ndarray, P: np.ndarray, w: np.ndarray, a: np.ndarray,
                      t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and second derivatives in t of :func:`_unlabelled_term`, each (d,):
    sum_n a_n (E[q] - 1) and sum_n a_n (Var[q] - 2 E[q]), q_l = (u_n - p_l)^2 / h^2
    under the softmax weights of row n's kernels."""
    d, m = U.shape
    n = P.shape[1]
    log_w = np.log(w)
    inv_h2 = np.exp(-2.0 * t)[:, None, None]
    f1, f2 = np.zeros(d), np.zeros(d)
    step = max(1, min(m, _BUDGET // max(1, n * d)))
    for start in range(0, m, step):
        stop = min(m, start + step)
        q = U[:, start:stop, None] - P[:, None, :]
        q *= q
        q *= inv_h2  # (d, c, n)
        g = log_w - 0.5 * q
        g -= g.max(axis=-1, keepdims=True)
        r = np.exp(g)
        r /= r.sum(axis=-1, keepdims=True)
        mean = (r * q).sum(-1)
        var = (r * q * q).sum(-1) - mean**2
        f1 += (mean - 1.0) @ a[start:stop]
        f2 += (var - 2.0 * mean) @ a[start:stop]
    return f1, f2


def kernel_step(family, stats: dict, Z_u: np.ndarray, A: np.ndarray, centre: np.ndarray,
                sd: float | None, h_old: np.ndarray) -> dict:
    """The M-step of one kernel family: bandwidths (K, d) maximising Q_kj (module
    docstring), the previous ``h_old`` kept where the search found no higher Q_kj.

    ``stats``: the labelled rows' kernel statistics (weights as in the objective);
    ``Z_u`` (m, d) unlabelled rows; ``A`` (m, K) their weights lambda w_n r_nk;
    ``centre`` (K, d) the search centres (Silverman / the prior's); ``sd`` the prior
    sd of log h (None: MLE). Returns ``params`` with the labelled points.
    """
    if km.has_gaps(stats) or np.isnan(Z_u).any():  # feature by feature, observed only
        h = np.empty_like(h_old)
        for j in range(Z_u.shape[1]):
            sub = km.feature_stats(stats, j)
            rows = ~np.isnan(Z_u[:, j])
            h[:, j:j + 1] = kernel_step(family, sub, Z_u[rows, j:j + 1], A[rows],
                                        centre[:, j:j + 1], sd, h_old[:, j:j + 1])["bandwidth"]
        return {"bandwidth": h, **family.fixed_params(stats)}
    family._require_points(stats, "KernelNB")
    X, y, w = stats["X"], stats["y"], stats["w"]
    U = np.ascontiguousarray(Z_u.T)
    h = np.empty_like(h_old)
    for k in range(h_old.shape[0]):
        P, wk, a = np.ascontiguousarray(X[y == k].T), w[y == k], A[:, k]
        log_c = np.log(centre[k])

        def q(t, P=P, wk=wk, a=a, log_c=log_c):
            penalty = 0.0 if sd is None else 0.5 * ((t - log_c) / sd) ** 2
            return _loo(P, wk, t) + _unlabelled_term(U, P, wk, a, t) - penalty

        def slope(t, P=P, wk=wk, a=a, log_c=log_c):
            f1, f2 = _loo_slope(P, wk, t)
            g1, g2 = _unlabelled_slope(U, P, wk, a, t)
            if sd is None:
                return f1 + g1, f2 + g2
            return f1 + g1 - (t - log_c) / sd**2, f2 + g2 - 1.0 / sd**2

        t_new, t_old = _maximise(q, centre[k], slope), np.log(h_old[k])
        h[k] = np.exp(np.where(q(t_new) >= q(t_old), t_new, t_old))
    return {"bandwidth": h, **family.fixed_params(stats)}


def _centre(family, stats: dict, prior, method: str) -> tuple[np.ndarray, float | None]:
    """The search centre (K, d) and prior sd of one kernel family."""
    if method == "map":
        return prior["centre"], prior["sd"]
    return (km.per_feature(silverman, stats) if km.has_gaps(stats) else silverman(stats)), None


def m_step(family, method: str, stats_l: dict, data: _Data, R: np.ndarray, prior,
           params: dict) -> tuple[dict, dict]:
    """The parameters maximising the expected complete-data objective given the
    responsibilities ``R`` (m, K) (module docstring), from the current ``params``;
    and the statistics they were estimated from (a kernel part's labelled points,
    a parametric part's rows with the unlabelled ones weighted lambda w_n r_nk).
    A parametric part with ``divisor="unbiased"`` is estimated with N_k inside EM (the
    likelihood's maximiser, as :mod:`._semi_em`)."""
    from bayesgen.semi.em import _m_family

    A = data.lam * data.w_u[:, None] * R
    if family.name == "kernel":
        centre, sd = _centre(family, stats_l, prior, method)
        return (kernel_step(family, stats_l, data.Z_u, A, centre, sd, params["bandwidth"]),
                stats_l)
    n_classes = R.shape[1]
    Z_all = np.concatenate([data.Z_l, *([data.Z_u] * n_classes)], axis=0)
    y_all = np.concatenate([data.y_l, np.repeat(np.arange(n_classes), R.shape[0])])
    stacked = family.stats(Z_all, y_all, np.concatenate([data.w_l, A.T.reshape(-1)]),
                           n_classes)
    priors = prior["parts"] if prior is not None else [None] * len(family._parts())
    out, used = [], []
    for q, s_l, s_all, pr, cur in zip(family._parts(), stats_l["parts"], stacked["parts"],
                                      priors, family._split(params), strict=True):
        fam = q["family"]
        if q["name"] == "kernel":
            centre, sd = _centre(fam, s_l, pr, method)
            out.append(kernel_step(fam, s_l, data.Z_u[:, q["columns"]], A, centre, sd,
                                   cur["bandwidth"]))
            used.append(s_l)
        else:
            own = _m_family(fam)
            out.append(own.mle(s_all) if method == "mle" else own.map(s_all, pr))
            used.append(s_all)
    return family._namespaced(out), {"count": stacked["count"], "parts": used}


def fit(estimator, method: str, family, batch, lam: float) -> None:
    """Fit ``estimator`` (a kernel family, or a MixedNB with a kernel part) by EM from
    a batch with unlabelled rows (module docstring); sets the usual fitted attributes
    plus ``n_iter_`` and ``em_objective_`` (l after every iteration, the first at the
    labelled-only fit)."""
    from bayesgen.semi.em import _set_fitted, em_start, iterate, start_stats

    classes = batch.classes
    start = start_stats(estimator, family, batch, lam)  # + unlabelled-only categories
    estimator._fit_statistics(method, family, classes, start, batch.counts,
                              train=(batch.X, batch.y_index))  # the start: labelled only
    data = _Data(estimator, batch, method, lam)
    stats_l = family.stats(data.Z_l, data.y_l, data.w_l, classes.size)
    prior, alpha, fixed, params, log_pi = em_start(estimator, method)
    value, log_r = objective(family, method, params, log_pi, prior, alpha, fixed, data)
    trace = [value]
    if lam == 0.0:  # the unlabelled rows carry no weight: the labelled-only fit
        estimator.n_iter_, estimator.em_objective_ = 0, np.asarray(trace)
        return
    labelled_counts = np.bincount(data.y_l, weights=data.w_l, minlength=classes.size)

    def update(R):
        nonlocal params  # each M-step starts its bandwidth search at the last h
        params, used = m_step(family, method, stats_l, data, R, prior, params)
        return params, labelled_counts + lam * (data.w_u @ R), used

    n_iter, (params, counts, pi, used) = iterate(
        estimator, method, log_r, trace, update,
        lambda params, log_pi: objective(family, method, params, log_pi, prior, alpha, fixed,
                                         data),
        alpha, fixed, max_iter=MAX_ITER, alternative="method='mcmc'")
    if family.name == "kernel":
        used = batch.stats  # the labelled points, weights as given (as KernelNB's mle)
    else:
        parts, own = _own_estimates(family, method, used, batch.stats, prior)
        used, params = dict(used, parts=parts), dict(params, **own)
    _set_fitted(estimator, family, used, counts * data.unit, params, pi)
    estimator.n_iter_, estimator.em_objective_ = n_iter, np.asarray(trace)


def _own_estimates(family, method: str, used: dict, labelled: dict,
                   prior) -> tuple[list, dict]:
    """MixedNB at the end of EM: the parts' statistics, the kernel parts' labelled points
    with their weights as given; and the parametric parts' own estimates where they
    differ from EM's (divisor N_k - 1; EM maximised the likelihood with N_k), namespaced."""
    from bayesgen.semi.em import _m_family

    priors = prior["parts"] if prior is not None else [None] * len(family._parts())
    new, parts = {}, []
    for q, s, s_lab, pr in zip(family._parts(), used["parts"], labelled["parts"], priors,
                               strict=True):
        fam = q["family"]
        if q["name"] == "kernel":
            parts.append(s_lab)
            continue
        parts.append(s)
        if _m_family(fam) is not fam:
            est = fam.mle(s) if method == "mle" else fam.map(s, pr)
            new.update({f"{q['prefix']}_{k}": v for k, v in est.items()})
    return parts, new
