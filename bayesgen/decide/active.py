r"""Active learning: which unlabeled rows to label next.

Acquisition scores (higher: label first) of pool rows x under a fitted classifier:

- ``"bald"`` (Houlsby et al. 2011): the mutual information I(y; theta | x, D), the
  epistemic part of :mod:`bayesgen.decide.uncertainty`. Needs a posterior. Pools are
  ranked with the fit's draws weighted by p(x | theta_s) (one pass over the draws for
  the whole pool), also for a conjugate fit.
- ``"entropy"``: the total predictive entropy H[y | x, D] (uncertainty sampling);
- ``"margin"``: minus the gap between the two largest class probabilities;
- ``"random"``: uniform scores (the baseline).

Entropy and margin work for every method (point methods use the plug-in
probabilities); they cannot tell noise from ignorance, which BALD can.

Batch selection (:func:`select_queries`):

- a greedy diversity rule, for every strategy: walk the pool in decreasing score and
  take a row unless it lies within ``min_distance`` of a row already taken, in the
  pool's standardised feature space (missing entries at the centre); the best skipped
  rows fill the batch when too few are far enough apart. ``"auto"``: a tenth of the
  median distance between pool rows (from at most 1,000 sampled rows); 0 disables it.
- ``strategy="batchbald"`` (Kirsch, van Amersfoort and Gal 2019): greedy step i adds
  the pool row x that maximises

  .. math::

      I(y_1..y_{i-1}, y; \theta \mid x_1..x_{i-1}, x, D)
        = H[y_1..y_{i-1}, y] - E_{\theta} \textstyle\sum_j H[y_j \mid x_j, \theta],

  over the draws weighted by w_s ∝ p(x_1 | theta_s) ... p(x_{i-1} | theta_s)
  p(x | theta_s) (the first pick is BALD's best row). The second term is exact; the
  joint entropy needs p(c, y) = sum_s w_s P_s(c) p(y | x, theta_s), P_s(c) =
  prod_j p(c_j | x_j, theta_s), summed over the K^i label configurations c while
  K^(i+1) <= ``n_configurations``, else estimated without bias from
  ceil(``n_configurations`` / S) configurations sampled from each draw's P_s:

  .. math::

      H \approx \textstyle\sum_s w_s \, \mathrm{mean}_{m: s(m)=s}
          \sum_y p(y \mid x, \theta_s) \, (-\log p(c_m, y)).

  One step costs O(pool x S x K x C); the pool's per-draw densities are kept between
  steps up to about 3 x :data:`bayesgen.inference.posterior.CHUNK_BUDGET` doubles.
  With few labels the self-normalised weights concentrate on a few draws and the
  batch can be worse than BALD's top rows (``validation/results_active_learning.md``).

The labeling loop: ``idx = select_queries(clf, X_pool, n)``, label ``X_pool[idx]``,
``clf.partial_fit(X_pool[idx], y)``, drop the rows from the pool.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import entr

from bayesgen.data import sparse
from bayesgen.decide.uncertainty import (
    _draw_indices,
    _weights,
    decompose_rows,
    draw_terms,
    entropy,
    predictive_proba,
)
from bayesgen.inference import posterior, scoring, statistics
from bayesgen.utils.random import rng_from

#: per-row acquisition scores (:func:`acquisition_scores`)
STRATEGIES = ("bald", "entropy", "margin", "random")
#: batch strategies of :func:`select_queries` without per-row scores
BATCH_STRATEGIES = ("batchbald",)
#: pool rows sampled for the standardisation and the automatic radius
_SAMPLE_ROWS = 1000


#: posterior draws BALD uses by default (evenly spaced): enough to rank a pool
BALD_DRAWS = 500
#: BatchBALD: label configurations summed exactly up to this many, else sampled
N_CONFIGURATIONS = 1000
#: BatchBALD keeps the pool's per-draw terms between greedy steps up to this many doubles
_CACHE_BUDGET = 3 * posterior.CHUNK_BUDGET
_TINY = np.finfo(float).tiny


def acquisition_scores(estimator, X_pool: Any, strategy: str = "bald", *,
                       max_draws: int | None = BALD_DRAWS,
                       random_state: Any = None) -> np.ndarray:
    """Acquisition score of every pool row, (n,); higher means label first.

    Parameters
    ----------
    estimator : fitted bayesgen classifier
        ``"bald"`` needs a posterior (``method="conjugate"`` or ``"mcmc"``; else
        ``ValueError``); the other strategies take any fit.
    X_pool : array-like, sparse matrix or DataFrame of shape (n, d)
    strategy : {"bald", "entropy", "margin", "random"}, default="bald"
        See :mod:`bayesgen.decide.active`.
    max_draws : int or None, default=500
        BALD: use at most this many posterior draws, evenly spaced (cost is linear in
        them; the ranking of a pool needs fewer draws than a precise value); None: all.
    random_state : int, Generator or None
        ``"random"`` only.

    Returns
    -------
    ndarray of shape (n,)
        Mutual information (nats), entropy (nats), minus the margin, or uniform draws.
    """
    return _scores(estimator, statistics.validate_predict(estimator, X_pool), strategy, max_draws,
                   random_state)


def _scores(estimator, Xv: Any, strategy: str, max_draws: int | None,
            random_state: Any) -> np.ndarray:
    """:func:`acquisition_scores` of validated rows."""
    if strategy in BATCH_STRATEGIES:
        raise ValueError(f"strategy={strategy!r} scores a batch, not single rows: use "
                         f"select_queries(..., strategy={strategy!r}).")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {list(STRATEGIES)}; got {strategy!r}.")
    if strategy == "bald":
        return decompose_rows(estimator, Xv, max_draws, exact=False, warn_ess=False).epistemic
    if strategy == "random":
        return rng_from(random_state).uniform(size=Xv.shape[0])
    proba = predictive_proba(estimator, Xv)
    if strategy == "entropy":
        return entropy(proba)
    top = np.sort(proba, axis=1)[:, -2:]
    return top[:, 0] - top[:, 1]


def _standardised(rows: Any, centre: np.ndarray, scale: np.ndarray) -> np.ndarray:
    dense = np.asarray(rows.toarray() if sparse.is_sparse(rows) else rows, dtype=float)
    return np.nan_to_num((dense - centre) / scale, nan=0.0, posinf=0.0, neginf=0.0)


def select_queries(estimator, X_pool: Any, n_queries: int = 1, strategy: str = "bald", *,
                   min_distance: float | str = "auto", max_draws: int | None = BALD_DRAWS,
                   n_configurations: int = N_CONFIGURATIONS,
                   random_state: Any = None) -> np.ndarray:
    """Indices of the pool rows to label next, best first, without near-duplicates.

    Parameters
    ----------
    estimator : fitted bayesgen classifier
        ``"bald"`` and ``"batchbald"`` need a posterior (``method="conjugate"`` or
        ``"mcmc"``; else ``ValueError``).
    X_pool : array-like, sparse matrix or DataFrame of shape (n, d)
    n_queries : int, default=1
        Batch size (at most n).
    strategy : {"bald", "entropy", "margin", "random", "batchbald"}, default="bald"
        The first four rank rows by :func:`acquisition_scores` and apply the
        ``min_distance`` rule; ``"batchbald"`` greedily maximises the joint mutual
        information of the batch's labels and the parameters (see
        :mod:`bayesgen.decide.active`); with ``n_queries=1`` it picks BALD's best row.
    min_distance : float or "auto", default="auto"
        Radius of the diversity rule in standardised units (see
        :mod:`bayesgen.decide.active`); 0 takes the top ``n_queries`` scores. Not used
        by ``"batchbald"``.
    max_draws : int or None, default=500
        BALD and BatchBALD: at most this many posterior draws, evenly spaced (None: all).
    n_configurations : int, default=1000
        BatchBALD: the joint entropy sums exactly over the K^i label configurations of
        the rows chosen so far while K^(i+1) <= ``n_configurations``, else estimates it
        from this many sampled configurations. Cost is linear in it.
    random_state : int, Generator or None
        For ``"random"``, ties, the rows sampled for ``"auto"`` and BatchBALD's
        sampled configurations.

    Returns
    -------
    ndarray of int, shape (n_queries,)
        Row positions in ``X_pool``.
    """
    rng = rng_from(random_state)
    table = statistics.validate_predict(estimator, X_pool)  # numeric (categories encoded)
    batch = strategy in BATCH_STRATEGIES
    if batch:
        posterior.check_posterior(estimator, f"select_queries(strategy={strategy!r})")
    scores = _scores(estimator, table, "bald" if batch else strategy, max_draws, rng)
    n = scores.size
    n_queries = _check_n_queries(n_queries, n)
    # decreasing score, ties broken at random (a tied pool is not taken in row order)
    order = np.lexsort((rng.uniform(size=n), -scores))
    if batch:
        return batchbald(estimator, table, n_queries, scores, order, max_draws=max_draws,
                         n_configurations=n_configurations, rng=rng)[0]
    if min_distance == 0 or n_queries == 1:
        return order[:n_queries]
    sample = rng.choice(n, size=min(n, _SAMPLE_ROWS), replace=False)
    block = table[sample]
    block = np.asarray(block.toarray() if sparse.is_sparse(block) else block, dtype=float)
    centre = np.nan_to_num(np.nanmean(block, axis=0))
    scale = np.nan_to_num(np.nanstd(block, axis=0))
    scale[scale <= 0] = 1.0
    if min_distance == "auto":
        Z = _standardised(block, centre, scale)
        i, j = rng.integers(0, Z.shape[0], size=(2, 2000))
        distances = np.linalg.norm(Z[i] - Z[j], axis=1)
        positive = distances[distances > 0]
        min_distance = 0.1 * float(np.median(positive)) if positive.size else 0.0
    elif not (np.isscalar(min_distance) and np.isfinite(min_distance) and min_distance >= 0):
        raise ValueError(f"min_distance must be a number >= 0 or 'auto'; got {min_distance!r}.")
    chosen: list[int] = []
    skipped: list[int] = []
    taken = np.empty((0, table.shape[1]))
    step = max(4 * n_queries, 64)
    for start in range(0, n, step):  # candidates in blocks, best first
        block_idx = order[start:start + step]
        Z = _standardised(table[block_idx], centre, scale)
        for r, row in zip(block_idx, Z, strict=True):
            if taken.shape[0] and np.min(np.linalg.norm(taken - row, axis=1)) < min_distance:
                skipped.append(int(r))
                continue
            chosen.append(int(r))
            taken = np.vstack([taken, row])
            if len(chosen) == n_queries:
                return np.asarray(chosen)
    return np.asarray(chosen + skipped[: n_queries - len(chosen)])


def _check_n_queries(n_queries: Any, n: int) -> int:
    """``n_queries`` as an int in [1, n] (the pool's rows), else ``ValueError``."""
    if int(n_queries) != n_queries or not 1 <= n_queries <= n:
        raise ValueError(f"n_queries must be an integer in [1, {n}] (the pool's rows); "
                         f"got {n_queries!r}.")
    return int(n_queries)

def _pool_terms(estimator, Xv: Any, draws: np.ndarray | None, log_pi: np.ndarray):
    """Yield ``(rows, p (K, S, m), H (S, m), log_w (S, m))`` chunk by chunk (see
    :func:`bayesgen.decide.uncertainty.draw_terms`): p the per-draw class probabilities."""
    for rows, lj in scoring.iter_log_joint_draws(estimator.fitted_, Xv, draws):
        with np.errstate(divide="ignore", invalid="ignore"):
            E, Z, H, log_w = draw_terms(lj, log_pi)
        E /= Z
        yield rows, E, H, log_w


def batchbald(estimator, Xv: Any, n_queries: int, first_scores: np.ndarray | None = None,
              order: np.ndarray | None = None, *, max_draws: int | None = BALD_DRAWS,
              n_configurations: int = N_CONFIGURATIONS, rng: Any = None
              ) -> tuple[np.ndarray, np.ndarray]:
    r"""Greedy BatchBALD batch of validated pool rows, and its joint mutual information.

    Parameters
    ----------
    estimator : fitted bayesgen classifier with a posterior
    Xv : ndarray or sparse matrix of shape (n, d)
        Pool rows validated by :func:`bayesgen.inference.statistics.validate_predict`.
    n_queries : int
        Batch size b, 1 <= b <= n.
    first_scores : ndarray of shape (n,), optional
        BALD scores of the pool (the first pick and the first value of the trace);
        computed when None.
    order : ndarray of int, shape (n,), optional
        The pool in decreasing ``first_scores`` with ties broken (ties of later steps
        go to the row earlier in it); ``argsort(-first_scores)`` (stable) when None.
    max_draws : int or None, default=500
        At most this many posterior draws, evenly spaced (None: all).
    n_configurations : int, default=1000
        Exact joint entropy while K^i <= this, else this many sampled configurations.
    rng : int, Generator or None
        Draws the sampled configurations.

    Returns
    -------
    indices : ndarray of int, shape (b,)
        Pool rows in the order chosen.
    mutual_information : ndarray of shape (b,)
        I(y_1..y_i; theta | x_1..x_i, D) of the first i chosen rows, nats (entry 0 is
        BALD's score of the first row; later entries carry the Monte Carlo error of
        the draws and, once sampled, of the configurations). Formulas in
        :mod:`bayesgen.decide.active`.
    """
    posterior.check_posterior(estimator, "BatchBALD")
    rng = rng_from(rng, "random_state")
    if int(n_configurations) != n_configurations or n_configurations < 1:
        raise ValueError(f"n_configurations must be a positive integer; got "
                         f"{n_configurations!r}.")
    M = int(n_configurations)
    if first_scores is None:
        first_scores = decompose_rows(estimator, Xv, max_draws, exact=False,
                                      warn_ess=False).epistemic
    n = first_scores.size
    _check_n_queries(n_queries, n)
    if order is None:
        order = np.argsort(-first_scores, kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    draws = _draw_indices(estimator, max_draws)
    log_pi = estimator.fitted_.log_pi_draws
    log_pi = log_pi if draws is None else log_pi[draws]
    S, K = log_pi.shape
    per = -(-M // S)  # sampled configurations per draw (at least one)
    cache = list(_pool_terms(estimator, Xv, draws, log_pi)) \
        if S * n * (K + 2) <= _CACHE_BUDGET else None

    def row_terms(i: int):
        _, p, H, log_w = next(_pool_terms(estimator, Xv[i:i + 1], draws, log_pi))
        return p[:, :, 0].T, H[:, 0], log_w[:, 0]  # (S, K), (S,), (S,)

    chosen, trace = [int(order[0])], [float(first_scores[order[0]])]
    p_rows, H_batch, logw_batch = [], np.zeros(S), np.zeros(S)
    for step in range(1, int(n_queries) + 1):
        p_new, H_new, logw_new = row_terms(chosen[-1])
        p_rows.append(p_new)
        H_batch += H_new
        logw_batch += logw_new
        if step == n_queries:
            break
        if K ** (step + 1) <= M:  # every configuration of the chosen labels
            P = np.ones((S, 1))
            for p_j in p_rows:
                P = (P[:, :, None] * p_j[:, None, :]).reshape(S, -1)
            origin = L_max = None
        else:  # `per` configurations sampled from each draw's P_s
            origin = np.repeat(np.arange(S), per)  # s(m)
            L = np.zeros((S, origin.size))
            with np.errstate(divide="ignore"):
                for p_j in p_rows:
                    cdf = np.cumsum(p_j[origin], axis=1)
                    u = rng.uniform(size=(origin.size, 1)) * cdf[:, -1:]
                    L += np.log(p_j[:, np.minimum((u > cdf).sum(axis=1), K - 1)])
            L_max = L.max(axis=0)
            L_max = np.where(np.isfinite(L_max), L_max, 0.0)
            P = np.exp(L - L_max)  # P_s(c_m) / exp(L_max_m)
        C = P.shape[1]
        gain = np.full(n, -np.inf)
        step_rows = max(1, posterior.CHUNK_BUDGET // (3 * C * K + 2 * S * K))
        for rows, p, H, log_w in (cache if cache is not None
                                  else _pool_terms(estimator, Xv, draws, log_pi)):
            index = np.arange(n)[rows]
            for a in range(0, index.size, step_rows):
                part = slice(a, a + step_rows)
                m = index[part].size
                w = _weights(logw_batch[:, None] + log_w[:, part])  # (S, m)
                A = np.ascontiguousarray(np.swapaxes(p[:, :, part] * w, 0, 1))  # (S,K,m)
                joint = (P.T @ A.reshape(S, K * m)).reshape(C, K, m)  # p(c, y) per row
                if origin is None:
                    H_joint = entr(joint).sum(axis=(0, 1))
                else:  # sum_s w_s mean_{m: s(m)=s} sum_y p_s(y | x) (-log p(c_m, y))
                    log_joint = np.log(np.maximum(joint, _TINY)).reshape(S, per, K, m)
                    log_joint += L_max.reshape(S, per)[:, :, None, None]
                    log_joint *= A[:, None]  # A = w_s p_s(y | x)
                    H_joint = -log_joint.sum(axis=(0, 1, 2)) / per
                conditional = (w * (H_batch[:, None] + H[:, part])).sum(axis=0)
                gain[index[part]] = H_joint - conditional
        gain[np.isnan(gain)] = -np.inf
        gain[chosen] = -np.inf
        best = np.flatnonzero(gain == gain.max())
        chosen.append(int(best[np.argmin(rank[best])]))
        trace.append(float(gain[chosen[-1]]))
    return np.asarray(chosen), np.asarray(trace)
