"""scikit-learn's own estimator checks (`parametrize_with_checks`) on every estimator,
with ``method="map"`` and ``method="conjugate"`` (KernelNB has no conjugate prior: its
posterior is sampled by NUTS only), and a short ``method="mcmc"`` run on GaussianNB.

Every expected failure names the reason a Bayesian generative estimator differs from
scikit-learn's convention. The posterior fits use few draws (the checks test the API,
not the posterior): each check is its own test item, so pytest-xdist spreads them. The
short NUTS run is marked ``slow`` (compilation per data shape dominates it).
"""

import warnings

import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.datasets import make_blobs
from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesgen as bg

_NEGATIVE_BLOBS = (
    "the check scores make_blobs data that contain negative values without applying the "
    "positive_only tag, and negative values are outside the support of a count, duration "
    "or category likelihood (scikit-learn's MultinomialNB, CategoricalNB have no "
    "decision_function, so they never meet this check); "
    "test_decision_function_ranks_as_predict_proba checks it on data in the support"
)
_NOT_CODES = (
    "the check draws real-valued X without applying the categorical tag, and real values "
    "are not category codes: CategoricalNB refuses them with a ValueError naming "
    "OrdinalEncoder (scikit-learn's CategoricalNB truncates them to integers silently)"
)
_OBJECT_MESSAGE = (
    "an object column holding a dict is refused with a TypeError in bayesgen's words "
    "('column 0 holds a dict ...; every entry of X must be a string or a number'), not "
    "the wording of float()'s message that the check matches: object columns are read "
    "as category labels here (CategoricalNB, MixedNB), not converted with float()"
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


def _instances():
    out = [_make(cls, "map") for cls in ALL]
    return out + [_make(cls, "conjugate") for cls in ALL if cls is not bg.KernelNB]


def _expected_failures(estimator):
    failures = {}
    if isinstance(estimator, SUPPORT_LIMITED):
        failures["check_decision_proba_consistency"] = _NEGATIVE_BLOBS
    if isinstance(estimator, bg.CategoricalNB):
        failures["check_sample_weight_equivalence_on_dense_data"] = _NOT_CODES
        failures["check_classifiers_one_label_sample_weights"] = _NOT_CODES
    if isinstance(estimator, bg.CategoricalNB | bg.MixedNB):
        failures["check_dtype_object"] = _OBJECT_MESSAGE
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
