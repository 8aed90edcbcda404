"""GaussianNB (Normal-Inverse-Gamma family) against independent references."""

import numpy as np
import pytest
from scipy import optimize, stats
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.naive_bayes import GaussianNB as SkGaussianNB

import bayesgen as bg
from bayesgen.families.gaussian import GaussianFamily

LOADERS = [load_iris, load_wine, load_breast_cancer]


@pytest.mark.parametrize("load", LOADERS, ids=lambda f: f.__name__)
def test_mle_matches_sklearn(load):
    X, y = load(return_X_y=True)
    ours = bg.GaussianNB(method="mle").fit(X, y)
    ref = SkGaussianNB(var_smoothing=0).fit(X, y)
    np.testing.assert_allclose(ours.theta_, ref.theta_, rtol=1e-10)
    np.testing.assert_allclose(ours.var_, ref.var_, rtol=1e-10)
    np.testing.assert_allclose(ours.class_prior_, ref.class_prior_)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(
        ours.predict_joint_log_proba(X), ref.predict_joint_log_proba(X), rtol=1e-9
    )
    assert np.array_equal(ours.predict(X), ref.predict(X))


def test_joint_log_proba_matches_scipy():
    X, y = load_iris(return_X_y=True)
    clf = bg.GaussianNB(method="map").fit(X, y)
    expected = np.stack(
        [
            stats.norm.logpdf(X, clf.theta_[k], np.sqrt(clf.var_[k])).sum(1)
            + np.log(clf.class_prior_[k])
            for k in range(3)
        ],
        axis=1,
    )
    np.testing.assert_allclose(clf.predict_joint_log_proba(X), expected, rtol=1e-10)


def test_decision_function_is_joint_up_to_a_constant():
    X, y = load_iris(return_X_y=True)
    clf = bg.GaussianNB().fit(X, y)
    diff = clf.predict_joint_log_proba(X) - clf.decision_function(X)
    np.testing.assert_allclose(diff, diff[:, :1] * np.ones((1, 3)), atol=1e-10)


def test_unbiased_divisor_matches_numpy():
    X, y = load_wine(return_X_y=True)
    clf = bg.GaussianNB(method="mle", divisor="unbiased").fit(X, y)
    for k in range(3):
        np.testing.assert_allclose(clf.var_[k], X[y == k].var(axis=0, ddof=1), rtol=1e-10)


def _neg_log_posterior(z, x, prior):
    """-log p(mu, s2 | x) for one feature, in (mu, log s2), up to a constant."""
    mu, log_s2 = z
    s2 = np.exp(log_s2)
    a0, b0, m0, k0 = prior["a0"][0], prior["b0"][0], prior["m0"][0], prior["kappa0"]
    lp = stats.invgamma.logpdf(s2, a0, scale=b0) + stats.norm.logpdf(mu, m0, np.sqrt(s2 / k0))
    ll = stats.norm.logpdf(x, mu, np.sqrt(s2)).sum()
    # the mode is of the density in (mu, s2): add back the log-Jacobian of s2 = exp(.)
    return -(lp + ll)


def test_map_is_the_numerical_posterior_mode():
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 2.0, size=7)
    fam = GaussianFamily(mean_strength=0.5, var_dof=4.0, var_prior=2.0, mean_prior=1.0)
    st = fam.stats(x[:, None], np.zeros(7, int), np.ones(7), 1)
    prior = fam.prior(st)
    est = fam.map(st, prior)
    res = optimize.minimize(
        _neg_log_posterior, x0=[0.0, 0.0], args=(x, prior), method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 10000},
    )
    assert res.x[0] == pytest.approx(est["mu"][0, 0], abs=1e-5)
    assert np.exp(res.x[1]) == pytest.approx(est["var"][0, 0], rel=1e-5)


def test_map_works_where_mle_is_singular():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(size=20), np.full(20, 5.0)])
    y = np.repeat([0, 1], 10)
    with pytest.raises(ValueError, match="zero variance"):
        bg.GaussianNB(method="mle").fit(X, y)
    clf = bg.GaussianNB().fit(X, y)
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba))
    Xd, yd = load_digits(return_X_y=True)  # many constant pixels
    assert bg.GaussianNB().fit(Xd, yd).score(Xd, yd) > 0.8


