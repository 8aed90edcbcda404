"""EM for LDA/QDA with missing entries (``method="mle"`` and ``"map"``).

Little & Rubin (2002, ch. 11): the objective is the sum over (pattern, class) groups of
the Gaussian marginal of the observed coordinates (:func:`.patterns.loglik`), plus the
NIW log density for MAP. E-step: the expected complete-data statistics given the
observed coordinates (:func:`.patterns.expected`); M-step: the family's closed-form
MLE or joint NIW mode of them. The objective never decreases (tested); it starts from
the available-case moments (:func:`.patterns.available_case`) and stops at
``TOL * max(1, |l|)``, or after ``MAX_ITER`` with a ConvergenceWarning.
``divisor="unbiased"``: the likelihood maximiser's covariance times N_k / (N_k - 1)
(QDA) or N / (N - K) (LDA)."""

from __future__ import annotations

import numpy as np
from scipy.special import multigammaln

from bayesgen.data.missing import require_observed
from bayesgen.exceptions import ConvergenceWarning, warn
from bayesgen.families.mvn import patterns as pat
from bayesgen.families.mvn.niw_evidence import evidence_search, evidence_search_kappa

#: relative tolerance on the increase of the objective per iteration
TOL = 1e-10
#: iterations after which EM stops with a ConvergenceWarning
MAX_ITER = 1000
#: relative change of nu0 that ends the fixed point of cov_dof='auto' with gaps
DOF_TOL = 1e-6
#: rounds after which that fixed point stops
DOF_ROUNDS = 50
#: the fixed mean strength of the candidate priors when ``mean_strength="auto"``
DEFAULT_KAPPA0 = 0.01


def log_niw(mu: np.ndarray, cov: np.ndarray, prior: dict, tied: bool) -> float:
    """log NIW density of (mu (K, d), Sigma): log IW(Sigma; Psi0, nu0) +
    sum_k log N(mu_k; m0, Sigma / kappa0) (one Sigma for LDA, Sigma_k for QDA).

    log IW(S; Psi, nu) = nu/2 log|Psi| - nu d/2 log 2 - log Gamma_d(nu/2)
    - (nu + d + 1)/2 log|S| - tr(Psi S^-1)/2.
    """
    K, d = mu.shape
    m0 = np.broadcast_to(prior["m0"], (K, d))
    kappa0 = np.broadcast_to(np.asarray(prior["kappa0"], dtype=np.float64), (K,))
    covs = np.broadcast_to(cov, (K, d, d)) if tied else cov
    L = np.linalg.cholesky(covs)
    logdet = 2.0 * np.log(np.diagonal(L, axis1=-2, axis2=-1)).sum(-1)  # (K,)
    z = np.linalg.solve(L, (mu - m0)[..., None])[..., 0]
    normal = 0.5 * d * (np.log(kappa0) - pat.LOG_2PI) - 0.5 * logdet - 0.5 * kappa0 * (z**2).sum(-1)
    Psi0 = np.asarray(prior["Psi0"], dtype=np.float64)
    nu0 = np.asarray(prior["nu0"], dtype=np.float64)
    Lp = np.linalg.cholesky(Psi0)
    logdet0 = 2.0 * np.log(np.diagonal(Lp, axis1=-2, axis2=-1)).sum(-1)
    Linv = np.linalg.inv(L if not tied else L[0])
    trace = np.einsum("...ij,...ji->...", Psi0, np.swapaxes(Linv, -1, -2) @ Linv)
    ld = logdet if not tied else logdet[0]
    iw = (0.5 * nu0 * logdet0 - 0.5 * nu0 * d * np.log(2.0) - multigammaln(nu0 / 2.0, d)
          - 0.5 * (nu0 + d + 1.0) * ld - 0.5 * trace)
    return float(np.sum(normal) + np.sum(iw))


def objective(family, groups: dict, params: dict, prior: dict | None):
    """The observed-data log-likelihood (plus log prior when ``prior`` is given) and the
    conditional algebra of every group at ``params`` (reused by the next E-step)."""
    cond = pat.condition(groups, params, family.tied)
    value = float(pat.loglik(groups, cond).sum())
    if prior is not None:
        value += log_niw(params["mu"], params["cov"], prior, family.tied)
    return value, cond


