"""Closed-form evidence of mclust's covariance structures, each with its prior's strength
and scale chosen by type-II maximum likelihood (``prior_search_["structures"]``).

Six Gaussian class models, named as in mclust (E: equal across classes, V: varying; the
letters are volume, shape, orientation), all with class means
mu_k | cov ~ N(m0, cov / kappa0) and a conjugate prior on the covariance whose mean is
s times the diagonal target S0 = diag(s0) (the pooled within-class variances by
default, so "spherical" means spherical in standardised coordinates):

=====  =========================  ==============================================
name   covariance                 prior (c = strength - 2 or nu0 - d - 1, t = c s)
=====  =========================  ==============================================
EII    sigma2 S0, shared          sigma2 ~ InvGamma((c + 2) / 2, t / 2)
VII    sigma2_k S0, per class     the same, independently per class
EEI    diag(sigma2_j), shared     sigma2_j ~ InvGamma((c + 2) / 2, t s0_j / 2)
VVI    diag(sigma2_kj), per class the same per class (GaussianNB's model)
EEE    Sigma, shared              IW(nu0, t S0) (LDA's model)
VVV    Sigma_k, per class         IW(nu0, t S0) per class (QDA's model)
=====  =========================  ==============================================

With B_g the between-adjusted scatter of a covariance group g (the pooled one for E..,
one per class for V..; :func:`entries`, :func:`group_entries`), the Inverse-Gamma
structures' evidence is that of a Normal-Inverse-Gamma model of "observations" whose
counts and sums of squares are, per group: EII/VII one entry with N_g d observations
and sum of squares tr(S0^-1 B_g); EEI/VVI one entry per feature with N_g observations
and sum of squares B_g,jj / s0_j. Each evidence is therefore exact in closed form, and its
(c, s) search the O(G d) one of :mod:`bayesgen.families.gaussian_evidence`; EEE/VVV use
:func:`.niw_evidence.evidence_search`. All are log p(X | y) of the same rows, so their
differences are log Bayes factors between the structures.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from bayesgen.data import missing
from bayesgen.families import gaussian_evidence as gev
from bayesgen.families.gaussian_stats import class_sum, one_hot
from bayesgen.families.mvn.niw_evidence import evidence_search

LOG_2PI = np.log(2.0 * np.pi)
#: structures whose evidence needs only pooled statistics (LDA keeps no per-class scatter)
SHARED = ("EII", "EEI", "EEE")
#: every structure (QDA's per-class scatter also gives the pooled one)
ALL = ("EII", "VII", "EEI", "VVI", "EEE", "VVV")
#: L-BFGS-B's relative tolerance on the evidence of the Inverse-Gamma structures
STRUCTURE_FTOL = 1e-10


def _pooled(stats: dict) -> dict:
    """The statistics with per-class scatter matrices summed (the E.. structures')."""
    if stats["scatter"].ndim == 2:
        return stats
    return dict(stats, scatter=class_sum(stats["scatter"]))


def structure_log_evidence(stats: dict, m0: np.ndarray, kappa0: float, s0: np.ndarray,
                           name: str, nu0: float, scale: float) -> float:
    """Exact log p(Z | y) (internal frame) of one Inverse-Gamma structure (EII, VII,
    EEI, VVI) at strength nu0 (> 2; a0 = nu0 / 2) and scale s (prior mean of each
    variance: s times the target's), :func:`log_evidence_entries`."""
    prior = {"m0": m0, "kappa0": kappa0, "nu0": nu0, "scale": scale, "s0": s0}
    return log_evidence_entries(entries(stats), prior, tied=name[0] == "E",
                                spherical=name[1:] == "II")


def entries(stats: dict) -> dict:
    """Per (class, feature) statistics of the observed entries from the full family's
    statistics (or GaussianNB's per-feature ``count``, ``mean``, ``m2``, ``observed``):
    ``n`` (K, d) weighted counts, ``mean`` (K, d), ``m2`` (K, d) centred sums
    of squares, or ``m2_pooled`` (d,) only when the statistics are LDA's pooled ones
    (``m2`` None then). With missing entries the (pattern, class) groups are combined
    per (class, feature) by Chan et al.'s pairwise update."""
    if "scatter" not in stats:  # GaussianNB's per-feature statistics
        n = np.broadcast_to(missing.observed_count(stats), stats["mean"].shape)
        m2 = np.clip(stats["m2"], 0.0, None)
        return {"n": n.astype(np.float64), "mean": stats["mean"], "m2": m2,
                "m2_pooled": m2.sum(axis=0)}
    if "groups" not in stats:
        K, d = stats["mean"].shape
        n = np.repeat(stats["count"][:, None], d, axis=1).astype(np.float64)
        scatter = stats["scatter"]
        if scatter.ndim == 2:
            return {"n": n, "mean": stats["mean"], "m2": None,
                    "m2_pooled": np.clip(np.diagonal(scatter).copy(), 0.0, None)}
        m2 = np.clip(np.diagonal(scatter, axis1=1, axis2=2).copy(), 0.0, None)
        return {"n": n, "mean": stats["mean"], "m2": m2, "m2_pooled": m2.sum(axis=0)}
    groups = stats["groups"]
    K = stats["count"].size
    d = groups["mean"].shape[1]
    onehot = one_hot(groups["cls"], 1.0, K)
    weight = groups["count"][:, None] * groups["obs"]  # (G, d)
    n = onehot.T @ weight
    mean = np.divide(onehot.T @ (weight * groups["mean"]), n, out=np.zeros((K, d)),
                     where=n > 0)
    inner = np.diagonal(groups["scatter"], axis1=1, axis2=2) * groups["obs"]
    spread = weight * (groups["mean"] - mean[groups["cls"]]) ** 2
    m2 = np.clip(onehot.T @ (inner + spread), 0.0, None)
    return {"n": n, "mean": mean, "m2": m2, "m2_pooled": m2.sum(axis=0)}


def group_entries(ent: dict, m0: np.ndarray, kappa0: float, s0: np.ndarray, *,
                   tied: bool, spherical: bool) -> tuple[np.ndarray, np.ndarray]:
    """(beta, N) of :mod:`bayesgen.families.gaussian_evidence` per variance: the scaled
    sums of squares and observed counts, (G, d) (diag) or (G, 1) (spherical); kappa0 = 0:
    the likelihood's."""
    n = ent["n"]
    shrink = np.divide(kappa0 * n, kappa0 + n, out=np.zeros(n.shape), where=n > 0)
    dev = shrink * (ent["mean"] - m0) ** 2
    if tied:
        beta = (ent["m2_pooled"] + dev.sum(axis=0))[None] / s0
        count = n.sum(axis=0, keepdims=True)
    else:
        beta, count = (ent["m2"] + dev) / s0, n
    if spherical:
        return beta.sum(axis=1, keepdims=True), count.sum(axis=1, keepdims=True)
    return beta, count


def log_evidence_entries(ent: dict, prior: dict, *, tied: bool, spherical: bool) -> float:
    """Exact log p(Z | y) in the internal frame: the Inverse-Gamma part, summed over the
    variances (beta, N of :func:`group_entries`, a0 = nu0 / 2, t = (nu0 - 2) s)::

        lgamma(a0 + N / 2) - lgamma(a0) + a0 log(t / 2) - (a0 + N / 2) log((t + beta) / 2)

    the means' factors (kappa0 / kappa_kj)^(1/2) and the target's Jacobian
    -N_kj log(s0_j) / 2."""
    beta, count = group_entries(ent, prior["m0"], prior["kappa0"], prior["s0"], tied=tied,
                                 spherical=spherical)
    n = ent["n"]
    base = np.sum(0.5 * np.log(prior["kappa0"] / (prior["kappa0"] + n)) - 0.5 * n * LOG_2PI
                  - 0.5 * n * np.log(prior["s0"]))
    a0, t = prior["nu0"] / 2.0, (prior["nu0"] - 2.0) * prior["scale"]
    a_n = a0 + count / 2.0
    inverse_gamma = float(np.sum(gammaln(a_n) - gammaln(a0) + a0 * np.log(t / 2.0)
                                 - a_n * np.log((t + beta) / 2.0)))
    return inverse_gamma + float(base)


def structure_evidence(stats: dict, m0: np.ndarray, kappa0: float, s0: np.ndarray, *,
                       tied: bool, full: dict | None = None) -> list[dict]:
    """Each structure at its evidence-maximising strength and scale, for complete-data
    statistics (``scatter`` (d, d) when ``tied``: only :data:`SHARED` structures), the mean
    prior ``m0`` (d,), ``kappa0`` and the diagonal target ``s0`` (d,). ``full``: the
    estimator's already searched full structure (:func:`.niw_evidence.evidence_search`),
    reused. Returns one dict per structure: ``structure``, ``dof``, ``scale`` and
    ``log_evidence`` (internal frame)."""
    out = []
    for name in SHARED if tied else ALL:
        if name in ("EEE", "VVV"):
            shared = name == "EEE"
            found = full if full is not None and shared == tied else evidence_search(
                _pooled(stats) if shared else stats, m0, kappa0, np.diag(s0), tied=shared)
            out.append({"structure": name, "dof": found["nu0"], "scale": found["scale"],
                        "log_evidence": found["log_evidence"]})
            continue
        # informative only (the fit does not use them): a looser tolerance
        found = group_entries(entries(stats), m0, kappa0, s0, tied=name[0] == "E",
                              spherical=name[1:] == "II")
        nu0, scale = gev.search_entries(*found, ftol=STRUCTURE_FTOL)
        out.append({"structure": name, "dof": nu0, "scale": scale,
                    "log_evidence": structure_log_evidence(stats, m0, kappa0, s0, name, nu0,
                                                           scale)})
    return out
