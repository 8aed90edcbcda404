"""MultinomialNB fitted on rows with missing counts (NaN): EM, data augmentation, NUTS.

The likelihood of a row's observed counts is the multinomial renormalised over the
observed features (:mod:`bayesgen.families.multinomial.family`), so up to a factor free
of theta the observed-data log-likelihood of all rows is::

    l(theta) = sum_kj C_kj log theta_kj - sum_g M_g log p_g,   p_g = sum_{j in O_g} theta_{k_g j}

with C (K, d) the class sums of the observed counts and, per group g = (class k_g,
missingness pattern O_g), M_g the weighted sum of its rows' observed totals
(:func:`group_stats`): the cost grows with the groups, not the rows, and the statistics
stay sums (mergeable).

Exact augmentation: the draws z_n that landed in the missing features are
NegativeBinomial(m_n, p_kO), split over them as a multinomial; as a gamma mixture of
Poissons (u_g ~ Gamma(M_g, 1) per group), the completed missing counts of class k are::

    X_kj ~ Poisson(theta_kj A_kj),   A_kj = sum_{g: k_g = k, j missing in g} u_g / p_g

(exact for real M_g too), and given them theta_k ~ Dirichlet(alpha + completed counts).

- ``mle`` / ``map`` (:func:`em`): EM on l (plus the log Dirichlet density); the E-step is
  C + theta * A with u_g replaced by M_g; stops at ``TOL * max(1, |l|)`` or ``MAX_ITER``.
- ``conjugate`` (:func:`augment`): data augmentation (Tanner & Wong 1987); every chain
  alternates the completed counts given theta (u_g, then X_kj, as above) and theta_k ~
  Dirichlet(alpha + C_k + X_k), whose stationary distribution is the exact posterior of
  theta given the observed counts. An iteration costs O(nnz(missing patterns) x chains x
  K + chains x K x d), whatever the number of rows. The posterior predictive is
  Rao-Blackwellised: the mean of the Dirichlet-multinomial predictives of up to
  :data:`RB_MAX` completed posteriors (evenly spaced retained iterations, spread over
  the chains).
- ``mcmc`` (:func:`stats_loglik`): l as a PyTensor expression of theta."""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.special import gammaln, xlogy

from bayesgen.data import missing
from bayesgen.data import sparse as _sparse
from bayesgen.families import dirichlet as dr
from bayesgen.families.mvn.em import MAX_ITER

#: relative tolerance on EM's per-iteration increase of the objective. Tighter than
#: LDA/QDA's (1e-10): the objective's gap to the optimum is quadratic in the parameter
#: error, so 1e-10 leaves errors of order 1e-5 in theta (measured: 4e-6 on 60 rows),
#: and an iteration here costs only O(G d)
TOL = 1e-13

#: completed conjugate posteriors kept for the Rao-Blackwellised posterior predictive
RB_MAX = 100

#: p_g below this fraction of sum_j theta_kj is recomputed from the observed features
#: (s - q loses relative precision when p is tiny)
_SMALL_P = 1e-6


