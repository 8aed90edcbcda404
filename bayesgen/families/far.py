"""Frame helpers of the real-valued families and their far-row log-densities.

A far row (:class:`bayesgen.data.frame.FarRows`) is z = t u + z_N with t = 2^E possibly
beyond the float range, ``u`` the far entries scaled by 1/t and ``z_N`` the moderate
ones. For a Gaussian class density, with z - mu = t u + (z_N - mu)::

    log N(z; mu, Sigma) = t^2 a2 + t a1 + a0
    a2 = -u^T P u / 2,  a1 = -u^T P (z_N - mu),  a0 = log N(z_N; mu, Sigma)

(P = Sigma^-1), exactly; :func:`bayesgen.data.frame.far_scores` turns the coefficients
into scores without overflow. (KernelNB's far rows: :mod:`bayesgen.families.kernel.far`.)
The Student-t predictive
densities have polynomial tails, so their far values are finite: log(1 + q) with
log q = 2 log t + log(q / t^2) evaluated on the scaled row.
"""

from __future__ import annotations

import numpy as np

from bayesgen.families.mvn.linalg import _whiten, student_t_const
from bayesgen.utils.logspace import log_rising

LOG_2PI = np.log(2.0 * np.pi)


# ------------------------------------------------------------------ frames
class RealColumns:
    """``real_columns``, ``check_X``, ``to_user``, ``prior_to_user`` and
    ``likelihood_maximiser`` of a family whose every column is real-valued (in the frame),
    with nothing to check beyond finiteness (the caller's)."""

    #: the frame's conversion ("loc", "var" or "cov", :meth:`Frame.user_loc` ...) of each
    #: entry of the parameters and of the resolved prior
    units: dict = {}

    def real_columns(self, n_features: int) -> np.ndarray:
        """Every column is real-valued (transformed by the frame)."""
        return np.ones(n_features, dtype=bool)

    def check_X(self, X: np.ndarray, *, method: str, who: str) -> np.ndarray:
        """Real-valued features: nothing beyond finiteness (checked by the caller)."""
        return X

    def to_user(self, params: dict) -> dict:
        """The entries of ``params`` (any leading dims) named in :attr:`units` in the units
        of X: a location mu -> c + s mu, variances -> s^2 var, covariances -> S cov S."""
        if self.frame is None:
            return params
        return {k: getattr(self.frame, "user_" + self.units[k])(v) if k in self.units else v
                for k, v in params.items()}

    def prior_to_user(self, prior: dict) -> dict:
        """The resolved prior in the units of X (:meth:`to_user`)."""
        return self.to_user(prior)

    def likelihood_maximiser(self):
        """``self``, or with ``divisor="unbiased"`` a copy with divisor N_k."""
        return self if getattr(self, "divisor", "n") == "n" else self.configured(divisor="n")


def attach_frame(stats: dict, frame) -> dict:
    """Label statistics with the frame of the data they were computed from."""
    if frame is not None:
        stats["loc"] = frame.loc.copy()
        stats["scale"] = frame.scale.copy()
    return stats


def log_jacobian(frame, observed: np.ndarray) -> float:
    """sum_j W_j log s_j: the frame's log-Jacobian over W_j (d,), the weighted number of
    observed entries of feature j (0 without a frame). A log-density of Z minus it is
    the log-density of X in the user's units."""
    if frame is None:
        return 0.0
    return float(np.asarray(observed, dtype=np.float64) @ np.log(frame.scale))


def user_to_internal(family, kind: str, value: np.ndarray) -> np.ndarray:
    """A user-given prior quantity in the family's internal frame.

    ``kind``: "loc" (a mean, (d,)), "var" (variances, (d,)) or "cov" ((d, d)).
    """
    return value if family.frame is None else getattr(family.frame, "internal_" + kind)(value)


# ----------------------------------------------------------------- Gaussian
def gaussian_terms(family, far, params: dict):
    """(a2, a1, a0) of GaussianNB for far rows, each (..., m, K)."""
    mu, var = params["mu"], params["var"]
    prec = 1.0 / var
    a2 = -0.5 * ((far.U * far.U) @ np.swapaxes(prec, -1, -2))
    a1 = far.U @ np.swapaxes(mu * prec, -1, -2)
    a0 = family.log_lik(far.ZN, params, full=True)
    return a2, a1, a0


