"""The Normal-Inverse-Wishart algebra of LDA and QDA (:class:`NIW`).

A posterior is ``m`` (L, d), ``kappa`` (L,), ``Psi`` and ``nu``: per class, (L, d, d) and
(L,) (QDA), or one block shared by the classes, (d, d) and a float (LDA). Its
normaliser, with the rows' constant pi^(-d/2) folded in (nu counts the rows, so the
factor pi^(-nu d / 2) is log h summed over them and h = 1)::

    log Z = log Gamma_d(nu / 2) - nu log|Psi| / 2 - d log(kappa) / 2 - nu d log(pi) / 2

(LDA: the kappa term summed over the classes, the Wishart terms once). The evidence,
predictive and leave-one-out of :mod:`bayesgen.families.conjugate` are differences of
it (Murphy 2007, sec. 9). Adding a row x of weight w (u = x - m)::

    kappa' = kappa + w,  m' = (kappa m + w x) / kappa',  nu' = nu + w,
    Psi' = Psi + (w kappa / kappa') u u^T,   log|Psi'| = log|Psi| + log(1 + (w kappa / kappa') r)

with r = u^T Psi^-1 u (matrix determinant lemma), so the predictive is the multivariate
Student-t with nu - d + 1 degrees of freedom, location m and scale
Psi (kappa + 1) / (kappa (nu - d + 1)), and a row's removal is the same rank-one step
with -w (Sherman-Morrison for the distances at other rows): one Cholesky factor per
covariance block serves every row (:meth:`NIW.predict`, :meth:`NIW.loo`,
:meth:`NIW.loo_at`). The generic differences of :meth:`NIW.log_z` are their test oracle.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import gammaln

from bayesgen.families import conjugate
from bayesgen.families.gaussian_stats import class_sum
from bayesgen.families.mvn.linalg import _swap, mahalanobis, student_t_const
from bayesgen.families.mvn.missing import loo_at_patterns


def posterior(stats: dict, prior: dict, *, tied: bool) -> dict:
    """The conjugate update of statistics ``count`` (K,), ``mean`` (K, d), ``scatter``
    (K, d, d) or (d, d) (``tied``) under ``m0``, ``kappa0``, ``nu0``, ``Psi0`` (each may be
    per class)::

        kappa_k = kappa0 + N_k,   m_k = (kappa0 m0 + N_k xbar_k) / kappa_k
        B_k = S_k + kappa0 N_k / kappa_k (xbar_k - m0)(xbar_k - m0)^T
        QDA: Psi_k = Psi0 + B_k, nu_k = nu0 + N_k;   LDA: Psi = Psi0 + sum_k B_k, nu = nu0 + N
    """
    n = stats["count"]
    kappa0 = np.broadcast_to(np.asarray(prior["kappa0"], dtype=np.float64), n.shape)
    kappa = kappa0 + n
    m = (kappa0[:, None] * prior["m0"] + n[:, None] * stats["mean"]) / kappa[:, None]
    diff = stats["mean"] - prior["m0"]
    between = np.einsum("k,ki,kj->kij", kappa0 * n / kappa, diff, diff)
    if tied:
        Psi = prior["Psi0"] + stats["scatter"] + class_sum(between)
        nu = np.float64(np.asarray(prior["nu0"]) + n.sum())
    else:
        Psi = prior["Psi0"] + stats["scatter"] + between
        nu = np.asarray(prior["nu0"], dtype=np.float64) + n
    return {"m": m, "kappa": kappa, "Psi": (Psi + _swap(Psi)) / 2.0, "nu": nu}


def natural_prior(prior: dict) -> dict:
    """The prior (``m0``, ``kappa0``, ``Psi0``, ``nu0``) as a posterior without data."""
    return {"m": prior["m0"], "kappa": prior["kappa0"], "Psi": prior["Psi0"],
            "nu": prior["nu0"]}


def _logdet(Psi: np.ndarray) -> np.ndarray:
    """log|Psi| over the leading dims, from the Cholesky factor; a Psi that is positive
    definite in exact arithmetic but not to float64 precision (weights near 1e300) gets
    ``slogdet``'s value, so that an evidence search can finish and the fit's definiteness
    check (``MVNFamily.posterior``) names the problem instead of a raw LinAlgError."""
    try:
        return 2.0 * np.log(np.diagonal(np.linalg.cholesky(Psi), axis1=-2,
                                        axis2=-1)).sum(-1)
    except np.linalg.LinAlgError:
        return np.linalg.slogdet(Psi)[1]


class NIW(conjugate.Joint):
    """The Normal-Inverse-Wishart algebra (module docstring); ``tied``: LDA's shared
    (Psi, nu) block, which every row changes, so the leave-one-out at other rows
    changes every class's column."""

    def __init__(self, *, tied: bool, who: str = "model") -> None:
        self.tied = bool(tied)
        self.who = who

    def log_z(self, post: dict) -> np.ndarray:
        """log Z over the leading dims (QDA: per class; LDA: one value)."""
        Psi, nu = post["Psi"], np.asarray(post["nu"], dtype=np.float64)
        d = Psi.shape[-1]
        logdet = _logdet(Psi)
        gamma_d = gammaln(nu[..., None] / 2.0 - np.arange(d) / 2.0).sum(-1)
        wishart = gamma_d - 0.5 * nu * logdet - 0.5 * nu * d * np.log(np.pi)
        means = -0.5 * d * np.log(post["kappa"])
        return wishart + (means.sum(-1) if self.tied else means)

    def update(self, post: dict, X: np.ndarray, w=1.0) -> dict:
        """The posteriors ``post`` (n, ...) (per class, QDA-shaped) with rows X (n, d) of
        weights w added (w < 0 removes)."""
        w = np.broadcast_to(np.asarray(w, dtype=np.float64), X.shape[:1])
        kappa = post["kappa"] + w
        u = X - post["m"]
        c = w * post["kappa"] / kappa
        return {"m": post["m"] + (w / kappa)[:, None] * u, "kappa": kappa,
                "Psi": post["Psi"] + c[:, None, None] * u[:, :, None] * u[:, None, :],
                "nu": post["nu"] + w}

    def predict(self, post: dict, X: np.ndarray) -> np.ndarray:
        """The Student-t log p(x_n | class l), (n, L): one Cholesky factor per block."""
        d = X.shape[1]
        maha, logdet = mahalanobis(X, post["m"], post["Psi"], tied=self.tied)
        kappa = post["kappa"]
        df = np.asarray(post["nu"], dtype=np.float64) - d + 1.0
        return (student_t_const(df, d, logdet, kappa)
                - 0.5 * (df + d) * np.log1p(maha * (kappa / (kappa + 1.0))))

    def loo(self, post: dict, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        """log p(x_n | y_n, D without row n), (n,): :meth:`loo_at`'s rank-one removal at
        the row itself, its own class only (t = v, so the distance is
        (kappa / kappa')^2 r / (1 - c r))."""
        return self._rank_one(post, X, y, w, None, own=True)

    def loo_at(self, post: dict, X: np.ndarray, y: np.ndarray, w: np.ndarray,
               X_test: np.ndarray | None = None) -> np.ndarray:
        """log p(x_test_j | y = k, D without training row i), (n, m, K); ``X_test=None``:
        (n, K) at the training rows themselves.

        Row i (class c, v = L^-1 (x_i - m_c), r = |v|^2, c_i = w kappa_c / kappa'_c,
        g = 1 - c_i r) leaves; for a test row z and class k, t = L^-1 (z - m_k) and
        a = w / kappa'_c if k = c (the location moves) else 0, so that by
        Sherman-Morrison the distance under Psi' = Psi - c_i u u^T is::

            |t|^2 + 2 a (v . t) + a^2 r + c_i (v . t + a r)^2 / g

        One factor per block and one product V T^T give every entry. QDA: only class c
        changes; LDA: the shared block changes every class. Test rows with missing
        entries: the marginal of their observed coordinates, per pattern.
        """
        if X_test is not None and np.isnan(X_test).any():
            return loo_at_patterns(self, post, X, y, w, X_test)
        return self._rank_one(post, X, y, w, X_test, own=False)

    def _rank_one(self, post: dict, X: np.ndarray, y: np.ndarray, w: np.ndarray,
                  X_test: np.ndarray | None, *, own: bool) -> np.ndarray:
        """:meth:`loo_at` of complete rows; ``own``: the training rows at their own
        class only, (n,)."""
        n, d = X.shape
        mean, kappa = post["m"], post["kappa"]
        n_classes = mean.shape[0]
        pairs = X_test is None
        nu = np.broadcast_to(np.asarray(post["nu"], dtype=np.float64), kappa.shape)
        if own or not self.tied:  # one group per class, its own column (or QDA's)
            groups = [(post["Psi"] if self.tied else post["Psi"][k], np.flatnonzero(y == k),
                       np.array([k])) for k in range(n_classes)]
        else:
            groups = [(post["Psi"], np.arange(n), np.arange(n_classes))]
        if own:
            out = np.empty(n)
        elif self.tied:
            out = np.empty((n, n_classes) if pairs else (n, X_test.shape[0], n_classes))
        else:  # QDA: only the row's class changes
            full = self.predict(post, X if pairs else X_test)
            out = full if pairs else np.broadcast_to(full, (n, *full.shape)).copy()
        for Psi, rows, classes in groups:
            if not rows.size:
                continue
            L = np.linalg.cholesky(Psi)
            logdet = 2.0 * np.log(np.diagonal(L)).sum()

            def whiten(D: np.ndarray, L: np.ndarray = L) -> np.ndarray:
                return solve_triangular(L, D.reshape(-1, d).T, lower=True).T.reshape(D.shape)

            yr, wr = y[rows], w[rows]
            V = whiten(X[rows] - mean[yr])  # (n_g, d)
            r = np.einsum("ij,ij->i", V, V)
            kappa_c = kappa[yr]
            kappa_r = kappa_c - wr
            c = wr * kappa_c / kappa_r
            g = 1.0 - c * r  # > 0: Psi' = Psi0 + (its statistics) is positive definite
            df = nu[yr] - wr - d + 1.0
            same = yr[:, None] == classes[None, :]  # (n_g, K_g)
            a = np.where(same, (wr / kappa_r)[:, None], 0.0)[:, None, :]
            kap = np.where(same, kappa_r[:, None], kappa[classes][None, :])  # (n_g, K_g)
            if pairs:  # (n_g, K_g, d); at its own class a row's t is v
                T = V[:, None, :] if own else whiten(X[rows][:, None, :] - mean[classes][None])
                tt = np.einsum("nkd,nkd->nk", T, T)[:, None, :]
                vt = np.einsum("nd,nkd->nk", V, T)[:, None, :]
            else:
                T = whiten(X_test[:, None, :] - mean[classes][None])  # (m, K_g, d)
                tt = np.einsum("mkd,mkd->mk", T, T)[None]
                vt = (V @ T.reshape(-1, d).T).reshape(rows.size, *T.shape[:2])
            r3 = r[:, None, None]
            quad = tt + 2.0 * a * vt + a * a * r3 + (c / g)[:, None, None] * (vt + a * r3) ** 2
            kap3 = kap[:, None, :]
            value = (student_t_const(df[:, None], d, (logdet + np.log(g))[:, None], kap)[:, None]
                     - 0.5 * (df + d)[:, None, None] * np.log1p(quad * (kap3 / (kap3 + 1.0))))
            if own:
                out[rows] = value[:, 0, 0]
            elif pairs:
                out[rows[:, None], classes[None, :]] = value[:, 0, :]
            else:
                m = X_test.shape[0]
                out[rows[:, None, None], np.arange(m)[None, :, None],
                    classes[None, None, :]] = value
        return out
