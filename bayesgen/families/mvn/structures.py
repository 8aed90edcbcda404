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
one per class for V..; :func:`.niw_evidence._group_scatter`), the Inverse-Gamma
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

from bayesgen.families import gaussian_evidence as gev
from bayesgen.families.gaussian_stats import class_sum
from bayesgen.families.mvn.niw_evidence import _group_scatter, evidence_search

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


def _ig_entries(stats: dict, m0: np.ndarray, kappa0: float, s0: np.ndarray,
                name: str) -> tuple[np.ndarray, np.ndarray]:
    """(beta, n) of the Inverse-Gamma structures: scaled sums of squares and counts, one
    row per covariance group, one column (spherical) or one per feature (diagonal)."""
    per_class = name[0] == "V"
    groups, sizes = _group_scatter(stats if per_class else _pooled(stats), m0, kappa0,
                                   tied=not per_class)
    d = s0.size
    scaled = np.array([np.diagonal(B) / s0 for B in groups])
    sizes = np.asarray(sizes, dtype=np.float64)
    if name[1:] == "II":  # spherical in the target's coordinates
        return np.clip(scaled.sum(axis=1, keepdims=True), 0.0, None), sizes[:, None] * d
    return np.clip(scaled, 0.0, None), np.repeat(sizes[:, None], d, axis=1)


def ig_log_evidence(beta: np.ndarray, n: np.ndarray, nu0: float, scale: float) -> float:
    """sum over entries of lgamma(a0 + n / 2) - lgamma(a0) + a0 log(t / 2)
    - (a0 + n / 2) log((t + beta) / 2), a0 = nu0 / 2, t = (nu0 - 2) scale: the
    Inverse-Gamma part of the log evidence in coordinates scaled by the target."""
    a0 = nu0 / 2.0
    t = (nu0 - 2.0) * scale
    a_n = a0 + n / 2.0
    return float(np.sum(gammaln(a_n) - gammaln(a0) + a0 * np.log(t / 2.0)
                        - a_n * np.log((t + beta) / 2.0)))


def structure_log_evidence(stats: dict, m0: np.ndarray, kappa0: float, s0: np.ndarray,
                           name: str, nu0: float, scale: float) -> float:
    """Exact log p(Z | y) (internal frame) of one Inverse-Gamma structure (EII, VII,
    EEI, VVI) at strength nu0 (> 2; a0 = nu0 / 2) and scale s (prior mean of each
    variance: s times the target's)."""
    d = s0.size
    count = stats["count"]
    beta, n = _ig_entries(stats, m0, kappa0, s0, name)
    base = (0.5 * d * np.sum(np.log(kappa0 / (kappa0 + count)))
            - 0.5 * count.sum() * d * np.log(2.0 * np.pi))
    jac = -0.5 * count.sum() * np.sum(np.log(s0))  # coordinates scaled by the target
    return ig_log_evidence(beta, n, nu0, scale) + float(base + jac)


def structure_evidence(stats: dict, m0: np.ndarray, kappa0: float, s0: np.ndarray, *,
                       tied: bool, full: dict | None = None) -> list[dict]:
    """Each structure at its evidence-maximising strength and scale.

    Parameters
    ----------
    stats : dict
        Complete-data statistics in the internal frame; ``scatter`` (d, d) when
        ``tied`` (then only :data:`SHARED` structures), else (K, d, d).
    m0, kappa0 : ndarray of shape (d,), float
        Prior of the class means.
    s0 : ndarray of shape (d,)
        The diagonal target S0.
    tied : bool
        Whether ``stats`` are pooled (LDA).
    full : dict or None
        The already searched full structure of the estimator (EEE for LDA, VVV for QDA),
        as :func:`.niw_evidence.evidence_search` returns it, reused instead of searched.

    Returns
    -------
    list of dict
        ``structure``, ``dof`` (nu0 of the Inverse-Wishart, or 2 a0 of the
        Inverse-Gammas), ``scale`` (s) and ``log_evidence`` (internal frame).
    """
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
        nu0, scale = gev.search_entries(*_ig_entries(stats, m0, kappa0, s0, name),
                                        ftol=STRUCTURE_FTOL)
        out.append({"structure": name, "dof": nu0, "scale": scale,
                    "log_evidence": structure_log_evidence(stats, m0, kappa0, s0, name, nu0,
                                                           scale)})
    return out
