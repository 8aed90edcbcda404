"""Exact leave-one-out predictive densities of the conjugate posteriors.

For ``method="conjugate"`` the leave-one-out predictive of a training row::

    log p(x_n, y_n | D without row n)
        = log p(y_n | y without n) + log p(x_n | y_n, D without row n)

is available in closed form: removing row n from the data removes its contribution
from the conjugate posterior of its own class (the other classes' posteriors do not
depend on it), and the predictive is then the family's closed-form posterior predictive
(Student-t, Beta-Bernoulli, Dirichlet-multinomial, Dirichlet-categorical, negative
binomial). All rows at once, no refit, no importance sampling, so no Pareto-k diagnostic:
:func:`elpd` returns an ArviZ ``ELPDData`` that ``az.compare`` accepts next to PSIS-LOO
ones (``bg.compare`` does this for conjugate estimators).

Removing a row of weight w from the posterior of its class k (the conjugate update run
backwards; hyper-parameters of the full-data posterior without a prime):

- labels: ``p(y_n = k | rest) = (N_k - w + a_k) / (N - w + A)`` (fixed ``class_prior``:
  pi_k);
- Normal-Inverse-Gamma (GaussianNB, per observed feature)::

      kappa' = kappa - w,  m' = (kappa m - w x) / kappa',  a' = a - w / 2,
      b' = b - w kappa (x - m)^2 / (2 kappa')

- Normal-Inverse-Wishart (QDA; LDA with the shared Psi and nu), u = x - m_k,
  r = u^T Psi^-1 u, c = w kappa_k / kappa'_k::

      kappa' = kappa_k - w,  nu' = nu - w,  Psi' = Psi - c u u^T
      log|Psi'| = log|Psi| + log(1 - c r)                     (matrix determinant lemma)
      (x - m')^T Psi'^-1 (x - m') = (kappa_k / kappa')^2 r / (1 - c r)  (Sherman-Morrison)

  so one Cholesky factor per class serves every row (no per-row factorisation);
- Beta (BernoulliNB): ``a' = a - w x``, ``b' = b - w (1 - x)``; Dirichlet
  (MultinomialNB, CategoricalNB): the row's counts subtracted from the concentration;
  Gamma (PoissonNB): ``a' = a - w x``, ``b' = b - w``; Gamma (ExponentialNB, the Lomax
  predictive): ``a' = a - w``, ``b' = b - w x``.

Sample weights: row n is removed with its whole weight w_n (a row of weight 2 is left
out as a pair), and each row counts once in the sum (as in ``az.loo`` of the
``log_likelihood`` group). Missing entries of the factorised families: the row's
observed entries are removed from the observed-entry statistics, exact. The prior is
held fixed at the resolved ``prior_`` (data-dependent defaults are computed once from
all rows, as for the PSIS-LOO estimate of the same posterior). Densities are in the
user's units (the frame's Jacobian over each row's observed features is subtracted).

Not available (``supports`` is False, callers fall back to PSIS-LOO): other methods,
LDA/QDA fitted with missing entries (data augmentation, no closed form), KernelNB.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from bayesgen.data import missing, sparse
from bayesgen.inference import classprior, scoring
from bayesgen.utils.heavy import import_arviz

#: rows per block for the dense (n, d) temporaries of sparse count data
_BLOCK = 4096


def supports(estimator) -> bool:
    """Whether :func:`pointwise` is exact for this fitted estimator."""
    if getattr(estimator, "method", None) != "conjugate":
        return False
    if getattr(estimator, "n_unlabeled_", 0):  # semi-supervised: no closed form
        return False
    if getattr(estimator, "_train", None) is None:  # fitted from statistics alone
        return False
    return _family_ok(estimator.family_, estimator.stats_)


def _family_ok(family, stats: dict) -> bool:
    if family.name == "mixed":
        return all(_family_ok(q["family"], s)
                   for q, s in zip(family.parts_, stats["parts"], strict=True))
    if "groups" in stats:  # LDA/QDA or MultinomialNB with missing entries: augmentation
        return False
    return family.name in ("mvn", "gaussian", "bernoulli", "multinomial", "categorical",
                           "poisson", "exponential")


def training_weights(estimator) -> np.ndarray:
    """The sample weights of the training rows (ones for a model fitted without)."""
    y = estimator._train[1]
    w = getattr(estimator, "_train_weights", None)
    if w is not None and np.shape(w) == (y.shape[0],):
        return np.asarray(w, dtype=np.float64)
    ones = np.ones(y.shape[0])
    if not np.allclose(np.bincount(y, minlength=estimator.classes_.size), estimator.class_count_):
        raise ValueError(
            f"{type(estimator).__name__}: the sample weights of the training rows are not "
            "known (model saved before they were kept); refit it."
        )
    return ones


def pointwise(estimator) -> np.ndarray:
    """log p(x_n, y_n | D without row n) of every training row, (n,), user units.

    Raises ``ValueError`` when the estimator has no exact LOO (see :func:`supports`).
    """
    if not supports(estimator):
        raise ValueError(
            f"{type(estimator).__name__} (method={estimator.method!r}) has no exact "
            "leave-one-out predictive: it needs method='conjugate', the training rows, and "
            "a family with a closed-form posterior (LDA/QDA/MultinomialNB without missing "
            "entries)."
        )
    X, y = estimator._train
    w = training_weights(estimator)
    Z = scoring.internal(estimator, X)
    family = estimator.family_
    values = _label_term(estimator, y, w)
    values = values + _features(family, Z, y, w, estimator.posterior_)
    jac = scoring._jacobian(estimator, Z)
    return values - (jac if np.ndim(jac) == 0 else jac[:, 0])


def full_data_pointwise(estimator) -> np.ndarray:
    """log p(x_n, y_n | D) of every training row (the row included), (n,), user units:
    the exact log pointwise predictive density whose sum is the lppd."""
    X, y = estimator._train
    joint = scoring.raw_scores(estimator, X, full=True)
    return joint[np.arange(y.size), y]


def elpd(estimator, scale: str = "log"):
    """ArviZ ``ELPDData`` of the exact LOO (``elpd_loo``, ``se``, ``p_loo``, ``loo_i``),
    as ``az.loo(..., pointwise=True)`` returns, without Pareto k (nothing is estimated).

    ``p_loo = lppd - elpd_loo`` with the exact lppd (:func:`full_data_pointwise`);
    ``se = sqrt(n Var(loo_i))`` as ArviZ computes it.
    """
    import xarray as xr

    ELPDData = import_arviz().ELPDData

    factor = {"log": 1.0, "negative_log": -1.0, "deviance": -2.0}.get(scale)
    if factor is None:
        raise ValueError(f"scale must be 'log', 'negative_log' or 'deviance'; got {scale!r}.")
    loo_i = pointwise(estimator)
    lppd = float(np.sum(full_data_pointwise(estimator)))
    n = loo_i.size
    scaled = factor * loo_i
    chains, draws = estimator._posterior_size()
    return ELPDData(
        data=[float(scaled.sum()), float(np.sqrt(n * np.var(scaled))), lppd - float(loo_i.sum()),
              chains * draws, n, False,
              xr.DataArray(scaled, dims=("obs",), coords={"obs": np.arange(n)}, name="loo_i"),
              scale],
        index=["elpd_loo", "se", "p_loo", "n_samples", "n_data_points", "warning", "loo_i",
               "scale"],
    )


# ------------------------------------------------------------------ terms
def _label_term(estimator, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """log p(y_n | the other labels), (n,)."""
    fixed = classprior.fixed_of(estimator)
    if fixed is not None:
        with np.errstate(divide="ignore"):
            return np.log(fixed)[y]
    conc = classprior.posterior(estimator.class_count_, estimator.class_alpha_)
    return np.log(conc[y] - w) - np.log(conc.sum() - w)


def _features(family, Z, y: np.ndarray, w: np.ndarray, post: dict) -> np.ndarray:
    """log p(z_n | y_n, D without row n) in the internal frame, (n,)."""
    name = family.name
    if name == "mixed":
        return sum(_features(q["family"], Z[:, q["columns"]], y, w, p)
                   for q, p in zip(family.parts_, post["parts"], strict=True))
    if name == "mvn":
        return _mvn(family, Z, y, w, post)
    if sparse.is_sparse(Z) and name != "multinomial":  # dense (n, d) terms: row blocks
        return np.concatenate([
            _features(family, Z[s:s + _BLOCK].toarray(), y[s:s + _BLOCK], w[s:s + _BLOCK], post)
            for s in range(0, Z.shape[0], _BLOCK)]) if Z.shape[0] else np.zeros(0)
    if name == "multinomial":
        return _multinomial(family, Z, y, w, post)
    if name == "exponential":
        return family.loo_log_predictive(Z, y, w, post)
    M = missing.mask(Z)
    if M is not None and sparse.is_sparse(M):
        M = M.toarray()
    O = np.ones(Z.shape, dtype=np.float64) if M is None else (~M).astype(np.float64)
    X = Z if M is None else np.where(M, 0.0, Z)
    we = w[:, None] * O  # weight removed from each observed entry
    if name == "gaussian":
        m, kappa, a, b = (post[key][y] for key in ("m", "kappa", "a", "b"))
        kappa_r = kappa - we
        row = {"m": ((kappa * m - we * X) / kappa_r)[:, None, :],
               "kappa": kappa_r[:, None, :], "a": (a - we / 2.0)[:, None, :],
               "b": (b - we * kappa / (2.0 * kappa_r) * (X - m) ** 2)[:, None, :]}
        return family.log_predictive(Z, row)[:, 0]
    if name == "bernoulli":
        a = post["a"][y] - we * X
        b = post["b"][y] - we * (1.0 - X)
        terms = np.where(X > 0, np.log(a), np.log(b)) - np.log(a + b)
    elif name == "poisson":
        a = post["a"][y] - we * X
        b = post["b"][y] - we
        from bayesgen.families import dirichlet as dr

        terms = dr.log_rising(a, X) - gammaln(X + 1.0) - a * np.log1p(1.0 / b) - X * np.log1p(b)
    elif name == "categorical":
        from bayesgen.data import categories as cats

        conc = post["concentration"][y]  # (n, d, Cmax)
        codes = cats.encode(Z, family.categories_, "CategoricalNB")  # NaN: code 0
        hit = np.take_along_axis(conc, codes[..., None], axis=-1)[..., 0]
        terms = np.log(hit - we) - np.log(conc.sum(axis=-1) - we)
    else:
        raise ValueError(f"The {name!r} family has no exact leave-one-out predictive.")
    return np.where(O > 0, terms, 0.0).sum(axis=1)


def _multinomial(family, X, y: np.ndarray, w: np.ndarray, post: dict) -> np.ndarray:
    """Dirichlet-multinomial with the row's counts removed from its class, (n,)::

        log T! - sum_j log x_j! + sum_j R(a'_j, x_j) - R(A', T),  a' = a_y - w x
    """
    from bayesgen.families import dirichlet as dr

    conc = post["concentration"]
    total = sparse.row_sum(X)
    A = conc.sum(axis=1)[y] - w * total
    if sparse.is_sparse(X):
        coo = X.tocoo()
        a = conc[y[coo.row], coo.col] - w[coo.row] * coo.data
        rising = np.bincount(coo.row, weights=dr.log_rising(a, coo.data), minlength=X.shape[0])
    else:
        rising = dr.log_rising(conc[y] - w[:, None] * X, X).sum(axis=1)
    return rising - dr.log_rising(A, total) + family._coefficient(X, total)


def _mvn(family, Z: np.ndarray, y: np.ndarray, w: np.ndarray, post: dict) -> np.ndarray:
    """Multivariate Student-t of the Normal-Inverse-Wishart posterior without row n, by
    the matrix determinant lemma and Sherman-Morrison (module docstring), (n,)."""
    n, d = Z.shape
    m, kappa = post["m"], post["kappa"]
    Psi = post["Psi"] if not family.tied else np.broadcast_to(post["Psi"], (m.shape[0], d, d))
    nu = np.broadcast_to(np.asarray(post["nu"], dtype=np.float64), kappa.shape)
    u = Z - m[y]
    r = np.empty(n)
    logdet = np.empty(kappa.shape)
    for k in range(m.shape[0]):
        L = np.linalg.cholesky(Psi[k])
        logdet[k] = 2.0 * np.log(np.diagonal(L)).sum()
        rows = np.flatnonzero(y == k)
        if rows.size:
            from scipy.linalg import solve_triangular

            v = solve_triangular(L, u[rows].T, lower=True)
            r[rows] = np.einsum("ij,ij->j", v, v)
    kappa_k = kappa[y]
    kappa_r = kappa_k - w
    c = w * kappa_k / kappa_r
    one_minus = 1.0 - c * r  # > 0: Psi' = Psi0 + (its statistics) is positive definite
    df = nu[y] - w - d + 1.0
    logdet_r = logdet[y] + np.log(one_minus)
    quad = (kappa_k / kappa_r) ** 2 * r / one_minus
    log_scale = logdet_r + d * np.log((kappa_r + 1.0) / (kappa_r * df))
    return (gammaln((df + d) / 2.0) - gammaln(df / 2.0) - 0.5 * d * np.log(df * np.pi)
            - 0.5 * log_scale - 0.5 * (df + d) * np.log1p(quad * kappa_r / (kappa_r + 1.0)))