def start(stats: dict, tied: bool) -> dict:
    """EM's starting point: the observed entries' class means and diagonal variances
    (pooled within classes for LDA; the pooled variance for a class without data)."""
    count = stats["count"]
    d = stats["mean"].shape[1]
    if tied:
        return {"mu": stats["mean"].copy(), "cov": stats["scatter"] / count.sum()}
    pooled = stats["scatter"].sum(0) / count.sum()
    safe = np.where(count > 0, count, 1.0)[:, None, None]
    cov = np.where(count[:, None, None] > 0, stats["scatter"] / safe, pooled)
    floor = np.eye(d) * np.maximum(np.diagonal(pooled), 1e-300)
    bad = ~(np.diagonal(cov, axis1=1, axis2=2) > 0).all(axis=1)
    cov[bad] = floor
    return {"mu": stats["mean"].copy(), "cov": cov}


def fit(family, stats: dict, prior: dict | None, *, record: bool = True,
        for_auto_dof: bool = False) -> dict:
    """Run EM; ``prior`` None: MLE (``ValueError`` naming a class and feature never
    observed there), else MAP. Returns ``mu`` (K, d), ``cov`` and, when ``record``,
    ``em_n_iter`` and ``em_objective``. ``for_auto_dof``: the EM serves
    ``cov_dof="auto"`` (:func:`evidence_stats`), which its ConvergenceWarning says."""
    groups = stats["groups"]
    n_classes = stats["count"].size
    mle = prior is None
    if mle:
        require_observed(stats["observed"], family.labels, family.who)
    m_step = family.configured(divisor="n")  # the likelihood's divisor N_k / N inside EM
    params = start(stats, family.tied)
    value, cond = objective(family, groups, params, prior)
    trace = [value]
    n_iter = 0
    while True:
        if n_iter >= MAX_ITER:
            warn(_max_iter_message(family.who, trace[-1] - trace[-2], for_auto_dof),
                 ConvergenceWarning)
            break
        complete = completed_stats(family, stats, params, cond)
        complete.update({k: stats[k] for k in ("loc", "scale") if k in stats})
        params = m_step.mle(complete) if mle else family.map(complete, prior)
        value, cond = objective(family, groups, params, prior)
        trace.append(value)
        n_iter += 1
        if value - trace[-2] <= TOL * max(1.0, abs(value)):
            break
    if mle and family.divisor == "unbiased":
        n = complete["count"]
        factor = n.sum() / (n.sum() - n_classes) if family.tied else (n / (n - 1.0))[:, None, None]
        params = dict(params, cov=params["cov"] * factor)
    if record:
        params = dict(params, em_n_iter=n_iter, em_objective=np.asarray(trace))
    return params


def _max_iter_message(who: str, change: float, for_auto_dof: bool) -> str:
    if for_auto_dof:
        return (f"{who} cov_dof='auto': the EM that completes the statistics for the "
                f"empirical-Bayes choice of cov_dof did not converge in {MAX_ITER} "
                f"iterations (last change of its objective {change:.3g}); the chosen "
                "cov_dof may be inaccurate. Much missing data slows EM; pass a number as "
                "cov_dof to skip this step.")
    return (f"{who} EM did not converge in {MAX_ITER} iterations (last change of the "
            f"objective {change:.3g}); the estimate may be inaccurate. Much missing data "
            "slows EM; method='mcmc' or 'conjugate' do not depend on it (with a numeric "
            "cov_dof).")


def evidence_stats(family, stats: dict, m0: np.ndarray, kappa0: float, S0: np.ndarray,
                   nu0: float | None = None) -> dict:
    """Expected complete-data statistics at the EM MAP under NIW(m0, kappa0, nu0,
    (nu0 - d - 1) S0) (nu0 = d + 2 by default); statistics without missing entries are
    returned unchanged. EM's E-step fills each missing coordinate with its conditional
    mean and adds its conditional covariance to the scatter."""
    if "groups" not in stats:
        return stats
    d = S0.shape[0]
    nu0 = d + 2.0 if nu0 is None else nu0
    prior = {"m0": m0, "kappa0": kappa0, "nu0": nu0, "Psi0": (nu0 - d - 1.0) * S0}
    return completed_stats(family, stats,
                           fit(family, stats, prior, record=False, for_auto_dof=True))


def completed_stats(family, stats: dict, params: dict, cond: dict | None = None) -> dict:
    """The expected complete-data class statistics at ``params`` (EM's E-step): each
    missing coordinate filled with its conditional mean, its conditional covariance
    added to the scatter. ``cond``: the groups' algebra at ``params`` if already at hand
    (:func:`.patterns.condition`). Used by :func:`fit`, :func:`evidence_stats` and
    MixtureDA's EM."""
    groups = stats["groups"]
    cond = pat.condition(groups, params, family.tied) if cond is None else cond
    return pat.class_stats(groups, *pat.expected(groups, cond), stats["count"].size,
                           family.tied)


