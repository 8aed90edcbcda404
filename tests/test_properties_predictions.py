"""Property-based tests (Hypothesis) of the predictions: probabilities well formed,
predict the Bayes decision (with and without a loss), scores consistent with
predict_log_proba. See tests/test_properties.py for the data sets, profiles and
tolerances.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import logsumexp

from tests.property_checks import _cases, _discrete_mle, _points, assert_log_close
from tests.strategies import data_sets

# an MLE zero for every class: documented fallback to the class prior, with this warning
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*zero likelihood under every class:bayesgen.DataWarning"
)


# ----------------------------------------------------------------- predictions
@pytest.mark.parametrize("case", _cases())
@given(data=st.data())
def test_probabilities_are_well_formed(case, data):
    """classes_ sorted; probabilities finite, in [0, 1], rows sum to 1 (1e-12);
    predict_log_proba is their log and finite (-inf only for an MLE zero)."""
    ds = data.draw(data_sets(*case), label="data set")
    clf = ds.fit()
    assert clf.classes_.tolist() == sorted(ds.labels)
    X = _points(ds)
    proba, log_proba = clf.predict_proba(X), clf.predict_log_proba(X)
    assert proba.shape == log_proba.shape == (X.shape[0], len(ds.labels))
    assert np.all(np.isfinite(proba)) and np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert not np.any(np.isnan(log_proba)) and np.all(log_proba <= 0)
    if not _discrete_mle(ds):
        assert np.all(np.isfinite(log_proba)), "predict_log_proba has -inf"
    # below float64's smallest normal number (2.2e-308) a value keeps fewer than 52
    # significant bits, so exp(log p) and p can differ there by more than 1e-12 relative
    np.testing.assert_allclose(np.exp(log_proba), proba, rtol=1e-12,
                               atol=np.finfo(np.float64).tiny)


@st.composite
def loss_matrices(draw, n: int) -> np.ndarray:
    """K x K costs >= 0 with a zero diagonal (integers, so ties happen too)."""
    values = draw(st.lists(st.integers(0, 9), min_size=n * n, max_size=n * n))
    loss = np.array(values, dtype=float).reshape(n, n)
    np.fill_diagonal(loss, 0.0)
    return loss


@pytest.mark.parametrize("case", _cases())
@given(data=st.data())
def test_predict_is_the_bayes_decision(case, data):
    """predict = classes_[argmax predict_proba]; with loss, classes_[argmin proba @ loss]."""
    ds = data.draw(data_sets(*case), label="data set")
    X = _points(ds)
    clf = ds.fit()
    assert clf.predict(X).tolist() == clf.classes_[np.argmax(clf.predict_proba(X), 1)].tolist()
    loss = data.draw(loss_matrices(len(ds.labels)), label="loss")
    costly = ds.estimator(loss=loss).fit(ds.X, ds.y)
    expected = costly.classes_[np.argmin(costly.predict_proba(X) @ loss, axis=1)]
    assert costly.predict(X).tolist() == expected.tolist()


def _normalised(scores: np.ndarray) -> np.ndarray:
    return scores - logsumexp(scores, axis=1, keepdims=True)


@pytest.mark.parametrize("case", _cases())
@given(data=st.data())
def test_scores_are_consistent(case, data):
    """predict_joint_log_proba and decision_function normalise (log-sum-exp) to
    predict_log_proba (1e-10 relative to the size of the scores); for two classes
    decision_function = log p1 - log p0. A row impossible under every class (an MLE
    zero) gets the class prior, and no score is NaN."""
    ds = data.draw(data_sets(*case), label="data set")
    clf = ds.fit()
    X = _points(ds)
    log_proba = clf.predict_log_proba(X)
    joint = clf.predict_joint_log_proba(X)
    decision = clf.decision_function(X)
    assert joint.shape == log_proba.shape
    assert not np.any(np.isnan(joint)), "predict_joint_log_proba has NaN"
    assert not np.any(np.isnan(decision)), "decision_function has NaN"
    possible = ~np.all(np.isneginf(joint), axis=1)
    prior = np.log(clf.class_prior_) - logsumexp(np.log(clf.class_prior_))
    np.testing.assert_allclose(log_proba[~possible], np.broadcast_to(prior, log_proba.shape)[
        ~possible], rtol=1e-12, err_msg="rows impossible under every class")
    size = np.abs(np.where(np.isfinite(joint), joint, 0.0)).max(axis=1, keepdims=True)
    tol = 1e-10 * max(1.0, size.max())  # rounding of the scores, not of log p
    assert_log_close(_normalised(joint[possible]), log_proba[possible], tol, "normalised joint")
    # LDA's documented discriminant x' P mu_k - mu_k' P mu_k / 2 + log pi_k in user units
    # carries a term equal across classes that grows with the offset of X (as
    # scikit-learn's X @ coef_.T + intercept_): its rounding is relative to its own size
    finite = np.abs(np.where(np.isfinite(decision), decision, 0.0))
    tol_decision = 1e-10 * max(1.0, size.max(), finite.max(initial=0.0))
    if len(ds.labels) == 2:
        assert decision.shape == (X.shape[0],)
        ok = np.all(np.isfinite(log_proba), axis=1)
        np.testing.assert_allclose(decision[ok], (log_proba[:, 1] - log_proba[:, 0])[ok],
                                   rtol=1e-10, atol=tol, err_msg="decision_function")
    else:
        assert decision.shape == log_proba.shape
        assert_log_close(_normalised(decision[possible]), log_proba[possible], tol_decision,
                         "normalised decision_function")
