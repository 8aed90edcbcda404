"""scikit-learn's own estimator checks (`parametrize_with_checks`) on every estimator,
with ``method="map"`` and ``method="conjugate"`` (KernelNB has no conjugate prior: its
posterior is sampled by NUTS only), ``StackedClassifier`` at its defaults, and a short
``method="mcmc"`` run on GaussianNB.

Every expected failure names the reason scikit-learn's check cannot apply (a check that
does not apply the input tags the estimator declares, or a tag that cannot express the
estimator's contract), and a test beside it checks what the check means on data the
estimator accepts. The posterior fits use few draws (the checks test the API, not the
posterior): each check is its own test item. The short NUTS run is marked ``slow``
(compilation per data shape dominates it).

The checks are in three files, so that pytest-xdist (``--dist loadfile``) runs them on
different workers: this one (``method="map"``, the stacks, and the tests of what the
expected failures mean), ``test_estimator_checks_conjugate.py`` and
``test_estimator_checks_mcmc.py``; what they run on is in ``tests/sklearn_checks.py``.
"""

import warnings

import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.datasets import make_blobs
from sklearn.utils.estimator_checks import check_classifiers_train, parametrize_with_checks

import bayesgen as bg
from bayesgen.estimators.stacking import default_estimators
from tests.sklearn_checks import (
    ALL,
    SUPPORT_LIMITED,
    _checked_stacks,
    _expected_failures,
    _instances,
    _make,
    _map_instances,
    _stacks,
)


def test_every_public_estimator_is_checked():
    """The checks above cover every estimator class that ``bayesgen`` exports."""
    from sklearn.base import BaseEstimator

    exported = {name for name in bg.__all__ if isinstance(getattr(bg, name), type)
                and issubclass(getattr(bg, name), BaseEstimator)}
    checked = {type(est).__name__ for est in _instances()}
    assert exported == checked