# ------------------------------------------------------------ statistics
def group_stats(M, totals: np.ndarray, y: np.ndarray, w: np.ndarray) -> dict:
    """The (class, missingness pattern) groups of the rows with w_n > 0 and an observed
    total m_n > 0 (missing indicator ``M`` (n, d), dense or CSR; ``totals`` (n,)): ``missing``
    CSR (G, d) 0/1, ``cls`` (G,) and ``total`` (G,) M_g = sum w_n m_n; complete rows form
    their class's group with an empty pattern."""
    keep = np.flatnonzero((w > 0) & (totals > 0))
    mass = w[keep] * totals[keep]
    if _sparse.is_sparse(M) or keep.size == 0:
        return _dedupe(sparse.csr_matrix(M)[keep], y[keep], mass)
    bits = np.packbits(M[keep], axis=1)
    key = np.concatenate([bits, y[keep, None].astype(np.int64).view(np.uint8)], axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    return {"missing": sparse.csr_matrix(M[keep][first].astype(np.float64)),
            "cls": y[keep][first].astype(np.intp),
            "total": np.bincount(inverse, weights=mass, minlength=first.size)}


def _dedupe(mis, cls: np.ndarray, total: np.ndarray) -> dict:
    """Groups with equal (class, pattern) combined (one pass over the rows of ``mis``)."""
    mis = sparse.csr_matrix(mis)
    mis.sort_indices()
    index: dict = {}
    inverse = np.empty(cls.size, dtype=np.intp)
    for i in range(cls.size):
        key = (int(cls[i]), mis.indices[mis.indptr[i]:mis.indptr[i + 1]].tobytes())
        inverse[i] = index.setdefault(key, len(index))
    first = np.zeros(len(index), dtype=np.intp)
    first[inverse[::-1]] = np.arange(cls.size)[::-1]
    out = mis[first]
    out.data[:] = 1.0
    return {"missing": out, "cls": cls[first].astype(np.intp),
            "total": np.bincount(inverse, weights=total, minlength=first.size)}


def stats(X, y: np.ndarray, w: np.ndarray, n_classes: int, who: str) -> dict:
    """Statistics of training counts with missing entries (dense or sparse X).

    ``count`` (K,), ``feature_count`` C (K, d) (observed counts, NaN as 0),
    ``observed`` (K, d) the weighted number of rows observing each feature, and
    ``groups`` (:func:`group_stats`).
    """
    M = missing.mask(X)
    X0 = missing.filled(X)
    out = missing.with_observed(dr.class_sums(X0, y, w, n_classes, who), M, y, w)
    out["groups"] = group_stats(M, _sparse.row_sum(X0), y, w)
    return out


def _as_groups(stats: dict) -> dict:
    """The groups of complete-data statistics: one complete group per class."""
    if "groups" in stats:
        return stats["groups"]
    total = stats["feature_count"].sum(axis=1)
    has = np.flatnonzero(total > 0)
    d = stats["feature_count"].shape[1]
    return {"missing": sparse.csr_matrix((has.size, d)), "cls": has.astype(np.intp),
            "total": total[has]}


def merge(a: dict, b: dict) -> dict:
    """Statistics of two disjoint batches, either with missing counts: sums, and the
    groups concatenated with equal (class, pattern) keys combined."""
    from bayesgen.families import masked

    ga, gb = _as_groups(a), _as_groups(b)
    out = masked.add_count_stats({k: v for k, v in a.items() if k != "groups"},
                                  {k: v for k, v in b.items() if k != "groups"})
    out["groups"] = _dedupe(sparse.vstack([ga["missing"], gb["missing"]], format="csr"),
                            np.concatenate([ga["cls"], gb["cls"]]),
                            np.concatenate([ga["total"], gb["total"]]))
    return out


# ------------------------------------------------------------- algebra
def observed_mass(groups: dict, theta: np.ndarray) -> np.ndarray:
    """p_g = sum_{j in O_g} theta_{k_g j}, (..., G), for theta (..., K, d)."""
    cls = groups["cls"]
    q = _sparse.matmul_t(groups["missing"], theta)  # (..., G, K)
    q = np.take_along_axis(q, np.broadcast_to(cls[:, None], (*q.shape[:-1], 1)), -1)[..., 0]
    s = theta.sum(axis=-1)[..., cls]
    p = s - q
    small = np.flatnonzero((p < _SMALL_P * s).reshape(-1, cls.size).any(axis=0))
    if small.size:  # exact sums over the observed features where s - q cancels
        seen = 1.0 - groups["missing"][small].toarray()
        p[..., small] = np.einsum("...gd,gd->...g", theta[..., cls[small], :], seen)
    return p


def missing_rate(groups: dict, weights: np.ndarray, n_classes: int) -> np.ndarray:
    """A_kj = sum_{g: k_g = k} weights_g [j missing in g], (..., K, d), for weights
    (..., G)."""
    lead = weights.shape[:-1]
    G = groups["cls"].size
    R = np.zeros((G, int(np.prod(lead, dtype=int)), n_classes))
    R[np.arange(G), :, groups["cls"]] = weights.reshape(-1, G).T
    A = np.asarray(groups["missing"].T @ R.reshape(G, -1))  # (d, S K)
    return np.moveaxis(A.reshape(-1, *lead, n_classes), 0, -1)


def log_likelihood(stats: dict, theta: np.ndarray, p: np.ndarray | None = None) -> np.ndarray:
    """l(theta) (module docstring), (...,) for theta (..., K, d); -inf where an observed
    count has probability 0. ``p``: :func:`observed_mass` at theta, if at hand."""
    groups = stats["groups"]
    p = observed_mass(groups, theta) if p is None else p
    with np.errstate(divide="ignore"):
        return (xlogy(stats["feature_count"], theta).sum(axis=(-2, -1))
                - xlogy(groups["total"], p).sum(axis=-1))


def log_dirichlet_density(theta: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """sum_k log Dirichlet(theta_k; alpha), (...,)."""
    K = theta.shape[-2]
    const = K * (gammaln(alpha.sum()) - gammaln(alpha).sum())
    with np.errstate(divide="ignore"):
        return const + xlogy(alpha - 1.0, theta).sum(axis=(-2, -1))


def expected_counts(stats: dict, theta: np.ndarray) -> np.ndarray:
    """EM's E-step: the expected completed class counts C + theta * A(M / p), (K, d)."""
    groups = stats["groups"]
    r = groups["total"] / observed_mass(groups, theta)
    return stats["feature_count"] + theta * missing_rate(groups, r, theta.shape[-2])


def complete(stats: dict, theta: np.ndarray, p: np.ndarray,
             rng: np.random.Generator) -> np.ndarray:
    """Completed class counts C + X, X_kj ~ Poisson(theta_kj A_kj) with u_g ~
    Gamma(M_g, 1) (module docstring), (..., K, d) for theta (..., K, d) and its
    :func:`observed_mass` p (..., G)."""
    groups = stats["groups"]
    u = rng.standard_gamma(np.broadcast_to(groups["total"], p.shape))
    rate = theta * missing_rate(groups, u / p, theta.shape[-2])
    return stats["feature_count"] + dr.poisson(rate, rng)


def augment(family, stats: dict, prior: dict, *, chains: int, draws: int, tune: int,
            rng: np.random.Generator):
    """Data-augmentation chains (module docstring), started from independent draws of
    Dirichlet(alpha + C) (the observed counts alone), ``tune`` iterations of burn-in,
    every chain advanced in one batched step; ``family`` is unused (the hook's
    signature, as LDA/QDA's).

    Returns
    -------
    params : dict
        ``theta`` (chains * draws, K, d), chain-major.
    post : dict
        ``concentration`` (T, K, d): the completed Dirichlet posteriors kept for the
        Rao-Blackwellised predictive (T <= :data:`RB_MAX`, spread over chains).
    sample_stats : dict
        ``lp`` (chains, draws): observed-data log posterior density (up to a constant),
        checked like NUTS's (R-hat, ESS).
    """
    alpha = prior["alpha"]
    theta = np.exp(dr.log_dirichlet(stats["feature_count"] + alpha, chains, rng))
    total = tune + draws
    kept = np.unique(np.linspace(tune, total - 1, min(RB_MAX, draws)).round().astype(int))
    rb_chain = {int(it): i % chains for i, it in enumerate(kept)}
    out = np.empty((chains, draws, *theta.shape[1:]))
    lp = np.empty((chains, draws))
    stack = []
    for it in range(total):
        p = observed_mass(stats["groups"], theta)  # (chains, G)
        if it >= tune:
            out[:, it - tune] = theta
            lp[:, it - tune] = (log_likelihood(stats, theta, p)
                                + log_dirichlet_density(theta, alpha))
        conc = complete(stats, theta, p, rng) + alpha  # (chains, K, d)
        if it in rb_chain:
            stack.append(conc[rb_chain[it]])
        theta = np.exp(dr.log_dirichlet(conc, 1, rng)[0])
    params = {"theta": out.reshape(chains * draws, *theta.shape[1:])}
    return params, {"concentration": np.stack(stack)}, {"lp": lp}


# ---------------------------------------------------------------- checks
def informative(stats: dict) -> np.ndarray:
    """(K, d) bool: whether some row of class k with a positive observed total observes
    feature j."""
    g = stats["groups"]
    K, d = stats["feature_count"].shape
    out = np.zeros((K, d), dtype=bool)
    for k in range(K):
        rows = g["missing"][g["cls"] == k]
        if rows.shape[0]:
            out[k] = np.asarray(rows.sum(axis=0)).ravel() < rows.shape[0]
    return out


def check_mle(stats: dict, labels, who: str, names=None) -> None:
    """MLE identifiability: ``ValueError`` naming the class (and features) when a class
    has no observed count, a feature is never observed in a class (rows with a positive
    observed total), or a class's features split into sets never observed together."""
    from scipy.sparse.csgraph import connected_components

    from bayesgen.families.gaussian_stats import label

    seen = informative(stats)  # (the connectivity check below visits only the features
    empty = np.flatnonzero(~seen.any(axis=1))  # missing somewhere in a class: O(G_k x gaps))
    if empty.size:
        raise ValueError(
            f"{who} method='mle': class {label(labels, int(empty[0]))} has no observed "
            "count (every row of it has all its counts missing, or observed counts "
            "summing to 0), so its maximum-likelihood estimate is undefined. Use "
            "method='map', 'conjugate' or 'mcmc', which fall back on the prior."
        )
    missing.require_observed(seen.astype(np.float64), labels, who, names=names)
    g = stats["groups"]
    d = seen.shape[1]
    for k in range(seen.shape[0]):
        mis = g["missing"][g["cls"] == k]
        if (np.diff(mis.indptr) == 0).any():  # a complete row: everything connected
            continue
        # features never missing in class k are observed by every row: one node
        gaps = np.unique(mis.indices)
        always = np.setdiff1d(np.arange(d), gaps)
        nodes = np.concatenate([always[:1], gaps])
        seen_k = np.concatenate([np.ones((mis.shape[0], int(always.size > 0))),
                                 1.0 - mis[:, gaps].toarray()], axis=1)
        edges = sparse.csr_matrix(seen_k)  # (G_k, nodes): observed features
        graph = sparse.bmat([[None, edges], [edges.T, None]])
        _, comp = connected_components(graph, directed=False)
        feature_comp = comp[mis.shape[0]:]
        if np.unique(feature_comp).size > 1:
            a = int(nodes[0])
            b = int(nodes[np.flatnonzero(feature_comp != feature_comp[0])[0]])
            raise ValueError(
                f"{who} method='mle': in class {label(labels, k)} features "
                f"{missing.column_name(names, a)} and {missing.column_name(names, b)} "
                "are never linked by rows observing both (directly or through other "
                "features), so the likelihood does not identify their relative "
                f"probabilities (of {d} features). Use method='map', 'conjugate' or "
                "'mcmc', whose prior identifies them."
            )


# -------------------------------------------------------------------- EM
def start(stats: dict) -> np.ndarray:
    """EM's start: theta_kj proportional to (C_kj + 1) / (N_kj + 1), N_kj the weight of
    the rows observing j (per-row rates of the observed counts; strictly positive)."""
    rate = (stats["feature_count"] + 1.0) / (missing.observed_count(stats) + 1.0)
    return rate / rate.sum(axis=1, keepdims=True)


def em(labels, stats: dict, prior: dict | None, who: str) -> dict:
    """EM for ``prior`` None (MLE) or Dirichlet (MAP): ``{"theta": (K, d), "n_iter",
    "em_objective": (n_iter + 1,)}``; stops at ``TOL * max(1, |objective|)``, else after
    ``MAX_ITER`` with a :class:`bayesgen.exceptions.ConvergenceWarning`."""
    from bayesgen.exceptions import ConvergenceWarning, warn

    alpha = None if prior is None else prior["alpha"]

    def objective(theta: np.ndarray) -> float:
        value = log_likelihood(stats, theta)
        if alpha is not None:
            value = value + log_dirichlet_density(theta, alpha)
        return float(value)

    theta = start(stats)
    trace = [objective(theta)]
    n_iter = 0
    while True:
        if n_iter >= MAX_ITER:
            warn(f"{who} EM did not converge in {MAX_ITER} iterations (last change of the "
                 f"objective {trace[-1] - trace[-2]:.3g}); the estimate may be inaccurate. "
                 "Much missing data slows EM; method='conjugate' or 'mcmc' do not depend "
                 "on it.", ConvergenceWarning)
            break
        numer = expected_counts(stats, theta)
        if alpha is not None:
            numer = numer + (alpha - 1.0)
        theta = dr.mode(numer, numer.sum(axis=1, keepdims=True), labels, who)
        trace.append(objective(theta))
        n_iter += 1
        if trace[-1] - trace[-2] <= TOL * max(1.0, abs(trace[-1])):
            break
    return {"theta": theta, "n_iter": np.asarray(n_iter), "em_objective": np.asarray(trace)}


# ----------------------------------------------------------------- PyMC
def stats_loglik(params: dict, stats: dict):
    """l(theta) as a PyTensor scalar: sum C log theta - sum_g M_g log p_g over the
    groups with a missing feature; masks and class indicators enter as float arrays
    (lifted into inputs by the compile-once JAX path). Memory (G, d) per gradient."""
    import pytensor.tensor as pt

    theta = params["theta"]
    value = pt.sum(stats["feature_count"] * pt.log(theta))
    g = _as_groups(stats)
    has = np.flatnonzero(np.diff(g["missing"].indptr) > 0)
    if has.size == 0:
        return value
    seen = 1.0 - g["missing"][has].toarray()
    onehot = np.zeros((has.size, stats["feature_count"].shape[0]))
    onehot[np.arange(has.size), g["cls"][has]] = 1.0
    p = pt.sum(pt.as_tensor(seen) * pt.dot(pt.as_tensor(onehot), theta), axis=1)
    return value - pt.sum(pt.as_tensor(g["total"][has]) * pt.log(p))


def observed_rows(X, who: str):
    """(counts, p-mask) for ``model_``: int64 counts with 0 at the missing entries and
    the float (n, d) indicator of the features the row's multinomial is over (its
    observed ones; all of them for a row with nothing observed, whose total is 0)."""
    dense = np.asarray(_sparse.dense_for_pymc(X, who), dtype=np.float64)
    seen = ~np.isnan(dense)
    seen[~seen.any(axis=1)] = True
    return dr.observed_counts(np.where(np.isnan(dense), 0.0, dense), who), seen.astype(float)


def mean_totals(stats: dict) -> np.ndarray:
    """Per-class mean complete row total with missing counts, (K,): sum_j C_kj / N_kj
    over the features observed in class k (each feature's mean count per row observing
    it: unbiased for missing completely at random)."""
    n = missing.observed_count(stats)
    c = stats["feature_count"]
    return np.where(n > 0, c / np.where(n > 0, n, 1.0), 0.0).sum(axis=1)