def test_one_sample_class_needs_map():
    X = np.array([[0.0], [1.0], [2.0], [5.0]])
    y = np.array([0, 0, 0, 1])
    with pytest.raises(ValueError, match="class 1"):
        bg.GaussianNB(method="mle").fit(X, y)
    assert np.isfinite(bg.GaussianNB().fit(X, y).predict_log_proba(X)).all()


def test_posterior_draw_moments():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 2))
    y = np.repeat([0, 1], 15)
    fam = GaussianFamily()
    st = fam.stats(X, y, np.ones(30), 2)
    post = fam.posterior(st, fam.prior(st))
    draws = fam.draw(post, 200_000, np.random.default_rng(3))
    a, b = post["a"], post["b"]
    np.testing.assert_allclose(draws["var"].mean(0), b / (a - 1), rtol=0.02)
    np.testing.assert_allclose(draws["mu"].mean(0), post["m"], atol=0.01)
    # marginal of mu is Student-t with 2a dof, scale sqrt(b / (a kappa))
    sd_t = np.sqrt(b / (a * post["kappa"]) * (2 * a) / (2 * a - 2))
    np.testing.assert_allclose(draws["mu"].std(0), sd_t, rtol=0.02)


@pytest.fixture(scope="module")
def wine():
    return load_wine(return_X_y=True)


def test_halves_merge_equals_whole(wine):
    X, y = wine
    fam = GaussianFamily()
    w = np.ones(len(y))
    whole = fam.stats(X, y, w, 3)
    halves = [fam.stats(X[h::2], y[h::2], w[h::2], 3) for h in (0, 1)]
    merged = fam.merge(*halves)
    for key in whole:
        np.testing.assert_allclose(merged[key], whole[key], rtol=1e-10)


@pytest.mark.parametrize("method", ["mle", "map"])
def test_duplicated_rows_equal_weight_two(wine, method):
    X, y = wine
    dup = np.r_[X, X[:20]], np.r_[y, y[:20]]
    w = np.ones(len(y))
    w[:20] = 2
    a = bg.GaussianNB(method=method).fit(*dup)
    b = bg.GaussianNB(method=method).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-10)


def test_row_order_and_relabeling(wine):
    X, y = wine
    perm = np.random.default_rng(0).permutation(len(y))
    a = bg.GaussianNB().fit(X, y)
    b = bg.GaussianNB().fit(X[perm], y[perm])
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-10)
    names = np.array(["c", "a", "b"])[y]  # sorted classes_ = a, b, c -> columns 1, 2, 0
    c = bg.GaussianNB().fit(X, names)
    np.testing.assert_allclose(c.predict_proba(X), a.predict_proba(X)[:, [1, 2, 0]], atol=1e-10)


def test_map_is_scale_equivariant(wine):
    X, y = wine
    scale = np.array([1000.0] + [1.0] * (X.shape[1] - 1))
    a = bg.GaussianNB().fit(X, y)
    b = bg.GaussianNB().fit(X * scale, y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X * scale), atol=1e-8)
    np.testing.assert_allclose(b.var_[:, 0], a.var_[:, 0] * 1e6, rtol=1e-8)


def test_sample_has_the_fitted_moments():
    X, y = load_iris(return_X_y=True)
    clf = bg.GaussianNB().fit(X, y)
    Xs, ys = clf.sample(60_000, random_state=0)
    for k in range(3):
        rows = ys == k
        np.testing.assert_allclose(Xs[rows].mean(0), clf.theta_[k], atol=0.02)
        np.testing.assert_allclose(Xs[rows].var(0), clf.var_[k], rtol=0.05)
    freq = np.bincount(ys, minlength=3) / len(ys)
    np.testing.assert_allclose(freq, clf.class_prior_, atol=0.01)
    Xk, yk = clf.sample(10, classes=2, random_state=1)
    assert np.all(yk == 2) and Xk.shape == (10, 4)
    Xa, _ = clf.sample(5, random_state=3)
    Xb, _ = clf.sample(5, random_state=3)
    np.testing.assert_array_equal(Xa, Xb)