@parametrize_with_checks(_map_instances() + _checked_stacks(),
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_default_stack_passes_check_classifiers_train():
    """scikit-learn's check_classifiers_train (fit, predict, predict_proba,
    decision_function, their shapes and accuracy on binary and three-class blobs) on the
    stack at its defaults, all six members. The rest of the checks run on the stack
    without its ``lda_shrunk_means`` member (``_checked_stacks`` says why that is the
    same code, with the same tags), which fits in a tenth of the time: that member
    chooses its mean strength by the evidence again at every leave-one-out row."""
    check_classifiers_train("StackedClassifier", bg.StackedClassifier())


def test_checked_stack_has_the_default_stacks_tags():
    """The stack that runs the checks in place of the default one declares the same
    scikit-learn tags, so every check takes the same branches on it."""
    from sklearn.utils import get_tags

    checked, default = _checked_stacks()[0], bg.StackedClassifier()
    assert get_tags(checked) == get_tags(default)
    assert _expected_failures(checked) == _expected_failures(default)
    assert [name for name, _ in checked.estimators] == [
        name for name, _ in default_estimators() if name != "lda_shrunk_means"]


@pytest.mark.parametrize("method", ["map", "conjugate"])
@pytest.mark.parametrize("cls", SUPPORT_LIMITED, ids=lambda c: c.__name__)
def test_decision_function_ranks_as_predict_proba(cls, method):
    """scikit-learn's check_decision_proba_consistency on blobs moved into the support of
    the count, duration and category families (centres that differ in proportions, which
    a multinomial sees): decision_function and predict_proba rank the test rows alike."""
    X, y = make_blobs(n_samples=100, random_state=0, n_features=4,
                      centers=[(3, 4, 3, 3), (4, 3, 3, 3)], cluster_std=1.0, shuffle=True)
    X = X - X.min() + (0.1 if cls is bg.ExponentialNB else 0.0)
    if cls is not bg.ExponentialNB:
        X = np.round(X)
    extra = {"min_categories": int(X.max()) + 1} if cls is bg.CategoricalNB else {}
    est = _make(cls, method, **extra).fit(X[:80], y[:80])
    a = est.predict_proba(X[80:])[:, 1].round(10)
    b = est.decision_function(X[80:]).round(10)
    assert np.unique(a).size > 5  # not a degenerate comparison
    order = np.argsort(b, kind="stable")
    assert np.all(np.diff(a[order]) >= -1e-12)
    np.testing.assert_array_equal(rankdata(a) > rankdata(a).mean(),
                                  rankdata(b) > rankdata(b).mean())


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_positive_only_tag(cls):
    """The count and duration families declare their support through scikit-learn's
    input tags (MixedNB only when every part is positive-only), and refuse negative X."""
    from sklearn.utils import get_tags

    expected = cls in SUPPORT_LIMITED
    assert get_tags(_make(cls, "map")).input_tags.positive_only is expected
    if expected:
        X = np.abs(np.random.default_rng(0).normal(size=(20, 3))).round() + 1.0
        X[0, 0] = -1.0
        with pytest.raises(ValueError, match=r"(?i)negative|below 0"):
            _make(cls, "map").fit(X, np.arange(20) % 2)


@pytest.mark.parametrize("method", ["map", "conjugate"])
def test_categorical_checks_on_codes(method):
    """check_classifiers_one_label_sample_weights and the sample-weight equivalence on
    category codes (the categorical tag applied): weights that select one class give a
    model that predicts it; integer weights equal repeated rows."""
    rng = np.random.RandomState(0)
    X = rng.randint(0, 4, size=(10, 10))
    y = np.arange(10) % 2
    est = _make(bg.CategoricalNB, method, min_categories=4).fit(X, y, sample_weight=y)
    np.testing.assert_array_equal(est.predict(rng.randint(0, 4, size=(10, 10))), np.ones(10))
    rng = np.random.RandomState(42)
    X = rng.randint(0, 3, size=(15, 30))
    y = rng.randint(0, 3, size=15)
    sw = rng.randint(0, 5, size=15)
    kw = {"min_categories": 3}
    weighted = _make(bg.CategoricalNB, method, **kw).fit(X, y, sample_weight=sw)
    repeated = _make(bg.CategoricalNB, method, **kw).fit(X.repeat(sw, axis=0), y.repeat(sw))
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X),
                               rtol=1e-7, atol=1e-9)


def test_stack_fit_refuses_nan_and_inf():
    """The fit half of check_estimators_nan_inf for the default stack: NaN and inf in X
    are ValueErrors naming them; its predictions integrate missing entries out."""
    rng = np.random.RandomState(0)
    y = np.r_[np.zeros(5), np.ones(5)]
    for bad, word in [(np.nan, "NaN"), (np.inf, "inf")]:
        X = rng.uniform(size=(10, 3))
        X[0, 0] = bad
        # refused before any member is fitted: no data augmentation run, no warning
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(ValueError, match=word):
                bg.StackedClassifier().fit(X, y)
    stack = bg.StackedClassifier().fit(rng.uniform(size=(10, 3)), y)
    X = rng.uniform(size=(4, 3))
    X[0, 0] = np.nan
    proba = stack.predict_proba(X)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("stack", _stacks(), ids=["default", "gnb_exp", "pois_mult"])
def test_stack_allow_nan_tag_is_what_fit_does(stack):
    """The stack's allow_nan tag says whether its fit takes missing entries (every
    member integrates them out and keeps an exact leave-one-out with them)."""
    from sklearn.utils import get_tags

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 15)
    X = rng.poisson(3.0, size=(30, 3)).astype(float) + 1.0 + 2.0 * y[:, None]
    X[[2, 20], [1, 0]] = np.nan
    if get_tags(stack).input_tags.allow_nan:
        proba = stack.fit(X, y).predict_proba(X)
        assert np.isfinite(proba).all()
    else:
        with pytest.raises(ValueError, match="NaN"):
            stack.fit(X, y)