def auto_prior(family, stats: dict, m0: np.ndarray, kappa0: float | None, S0: np.ndarray, *,
               dof: float | None, scale: float | None, record: bool = True,
               start: float | None = None, flat: bool = False) -> dict:
    """The hyper-parameters given as None ("auto") and the evidences of the candidate
    priors (``MVNFamily.search_``).

    Complete data: :func:`.niw_evidence.evidence_search` (``kappa0`` None:
    :func:`.niw_evidence.evidence_search_kappa`). ``candidates``, each at its own optimum:
    the fixed prior (0.01, d + 2, 1 for the "auto" values), nu0 by the evidence, nu0 and s
    by the evidence (when kappa0 or s is "auto"), and the chosen combination. Missing
    entries: the fixed point nu0 <- argmax evidence(statistics completed at the EM MAP
    under nu0), from d + 2, to ``DOF_TOL`` relative or ``DOF_ROUNDS`` rounds (one round
    alone reads the over-fitted completions of a weak prior as evidence for it).
    ``record=False``: the chosen values only; ``start``: a nu0 near the choice, where the
    searches start (same answer to rounding); ``flat``: kappa0 "auto" (and the values
    chosen with it) by the evidence with m0 integrated out (LDA,
    :mod:`.niw_evidence`)."""
    d = S0.shape[0]
    tied = family.tied

    def find(st, option_kappa, option_dof, option_scale) -> dict:
        if option_kappa is None:
            return evidence_search_kappa(st, m0, S0, tied=tied, dof=option_dof,
                                         scale=option_scale, flat=flat)
        return dict(evidence_search(st, m0, option_kappa, S0, tied=tied, dof=option_dof,
                                    scale=option_scale, start=warm, evidence=record),
                    kappa0=option_kappa)

    warm = None if "groups" in stats else start
    fixed_kappa = DEFAULT_KAPPA0 if kappa0 is None else kappa0
    fixed_dof = d + 2.0 if dof is None else dof
    fixed_scale = 1.0 if scale is None else scale
    if "groups" in stats:
        if None not in (kappa0, dof, scale):
            return {"mean_strength": kappa0, "cov_dof": dof, "cov_scale": scale,
                    "log_evidence": None, "candidates": []}
        k, nu0, s = fixed_kappa, fixed_dof, fixed_scale
        for _ in range(DOF_ROUNDS + 1):
            chosen = find(evidence_stats(family, stats, m0, k, s * S0, nu0), kappa0, dof, scale)
            done = all(abs(new - old) <= DOF_TOL * old for new, old in
                       ((chosen["kappa0"], k), (chosen["nu0"], nu0), (chosen["scale"], s)))
            k, nu0, s = chosen["kappa0"], chosen["nu0"], chosen["scale"]
            if done:
                break
        return {"mean_strength": k, "cov_dof": nu0, "cov_scale": s,
                "log_evidence": chosen["log_evidence"],
                "candidates": [_candidate(chosen, kappa0 is None, dof is None, scale is None)]}
    options = [(fixed_kappa, fixed_dof, fixed_scale)]
    if not record:
        options = [(kappa0, dof, scale)]
    elif None in (kappa0, dof, scale):
        options.append((fixed_kappa, None, fixed_scale))
    if record and None in (kappa0, scale):  # the searches of more than nu0 (not by default)
        options.append((fixed_kappa, None, None))
    if (kappa0, dof, scale) not in options:
        options.append((kappa0, dof, scale))
    candidates = [_candidate(find(stats, *option), *(v is None for v in option))
                  for option in options]
    chosen = candidates[options.index((kappa0, dof, scale))]
    return {"mean_strength": chosen["chosen_mean_strength"],
            "cov_dof": chosen["chosen_cov_dof"], "cov_scale": chosen["chosen_cov_scale"],
            "log_evidence": chosen["log_evidence"], "candidates": candidates}


def _candidate(found: dict, kappa_auto: bool, dof_auto: bool, scale_auto: bool) -> dict:
    """One row of ``candidates``: the setting ("auto" or its value), the values it
    resolves to and its exact log evidence."""
    return {"mean_strength": "auto" if kappa_auto else found["kappa0"],
            "cov_dof": "auto" if dof_auto else found["nu0"],
            "cov_scale": "auto" if scale_auto else found["scale"],
            "chosen_mean_strength": found["kappa0"],
            "chosen_cov_dof": found["nu0"], "chosen_cov_scale": found["scale"],
            "log_evidence": found["log_evidence"]}
