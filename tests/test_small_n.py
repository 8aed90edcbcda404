"""The leave-one-out temperature (bayesgen.estimators.stacking.loo_temperature, used by
the stack's ``loo_`` and the small-n study, validation/small_n.py) against
independent references: a dense grid of the leave-one-out log score, the class prior as
the limit, and refits without each row for the leave-one-out class probabilities."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import log_softmax
from sklearn.base import clone

import bayesgen as bg
from bayesgen.estimators.stacking import TEMPERATURE_MAX as T_MAX
from bayesgen.estimators.stacking import loo_temperature, tempered
from validation.small_n import loo_tempered


def _score(L: np.ndarray, y: np.ndarray, log_prior: np.ndarray, T: float) -> float:
    """sum_n log p_T(y_n | x_n), written out: softmax of (L - log pi) / T + log pi."""
    z = (L - log_prior) / T + log_prior
    z = z - z.max(axis=1, keepdims=True)
    return float(np.sum(z[np.arange(y.size), y] - np.log(np.exp(z).sum(axis=1))))


def _table(rng: np.random.Generator, n: int, K: int, sharpness: float, signal: bool):
    """(L, y, log_prior): leave-one-out class log probabilities of a predictor that is
    confident (``sharpness``) and right (``signal``) or guessing (no signal)."""
    y = rng.integers(0, K, size=n)
    logits = rng.normal(size=(n, K)) * sharpness
    if signal:
        logits[np.arange(n), y] += 2.0 * sharpness
    log_prior = np.log(np.bincount(y, minlength=K) + 1.0)
    log_prior -= np.log(np.exp(log_prior).sum())
    return log_softmax(logits + log_prior, axis=1), y, log_prior


def test_tempered_limits_and_normalisation():
    rng = np.random.default_rng(0)
    L, _, log_prior = _table(rng, 12, 3, 3.0, True)
    np.testing.assert_allclose(tempered(L, log_prior, 1.0), L, atol=1e-12)
    flat = tempered(L, log_prior, 1e12)
    np.testing.assert_allclose(flat, np.broadcast_to(log_prior, L.shape), atol=1e-10)
    half = tempered(L, log_prior, 2.0)
    np.testing.assert_allclose(np.exp(half).sum(axis=1), 1.0, rtol=1e-13)
    # the log-likelihood ratios are halved: differences between classes relative to the prior
    ratio = (half - log_prior) - (half - log_prior)[:, :1]
    np.testing.assert_allclose(ratio, ((L - log_prior) - (L - log_prior)[:, :1]) / 2,
                               atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_loo_temperature_is_the_grid_maximum(seed):
    """Overconfident guesses: T is the maximiser of the leave-one-out score, checked on a
    dense grid of log T (and the score there is at least the grid's best)."""
    rng = np.random.default_rng(seed)
    L, y, log_prior = _table(rng, 40, 3, 4.0, True)
    L[: 8] = L[: 8, ::-1]  # some confident mistakes: flattening pays
    T = loo_temperature(L, y, log_prior)
    grid = np.exp(np.linspace(0.0, np.log(T_MAX), 4001))
    scores = np.array([_score(L, y, log_prior, t) for t in grid])
    assert T > 1.0
    assert _score(L, y, log_prior, T) >= scores.max() - 1e-6
    assert abs(np.log(T) - np.log(grid[np.argmax(scores)])) < 0.01


def test_loo_temperature_no_signal_reaches_the_class_prior():
    rng = np.random.default_rng(3)
    L, y, log_prior = _table(rng, 60, 2, 5.0, False)
    T = loo_temperature(L, y, log_prior)
    assert T > 0.5 * T_MAX  # the search's end: the class prior to 1e-4 of the ratios
    assert _score(L, y, log_prior, T) >= _score(L, y, log_prior, 1.0)


def test_loo_temperature_never_sharpens():
    """A predictor that is right but underconfident would gain from T < 1: T stays 1
    (only flattening is allowed), and the score is the untempered one."""
    rng = np.random.default_rng(4)
    L, y, log_prior = _table(rng, 50, 3, 0.3, True)
    assert _score(L, y, log_prior, 0.5) > _score(L, y, log_prior, 1.0)  # sharper pays
    assert loo_temperature(L, y, log_prior) == 1.0


def test_loo_tempered_equals_refits_without_each_row():
    """loo_tempered's leave-one-out terms and T from the exact leave-one-out equal
    those from refitting without each row (a default prior that reads the data), each
    refit tempered around its own class prior."""
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1, 2], 6)
    X = rng.normal(size=(18, 3)) + y[:, None] * 0.8
    X_test = rng.normal(size=(7, 3))
    est = bg.LDA(method="conjugate", draws=10, chains=1).fit(X, y)
    loo, test, T = loo_tempered(est, X, y, X_test)
    refits, priors = np.empty((18, 3)), np.empty((18, 3))
    for i in range(18):
        keep = np.arange(18) != i
        refit = clone(est).fit(X[keep], y[keep])
        refits[i] = refit.predict_log_proba(X[i:i + 1])[0]
        priors[i] = np.log((np.bincount(y[keep]) + 1.0) / (17 + 3))  # class_alpha 1
    T_ref = loo_temperature(refits, y, priors)
    assert T > 1.0
    assert T == pytest.approx(T_ref, rel=1e-6)
    np.testing.assert_allclose(loo, tempered(refits, priors, T_ref)[np.arange(18), y],
                               rtol=1e-7)
    np.testing.assert_allclose(
        test, tempered(est.predict_log_proba(X_test), np.log((np.bincount(y) + 1.0) / 21), T),
        rtol=1e-12)
