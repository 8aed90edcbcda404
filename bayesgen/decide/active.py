r"""Active learning: which unlabelled rows to label next.

Acquisition scores (higher: label first) of pool rows x under a fitted classifier:

- ``"bald"`` (Bayesian active learning by disagreement, Houlsby et al. 2011): the
  mutual information I(y; theta | x, D) between the row's label and the parameters,
  the epistemic part of :mod:`bayesgen.decide.uncertainty`; large where the posterior
  draws disagree, i.e. where a label would teach the model most. Needs a posterior.
- ``"entropy"``: the total predictive entropy H[y | x, D] (uncertainty sampling);
- ``"margin"``: minus the gap between the two largest class probabilities;
- ``"random"``: uniform scores (the baseline).

Entropy and margin work for every method (point methods use the plug-in
probabilities); they cannot tell noise (aleatoric: a label would not help) from
ignorance (epistemic), which BALD can.

Batch selection (:func:`select_queries`) is greedy with a diversity rule: walk the pool
in decreasing score and take a row unless it lies within ``min_distance`` of a row
already taken, in the pool's standardised feature space (each column centred and
divided by its standard deviation over the pool; missing entries at the centre).
BALD's top rows are often near-duplicates (the same unexplored region), whose labels
teach the same thing; the radius keeps one of each cluster. When fewer than
``n_queries`` rows are far enough apart, the best skipped rows fill the batch.
``min_distance="auto"`` is a tenth of the median distance between pool rows (from at
most 1,000 sampled rows); 0 disables the rule (plain top-n).

The labelling loop: ``idx = select_queries(clf, X_pool, n)``, obtain ``y`` for
``X_pool[idx]``, ``clf.partial_fit(X_pool[idx], y)``, drop the rows from the pool;
every estimator and method supports it. The rows left unlabelled can also enter a
semi-supervised fit (labels ``None``/NaN) of any estimator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesgen.data import sparse
from bayesgen.decide.uncertainty import decompose_rows, entropy, predictive_proba
from bayesgen.utils.random import rng_from

STRATEGIES = ("bald", "entropy", "margin", "random")
#: pool rows sampled for the standardisation and the automatic radius
_SAMPLE_ROWS = 1000


#: posterior draws BALD uses by default (evenly spaced): enough to rank a pool
BALD_DRAWS = 500


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
    return _scores(estimator, estimator._check_X_predict(X_pool), strategy, max_draws,
                   random_state)


def _scores(estimator, Xv: Any, strategy: str, max_draws: int | None,
            random_state: Any) -> np.ndarray:
    """:func:`acquisition_scores` of validated rows."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {list(STRATEGIES)}; got {strategy!r}.")
    if strategy == "bald":
        return decompose_rows(estimator, Xv, max_draws).epistemic
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
                   random_state: Any = None) -> np.ndarray:
    """Indices of the pool rows to label next, best first, without near-duplicates.

    Parameters
    ----------
    estimator : fitted bayesgen classifier
    X_pool : array-like, sparse matrix or DataFrame of shape (n, d)
    n_queries : int, default=1
        Batch size (at most n).
    strategy : {"bald", "entropy", "margin", "random"}, default="bald"
    min_distance : float or "auto", default="auto"
        Radius of the diversity rule in standardised units (see
        :mod:`bayesgen.decide.active`); 0 takes the top ``n_queries`` scores.
    max_draws : int or None, default=500
        BALD: at most this many posterior draws (None: all).
    random_state : int, Generator or None
        For ``"random"``, ties and the rows sampled for ``"auto"``.

    Returns
    -------
    ndarray of int, shape (n_queries,)
        Row positions in ``X_pool``.
    """
    rng = rng_from(random_state)
    table = estimator._check_X_predict(X_pool)  # validated, numeric (categories encoded)
    scores = _scores(estimator, table, strategy, max_draws, rng)
    n = scores.size
    if int(n_queries) != n_queries or not 1 <= n_queries <= n:
        raise ValueError(f"n_queries must be an integer in [1, {n}] (the pool's rows); "
                         f"got {n_queries!r}.")
    n_queries = int(n_queries)
    # decreasing score, ties broken at random (a tied pool is not taken in row order)
    order = np.lexsort((rng.uniform(size=n), -scores))
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