def _log1p_far(log_q: np.ndarray) -> np.ndarray:
    """log(1 + q) from log q, for any q >= 0 (no overflow)."""
    return np.logaddexp(0.0, log_q)


def gaussian_predictive(far, post: dict, spherical: bool = False) -> np.ndarray:
    """The Normal-Inverse-Gamma predictive (:mod:`.mvn.diagonal`) of far rows,
    (m, K): log(1 + q) of each entry (diagonal) or of the sum of the entries' q
    (spherical), with log q = 2 (log t + log|u - m/t|) - log(nu scale2) at a far entry
    z = t u."""
    from scipy.special import logsumexp

    a, b = post["a"], post["b"]
    nu_s2 = 2.0 * b * (1.0 + 1.0 / post["kappa"])  # nu scale2, without a * kappa overflowing
    m_t = far.inv_t(np.broadcast_to(post["m"], (far.rows.size, *post["m"].shape)))
    with np.errstate(divide="ignore"):
        near = np.log((far.ZN[:, None, :] - post["m"]) ** 2 / nu_s2)
        log_dist = far.log_t[:, None, None] + np.log(np.abs(far.U[:, None, :] - m_t))
    log_q = np.where(far.far[:, None, :], 2.0 * log_dist - np.log(nu_s2), near)
    if spherical:
        d = post["m"].shape[1]
        stacked = np.concatenate([np.zeros((*log_q.shape[:2], 1)), log_q], axis=-1)
        return (log_rising(a[:, 0], d / 2.0) - 0.5 * np.log(np.pi * nu_s2).sum(axis=-1)
                - (a[:, 0] + d / 2.0) * logsumexp(stacked, axis=-1))
    terms = (log_rising(a, 0.5) - 0.5 * (np.log(2.0 * np.pi * b) + np.log1p(1.0 / post["kappa"]))
             - (a + 0.5) * _log1p_far(log_q))
    return terms.sum(axis=-1)


# -------------------------------------------------------------- multivariate
def _whitened(far, mu: np.ndarray, cov: np.ndarray, tied: bool):
    """u^T A_k (..., m, K, d), (z_N - mu_k)^T A_k (..., m, K, d) and log|Sigma_k| (..., K)
    with Sigma_k^-1 = A_k A_k^T."""
    A, logdet = _whiten(cov)
    if tied:
        A = np.broadcast_to(A[..., None, :, :], (*mu.shape, mu.shape[-1]))
        logdet = np.broadcast_to(logdet[..., None], mu.shape[:-1])
    UA = np.einsum("md,...kde->...mke", far.U, A)
    diff = far.ZN[:, None, :] - mu[..., None, :, :]  # (..., m, K, d)
    B = np.einsum("...mkd,...kde->...mke", diff, A)
    return UA, B, logdet


def mvn_terms(family, far, params: dict):
    """(a2, a1, a0) of LDA/QDA for far rows, each (..., m, K)."""
    mu = params["mu"]
    d = mu.shape[-1]
    UA, B, logdet = _whitened(far, mu, params["cov"], family.tied)
    a2 = -0.5 * np.einsum("...mkd,...mkd->...mk", UA, UA)
    a1 = -np.einsum("...mkd,...mkd->...mk", UA, B)
    a0 = -0.5 * (np.einsum("...mkd,...mkd->...mk", B, B) + logdet[..., None, :] + d * LOG_2PI)
    return a2, a1, a0


def mvn_predictive(family, far, post: dict) -> np.ndarray:
    """Multivariate Student-t predictive log-density of far rows, (m, K): the
    Mahalanobis distance q = t^2 |u^T A + (z_N - m)^T A / t|^2 enters as log q."""
    d = post["m"].shape[-1]
    UA, B, logdet = _whitened(far, post["m"], post["Psi"], family.tied)
    Bt = far.inv_t(B)
    with np.errstate(divide="ignore"):
        log_q = 2.0 * far.log_t[:, None] + np.log(np.sum((UA + Bt) ** 2, axis=-1))
    kappa = post["kappa"]
    df = np.asarray(post["nu"], dtype=np.float64) - d + 1.0
    return (student_t_const(df, d, logdet, kappa)
            - 0.5 * (df + d) * _log1p_far(log_q - np.log1p(1.0 / kappa)))
