"""Predictions of the real-valued classifiers do not depend on the units of the features.

For x -> a x + b per feature (a != 0, negative too), ``predict_proba`` is the same to
1e-8 relative and ``predict_joint_log_proba`` shifts by -sum_j log|a_j| (the Jacobian),
for LDA, QDA, GaussianNB, KernelNB and MixedNB's real parts, with methods "mle", "map"
and "conjugate" (same random_state). The data are iris x 10 (integers), so every
transform below is exact or rounds only relatively (1e-16 of each value): the offsets
reach 1e12 standard deviations and the scales 1e-150..1e150 (1e-300 once).
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris

import bayesgen as bg

# huge and tiny units: attributes that overflow in the units of X warn (tested in
# test_bad_inputs); here the invariance of the predictions is checked
pytestmark = pytest.mark.filterwarnings("ignore:.*the fitted attribute\\(s\\):bayesgen.DataWarning")

TRANSFORMS = {
    "shift 1e9": (1.0, 1e9),
    "scale 1e-150": (1e-150, 0.0),
    "scale 1e150": (1e150, 0.0),
    "scale 1e-300": (1e-300, 0.0),
    "scale 3 shift -1e12": (3.0, -1e12),
    "negative scale, shift 5e11": (-2.0, 5e11),
    "per feature": (np.array([1e-150, -1e150, 3.0, 1.0]), np.array([0.0, 0.0, 1e9, -1e12])),
    "per feature 2": (np.array([-1e120, 1e-200, 7.0, -0.5]), np.array([0.0, 0.0, -3e11, 4e9])),
}

ESTIMATORS = {
    "LDA": (lambda **kw: bg.LDA(**kw), [0, 1, 2, 3]),
    "QDA": (lambda **kw: bg.QDA(**kw), [0, 1, 2, 3]),
    "GaussianNB": (lambda **kw: bg.GaussianNB(**kw), [0, 1, 2, 3]),
    "KernelNB": (lambda **kw: bg.KernelNB(**kw), [0, 1, 2, 3]),
    "MixedNB-gaussian-kernel": (
        lambda **kw: bg.MixedNB(families=[("gaussian", [0, 2]), ("kernel", [1, 3])], **kw),
        [0, 1, 2, 3],
    ),
    # the Poisson columns (counts) keep their units: only the Gaussian ones move
    "MixedNB-gaussian-poisson": (
        lambda **kw: bg.MixedNB(families=[("gaussian", [0, 1]), ("poisson", [2, 3])], **kw),
        [0, 1],
    ),
}
NO_CONJUGATE = {"KernelNB", "MixedNB-gaussian-kernel"}
CASES = [
    (name, method)
    for name in ESTIMATORS
    for method in ("mle", "map", "conjugate")
    if not (method == "conjugate" and name in NO_CONJUGATE)
]


@pytest.fixture(scope="module")
def iris10():
    X, y = load_iris(return_X_y=True)
    return np.round(X * 10.0), y


def _fit(name: str, method: str, X, y):
    factory, _ = ESTIMATORS[name]
    est = factory(method=method, draws=20, chains=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # user-unit attributes overflow
        return est.fit(X, y)


@pytest.fixture(scope="module")
def references(iris10):
    X, y = iris10
    out = {}
    for name, method in CASES:
        est = _fit(name, method, X, y)
        out[name, method] = (est.predict_proba(X), est.predict_joint_log_proba(X))
    return out


def _transform(X, columns, a, b):
    a_full, b_full = np.ones(X.shape[1]), np.zeros(X.shape[1])
    a_full[columns] = np.broadcast_to(a, (4,))[: len(columns)]
    b_full[columns] = np.broadcast_to(b, (4,))[: len(columns)]
    return a_full * X + b_full, a_full


def _relative(p, q):
    return np.max(np.abs(p - q) / np.maximum(np.maximum(p, q), 1e-300))


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize(("name", "method"), CASES)
def test_predictions_are_invariant(iris10, references, name, method, transform):
    X, y = iris10
    Xt, a = _transform(X, ESTIMATORS[name][1], *TRANSFORMS[transform])
    est = _fit(name, method, Xt, y)
    proba, joint = references[name, method]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow, no fallback to the class prior
        new_proba = est.predict_proba(Xt)
        new_joint = est.predict_joint_log_proba(Xt)
    assert _relative(proba, new_proba) < 1e-8
    # log p(a x + b) = log p(x) - sum_j log|a_j|
    expected = joint - np.sum(np.log(np.abs(a)))
    np.testing.assert_allclose(new_joint, expected, rtol=1e-10, atol=1e-8)


@pytest.mark.parametrize("name", ["LDA", "QDA", "GaussianNB"])
def test_user_priors_are_given_in_user_units(iris10, name):
    """A prior given in the units of X means the same prior in every unit."""
    X, y = iris10
    a, b = np.array([1e-150, -3.0, 1e9, 1.0]), np.array([0.0, 1e12, 0.0, -5e11])
    m0, v0 = np.round(X.mean(0)) + 2.0, np.round(X.var(0) * 1.5)  # exact under a, b
    if name == "GaussianNB":
        user = {"mean_prior": m0, "var_prior": v0}
        moved = {"mean_prior": a * m0 + b, "var_prior": a**2 * v0}
    else:
        S0 = np.round(np.cov(X.T))
        user = {"mean_prior": m0, "cov_target": S0}
        moved = {"mean_prior": a * m0 + b, "cov_target": S0 * np.outer(a, a)}
    cls = getattr(bg, name)
    for method in ("map", "conjugate"):
        ref = cls(method=method, draws=10, chains=1, random_state=0, **user).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            new = cls(method=method, draws=10, chains=1, random_state=0, **moved)
            new.fit(a * X + b, y)
        assert _relative(ref.predict_proba(X), new.predict_proba(a * X + b)) < 1e-8


@pytest.mark.parametrize("name", ["LDA", "QDA", "GaussianNB", "KernelNB"])
def test_fitted_attributes_are_in_user_units(iris10, name):
    """theta_/var_, means_/covariance_, bandwidth_ transform with the data."""
    X, y = iris10
    a, b = np.array([1e-6, -3.0, 1e3, 2.0]), np.array([0.0, 1e9, -7.0, 5e5])
    ref = getattr(bg, name)(method="map").fit(X, y)
    new = getattr(bg, name)(method="map").fit(a * X + b, y)
    if name == "GaussianNB":
        np.testing.assert_allclose(new.theta_, a * ref.theta_ + b, rtol=1e-12)
        np.testing.assert_allclose(new.var_, a**2 * ref.var_, rtol=1e-10)
    elif name == "KernelNB":
        np.testing.assert_allclose(new.bandwidth_, np.abs(a) * ref.bandwidth_, rtol=1e-10)
    else:
        np.testing.assert_allclose(new.means_, a * ref.means_ + b, rtol=1e-12)
        cov_ref = np.asarray(ref.covariance_)
        np.testing.assert_allclose(np.asarray(new.covariance_), cov_ref * np.outer(a, a),
                                   rtol=1e-9, atol=1e-12 * np.abs(cov_ref * np.outer(a, a)).max())


def test_lda_transform_and_coefficients_follow_the_units(iris10):
    X, y = iris10
    a, b = np.array([1e-6, -3.0, 1e3, 2.0]), np.array([0.0, 1e4, -7.0, 5e2])
    ref = bg.LDA(method="mle").fit(X, y)
    new = bg.LDA(method="mle").fit(a * X + b, y)
    Tr, Tn = ref.transform(X), new.transform(a * X + b)
    np.testing.assert_allclose(np.abs(Tn), np.abs(Tr), rtol=1e-9, atol=1e-9)  # sign free
    np.testing.assert_allclose(new.explained_variance_ratio_, ref.explained_variance_ratio_,
                               rtol=1e-10)
    # the linear discriminants are the documented formula in the units of X
    scores = (a * X + b) @ new.coef_.T + new.intercept_
    d_new = new.decision_function(a * X + b)
    np.testing.assert_allclose(scores, d_new, rtol=1e-7, atol=1e-7 * np.abs(d_new).max())


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name", ["KernelNB", "MixedNB-gaussian-kernel"])
def test_kernel_map_is_invariant_under_sign_changes(name, seed):
    """Issue 26, item 6: the MAP bandwidths' prior centre (Silverman's rule) used the
    inverted-CDF IQR, which is not symmetric under x -> -x; probabilities moved by up to
    6e-3 under x -> a x + b with |a| in 53..360 and negative signs. Continuous data
    without ties (unlike iris x 10), where the quartiles of x and -x fall on different
    order statistics."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(15, 60))
    X = rng.normal(size=(n, 4)) * [1.0, 0.01, 100.0, 3.0]
    y = rng.integers(0, 3, n)
    y[:3] = [0, 1, 2]
    a = rng.uniform(53, 360, size=4) * rng.choice([-1.0, 1.0], size=4)
    a[0] = -abs(a[0])
    b = rng.normal(size=4) * 1e3
    factory, _ = ESTIMATORS[name]
    p = factory(method="map").fit(X, y).predict_proba(X)
    q = factory(method="map").fit(X * a + b, y).predict_proba(X * a + b)
    np.testing.assert_allclose(q, p, rtol=0, atol=1e-9)
