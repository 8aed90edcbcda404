"""scikit-learn's own estimator checks (`parametrize_with_checks`) on every estimator,
with ``method="map"`` and ``method="conjugate"`` (KernelNB has no conjugate prior: its
posterior is sampled by NUTS only), ``StackedClassifier`` at its defaults, and a short
``method="mcmc"`` run on GaussianNB.

Every expected failure names the reason scikit-learn's check cannot apply (a check that
does not apply the input tags the estimator declares, or a tag that cannot express the
estimator's contract), and a test beside it checks what the check means on data the
estimator accepts. The posterior fits use few draws (the checks test the API, not the
posterior): each check is its own test item, so pytest-xdist spreads them. The short
NUTS run is marked ``slow`` (compilation per data shape dominates it).
"""

import warnings

import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.datasets import make_blobs
from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesgen as bg

_NEGATIVE_BLOBS = (
    "the check scores make_blobs data that contain negative values and does not apply the "
    "positive_only input tag these estimators declare (scikit-learn's own positive-only "
    "classifiers, MultinomialNB and CategoricalNB, have no decision_function, so they "
    "never meet this check), and negative values are outside the support of a count, "
    "duration or category likelihood; test_positive_only_tag checks the tag and "
    "test_decision_function_ranks_as_predict_proba runs this check on data in the support"
)
_NOT_CODES = (
    "the check draws real-valued X and does not apply the categorical input tag "
    "CategoricalNB declares, and real values are not category codes: CategoricalNB "
    "refuses them with a ValueError naming OrdinalEncoder (scikit-learn's CategoricalNB "
    "truncates them to integers silently); test_categorical_checks_on_codes runs the "
    "check's logic on category codes"
)
_NAN_AT_FIT_ONLY = (
    "the stack predicts with missing entries (its members integrate them out), but "
    "members such as LDA, QDA and MultinomialNB have no exact leave-one-out with missing "
    "entries, so fit refuses NaN (a ValueError naming it) while predict accepts it: "
    "scikit-learn's single allow_nan tag cannot say 'missing values at predict, not at "
    "fit'; the fit half of the check is test_stack_fit_refuses_nan_and_inf, and "
    "test_stack_allow_nan_tag_is_what_fit_does checks the tag"
)
_FEW_DRAWS = {"draws": 20, "chains": 1}  # exact i.i.d. draws; predictions are closed-form
_MCMC_WEIGHTS = (
    "weights and repeated rows give sufficient statistics equal up to rounding, but NUTS "
    "trajectories amplify rounding-level differences (the chains diverge), so the two "
    "fits' Monte Carlo estimates differ by Monte Carlo error, far above the check's 1e-7; "
    "the exact conjugate posterior passes this check"
)

ALL = [bg.LDA, bg.QDA, bg.GaussianNB, bg.BernoulliNB, bg.MultinomialNB, bg.CategoricalNB,
       bg.PoissonNB, bg.ExponentialNB, bg.KernelNB, bg.MixedNB]
SUPPORT_LIMITED = (bg.MultinomialNB, bg.PoissonNB, bg.ExponentialNB, bg.CategoricalNB)


def _make(cls, method: str, **extra):
    kw = {"method": method, "random_state": 0, **extra}
    if method == "conjugate":
        kw.update(_FEW_DRAWS)
    if cls is bg.MixedNB:
        kw["families"] = "auto"  # each column's family from its dtype
    return cls(**kw)


def _stacks():
    """The stack at its defaults, and two whose tags come from other members: missing
    entries and positive X (GaussianNB, ExponentialNB), sparse positive counts
    (PoissonNB, MultinomialNB)."""
    few = {"method": "conjugate", "random_state": 0, **_FEW_DRAWS}
    return [bg.StackedClassifier(),
            bg.StackedClassifier([("gnb", bg.GaussianNB(**few)),
                                  ("exp", bg.ExponentialNB(**few))]),
            bg.StackedClassifier([("pois", bg.PoissonNB(**few)),
                                  ("mult", bg.MultinomialNB(**few))])]


def _instances():
    out = [_make(cls, "map") for cls in ALL]
    out += [_make(cls, "conjugate") for cls in ALL if cls is not bg.KernelNB]
    return out + _stacks()


def test_every_public_estimator_is_checked():
    """The checks above cover every estimator class that ``bayesgen`` exports."""
    from sklearn.base import BaseEstimator

    exported = {name for name in bg.__all__ if isinstance(getattr(bg, name), type)
                and issubclass(getattr(bg, name), BaseEstimator)}
    checked = {type(est).__name__ for est in _instances()}
    assert exported == checked


def _expected_failures(estimator):
    failures = {}
    if isinstance(estimator, bg.StackedClassifier):
        from sklearn.utils import get_tags

        if not get_tags(estimator).input_tags.allow_nan:
            failures["check_estimators_nan_inf"] = _NAN_AT_FIT_ONLY
        return failures
    if isinstance(estimator, SUPPORT_LIMITED):
        failures["check_decision_proba_consistency"] = _NEGATIVE_BLOBS
    if isinstance(estimator, bg.CategoricalNB):
        failures["check_sample_weight_equivalence_on_dense_data"] = _NOT_CODES
        failures["check_classifiers_one_label_sample_weights"] = _NOT_CODES
    if estimator.method == "mcmc":
        failures["check_sample_weight_equivalence_on_dense_data"] = _MCMC_WEIGHTS
    return failures


@parametrize_with_checks(_instances(), expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# NUTS compiles a program per data shape, and the checks use many shapes: about a minute
# of compilation per check on a busy 2-core machine, so this short run is marked slow
@pytest.mark.slow
@parametrize_with_checks([bg.GaussianNB(method="mcmc", draws=60, tune=60, chains=1,
                                        random_state=0, progressbar=False)],
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible_mcmc(estimator, check):
    with warnings.catch_warnings():
        # the short NUTS run warns that it may not have converged (as it should)
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        check(estimator)


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
