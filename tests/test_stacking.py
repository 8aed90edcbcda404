"""StackedClassifier: the stacking weights' optimality and the stacked probabilities."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.datasets import load_digits

import bayesgen as bg
from bayesgen.estimators.stacking import default_estimators, stacking_weights


def test_stacking_weights_satisfy_the_optimality_conditions():
    """At the maximum of sum_n w_n log sum_m a_m p_nm over the simplex,
    g_m = sum_n w_n p_nm / sum_j a_j p_nj equals sum_n w_n where a_m > 0 and is at
    most that where a_m = 0 (Karush-Kuhn-Tucker)."""
    rng = np.random.default_rng(3)
    L = np.log(rng.dirichlet(np.ones(4), size=200))[:, :3]  # (200, 3) log probabilities
    L[:, 2] -= 3.0  # a member worse everywhere: weight 0
    w = rng.uniform(0.5, 2.0, size=200)
    a = stacking_weights(L, w)
    assert a.sum() == pytest.approx(1.0) and np.all(a >= 0)
    assert a[2] == 0.0
    g = w @ (np.exp(L) / (np.exp(L) @ a)[:, None])
    np.testing.assert_allclose(g[a > 0], w.sum(), rtol=1e-6)
    assert np.all(g[a == 0] <= w.sum() * (1 + 1e-6))


def test_predict_proba_rows_sum_to_one_and_never_exceed_one():
    """Digits, 20 training rows per class (the prior study's second split): the
    log-sum-exp of the members' weighted log probabilities exponentiated gave 1 + 4e-16,
    which scikit-learn's log_loss rejects."""
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    for _ in range(2):
        train = np.concatenate([rng.choice(np.flatnonzero(y == k), 20, replace=False)
                                for k in range(10)])
    test = np.setdiff1d(np.arange(y.size), train)
    fast = {"draws": 50, "chains": 1, "random_state": 1, "progressbar": False}
    clf = bg.StackedClassifier([(name, est.set_params(**fast))
                                for name, est in default_estimators()])
    clf.fit(X[train], y[train])
    proba = clf.predict_proba(X[test])
    assert proba.max() <= 1.0 and proba.min() >= 0.0
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    log_proba = clf.predict_log_proba(X[test])
    assert log_proba.max() <= 0.0
    np.testing.assert_allclose(logsumexp(log_proba, axis=1), 0.0, atol=1e-14)
    # the mixture of the members' class probabilities, up to rounding
    mixture = sum(a * est.predict_proba(X[test])
                  for a, est in zip(clf.weights_, clf.estimators_, strict=True))
    np.testing.assert_allclose(proba, mixture, rtol=1e-10, atol=1e-15)
