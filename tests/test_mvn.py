"""Tests of the multivariate normal family (bg.LDA, bg.QDA).

References: scikit-learn's LinearDiscriminantAnalysis / QuadraticDiscriminantAnalysis,
scipy.stats log-densities (multivariate_normal, invwishart), numpy covariances, a
numerical maximiser of the log posterior, and textbook Inverse-Wishart moments.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)

import bayesgen as bg
from bayesgen.families import get_family

mvn_logpdf = stats.multivariate_normal.logpdf
iw_logpdf = stats.invwishart.logpdf


def _digits_nonconstant():
    X, y = load_digits(return_X_y=True)
    # Pixels that are 0 in every image make the pooled covariance singular (and
    # scikit-learn's lsqr solver then falls back to a pseudo-inverse): drop them.
    return X[:, X.std(axis=0) > 0], y


DATASETS = {
    "iris": lambda: load_iris(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "cancer": lambda: load_breast_cancer(return_X_y=True),
    "digits": _digits_nonconstant,
}


@pytest.fixture(scope="module", params=["iris", "wine", "cancer", "digits"])
def lda_pair(request):
    X, y = DATASETS[request.param]()
    ours = bg.LDA(method="mle").fit(X, y)
    ref = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    return X, y, ours, ref


@pytest.fixture(scope="module", params=["iris", "wine", "cancer"])
def qda_pair(request):
    X, y = DATASETS[request.param]()
    ours = bg.QDA(method="mle").fit(X, y)
    # tol only controls scikit-learn's rank error; cancer has variances below 1e-4.
    ref = QuadraticDiscriminantAnalysis(store_covariance=True, tol=1e-12).fit(X, y)
    return X, y, ours, ref


@pytest.fixture(scope="module")
def small():
    """Three well-separated 3-d Gaussian classes with string labels and weights."""
    rng = np.random.default_rng(0)
    n, d = 90, 3
    y = np.repeat(np.array(["a", "b", "c"]), n // 3)
    centres = {"a": [0.0, 0.0, 0.0], "b": [2.0, 1.0, -1.0], "c": [-1.0, 2.5, 1.0]}
    X = np.array([centres[c] for c in y]) + rng.normal(size=(n, d)) @ np.array(
        [[1.0, 0.3, 0.0], [0.0, 0.8, 0.2], [0.0, 0.0, 0.5]]
    )
    w = rng.uniform(0.5, 2.0, size=n)
    return X, y, w


# ---------------------------------------------------------------- vs scikit-learn
def test_lda_mle_matches_sklearn(lda_pair):
    X, _, ours, ref = lda_pair
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(ours.covariance_, ref.covariance_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.means_, ref.means_, rtol=1e-12, atol=1e-12 * np.abs(X).max())
    scale = np.abs(ref.decision_function(X)).max()
    np.testing.assert_allclose(
        ours.decision_function(X), ref.decision_function(X), atol=1e-7 * scale
    )
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-7 * np.abs(ref.coef_).max())
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-7 * scale)
    assert (ours.predict(X) == ref.predict(X)).mean() > 0.999


def test_lda_transform_matches_sklearn_eigen(lda_pair):
    X, y, ours, _ = lda_pair
    ref = LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    n_comp = ref.explained_variance_ratio_.size
    got = ours.transform(X)
    assert got.shape == (X.shape[0], n_comp)
    # scikit-learn's eigen solver does not centre: X @ scalings_.
    got = got + ours.xbar_ @ ours.scalings_[:, :n_comp]
    want = ref.transform(X)
    signs = np.sign((got * want).sum(axis=0))
    scale = np.abs(want).max(axis=0)
    np.testing.assert_allclose(got * signs, want, atol=1e-6 * scale.max())
    np.testing.assert_allclose(
        ours.explained_variance_ratio_, ref.explained_variance_ratio_, atol=1e-8
    )


def test_qda_mle_matches_sklearn(qda_pair):
    X, _, ours, ref = qda_pair
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    assert isinstance(ours.covariance_, list) and len(ours.covariance_) == len(ref.classes_)
    for got, want in zip(ours.covariance_, ref.covariance_, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10 * np.abs(want).max())
    np.testing.assert_allclose(ours.means_, ref.means_, rtol=1e-12, atol=1e-12 * np.abs(X).max())
    scale = np.abs(ref.decision_function(X)).max()
    np.testing.assert_allclose(
        ours.decision_function(X), ref.decision_function(X), atol=1e-7 * scale
    )


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
@pytest.mark.parametrize("method", ["mle", "map"])
def test_joint_log_proba_matches_scipy(cls, method):
    X, y = load_wine(return_X_y=True)
    X = X + 1e4  # a large offset must not cost accuracy
    clf = cls(method=method).fit(X, y)
    covs = clf.covariance_ if cls is bg.QDA else [clf.covariance_] * 3
    want = np.column_stack(
        [mvn_logpdf(X, clf.means_[k], covs[k]) + np.log(clf.class_prior_[k]) for k in range(3)]
    )
    np.testing.assert_allclose(clf.predict_joint_log_proba(X), want, rtol=1e-9, atol=1e-8)
    # Far outliers: finite, normalised probabilities.
    proba = clf.predict_proba(X[:5] * 1e3)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("tied", [True, False])
def test_log_lik_broadcasts_over_draws_and_discriminant_form(small, tied):
    X, y, w = small
    clf = (bg.LDA if tied else bg.QDA)().fit(X, y, sample_weight=w)
    fam = clf._family
    post = fam.posterior(clf._stats, clf._prior)
    draws = fam.draw(post, 4, np.random.default_rng(1))
    ll = fam.log_lik(X, draws)
    assert ll.shape == (4, X.shape[0], 3)
    for s in range(4):
        for k in range(3):
            cov = draws["cov"][s] if tied else draws["cov"][s, k]
            np.testing.assert_allclose(ll[s, :, k], mvn_logpdf(X, draws["mu"][s, k], cov))
    # full=False drops only class-independent terms, and for LDA is the linear form.
    full = fam.log_lik(X, clf._params)
    disc = fam.log_lik(X, clf._params, full=False)
    cov = clf.covariance_ if tied else clf.covariance_[0]
    if tied:
        prec_mu = np.linalg.solve(cov, clf.means_.T)
        linear = X @ prec_mu - 0.5 * np.sum(clf.means_.T * prec_mu, axis=0)
        np.testing.assert_allclose(disc, linear, rtol=1e-10, atol=1e-10)
        dropped = -0.5 * (
            np.sum(X * np.linalg.solve(cov, X.T).T, axis=1)
            + np.linalg.slogdet(cov)[1]
            + 3 * np.log(2 * np.pi)
        )
        np.testing.assert_allclose(full - disc, np.repeat(dropped[:, None], 3, 1), rtol=1e-9)
    else:
        np.testing.assert_allclose(full - disc, -1.5 * np.log(2 * np.pi), rtol=1e-12)


def test_divisor_unbiased():
    X, y = load_iris(return_X_y=True)
    qda = bg.QDA(method="mle", divisor="unbiased").fit(X, y)
    lda = bg.LDA(method="mle", divisor="unbiased").fit(X, y)
    pooled = np.zeros((4, 4))
    for k in range(3):
        cov_k = np.cov(X[y == k], rowvar=False, ddof=1)
        np.testing.assert_allclose(qda.covariance_[k], cov_k, rtol=1e-12)
        pooled += (np.sum(y == k) - 1) * cov_k
    np.testing.assert_allclose(lda.covariance_, pooled / (X.shape[0] - 3), rtol=1e-12)
    with pytest.raises(ValueError, match="divisor"):
        bg.QDA(method="mle", divisor="n-1").fit(X, y)


# ---------------------------------------------------------------------- MAP
M0 = np.array([0.3, -0.2])
S0 = np.array([[1.5, 0.3], [0.3, 0.8]])
KAPPA0, NU0 = 0.5, 5.0
PSI0 = (NU0 - 2 - 1) * S0  # prior mean of Sigma is S0


@pytest.fixture(scope="module")
def map_data():
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], [6, 9, 4])
    X = rng.normal(size=(y.size, 2)) * [1.0, 0.5] + np.array([[0, 0], [1.5, 1], [-1, 2]])[y]
    w = rng.uniform(0.5, 2.0, size=y.size)
    return X, y, w


def _chol(theta):
    return np.array([[np.exp(theta[0]), 0.0], [theta[1], np.exp(theta[2])]])


def _maximise(neg_log_post, x0):
    res = optimize.minimize(neg_log_post, x0, method="BFGS", options={"gtol": 1e-9})
    res = optimize.minimize(
        neg_log_post,
        res.x,
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-13, "maxiter": 20000},
    )
    return res.x


def _map_kwargs():
    return dict(method="map", mean_prior=M0, mean_strength=KAPPA0, cov_target=S0, cov_dof=NU0)


def test_qda_map_is_numerical_posterior_mode(map_data):
    X, y, w = map_data
    clf = bg.QDA(**_map_kwargs()).fit(X, y, sample_weight=w)
    for k in range(3):
        Xk, wk = X[y == k], w[y == k]

        def neg(theta, Xk=Xk, wk=wk):
            mu, L = theta[:2], _chol(theta[2:])
            cov = L @ L.T
            return -(
                iw_logpdf(cov, df=NU0, scale=PSI0)
                + mvn_logpdf(mu, M0, cov / KAPPA0)
                + wk @ mvn_logpdf(Xk, mu, cov)
            )

        theta = _maximise(neg, np.array([*Xk.mean(0), 0.0, 0.0, 0.0]))
        L = _chol(theta[2:])
        np.testing.assert_allclose(clf.means_[k], theta[:2], atol=1e-5)
        np.testing.assert_allclose(clf.covariance_[k], L @ L.T, atol=1e-5)


def test_lda_map_is_numerical_posterior_mode(map_data):
    X, y, w = map_data
    clf = bg.LDA(**_map_kwargs()).fit(X, y, sample_weight=w)

    def neg(theta):
        mus, L = theta[:6].reshape(3, 2), _chol(theta[6:])
        cov = L @ L.T
        out = iw_logpdf(cov, df=NU0, scale=PSI0)
        for k in range(3):
            out += mvn_logpdf(mus[k], M0, cov / KAPPA0)
            out += w[y == k] @ mvn_logpdf(X[y == k], mus[k], cov)
        return -out

    x0 = np.concatenate([np.array([X[y == k].mean(0) for k in range(3)]).ravel(), [0, 0, 0]])
    theta = _maximise(neg, x0)
    L = _chol(theta[6:])
    np.testing.assert_allclose(clf.means_, theta[:6].reshape(3, 2), atol=1e-5)
    np.testing.assert_allclose(clf.covariance_, L @ L.T, atol=1e-5)


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_default_prior_is_data_scaled(small, cls):
    X, y, w = small
    N = w.sum()
    m0 = w @ X / N
    within = (
        sum(
            (
                w[y == c, None]
                * (X[y == c] - np.average(X[y == c], axis=0, weights=w[y == c])) ** 2
            ).sum(0)
            for c in "abc"
        )
        / N
    )
    # cov_dof=None is d + 2 = 5 (mclust's default); the default "auto" is empirical Bayes
    default = cls(cov_dof=None).fit(X, y, sample_weight=w)
    explicit = cls(mean_prior=m0, cov_target=np.diag(within), cov_dof=5).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(default.means_, explicit.means_, rtol=1e-12)
    np.testing.assert_allclose(
        np.asarray(default.covariance_), np.asarray(explicit.covariance_), rtol=1e-12
    )
    auto = cls().fit(X, y, sample_weight=w)
    nu0 = auto._prior["nu0"]
    assert nu0 > X.shape[1] + 1
    explicit = cls(mean_prior=m0, cov_target=np.diag(within), cov_dof=nu0).fit(
        X, y, sample_weight=w)
    np.testing.assert_allclose(np.asarray(auto.covariance_), np.asarray(explicit.covariance_),
                               rtol=1e-12)


def test_map_finite_where_mle_fails():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(14, 3))
    y = np.array([0] * 10 + [1] * 4)
    X[:, 2] = 7.0  # constant feature
    X[y == 1, 0] = 1.0  # constant within class 1
    for cls in (bg.LDA, bg.QDA):
        with pytest.raises(ValueError, match="method='map'"):
            cls(method="mle").fit(X, y)
        clf = cls().fit(X, y)
        for cov in np.reshape(clf.covariance_, (-1, 3, 3)):
            assert np.all(np.linalg.eigvalsh(cov) > 0)
        assert np.all(np.isfinite(clf.predict_log_proba(X)))
    qda = bg.QDA().fit(X[:12], y[:12])  # class 1 has 2 samples <= d
    assert np.all(np.isfinite(qda.predict_joint_log_proba(X)))


# ---------------------------------------------------------------- invariances
@pytest.mark.parametrize("tied", [True, False])
def test_stats_merge_halves(small, tied):
    X, y, w = small
    fam = get_family("mvn")(tied=tied)
    yi = np.searchsorted(np.array(["a", "b", "c"]), y)
    half = np.arange(y.size) % 3 == 0
    merged = fam.merge(
        fam.stats(X[half], yi[half], w[half], 3), fam.stats(X[~half], yi[~half], w[~half], 3)
    )
    whole = fam.stats(X, yi, w, 3)
    for key in ("count", "mean", "scatter"):
        np.testing.assert_allclose(merged[key], whole[key], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
@pytest.mark.parametrize("method", ["mle", "map"])
def test_duplicated_rows_equal_weight_two(small, cls, method):
    X, y, _ = small
    w = np.ones(y.size)
    w[::4] = 2.0
    weighted = cls(method=method).fit(X, y, sample_weight=w)
    dup = np.concatenate([np.arange(y.size), np.arange(0, y.size, 4)])
    duplicated = cls(method=method).fit(X[dup], y[dup])
    np.testing.assert_allclose(weighted.means_, duplicated.means_, rtol=1e-12)
    np.testing.assert_allclose(
        np.asarray(weighted.covariance_), np.asarray(duplicated.covariance_), rtol=1e-10
    )
    np.testing.assert_allclose(weighted.predict_proba(X), duplicated.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_row_order_and_relabeling(small, cls):
    X, y, w = small
    ref = cls().fit(X, y, sample_weight=w)
    perm = np.random.default_rng(2).permutation(y.size)
    shuffled = cls().fit(X[perm], y[perm], sample_weight=w[perm])
    np.testing.assert_allclose(shuffled.predict_proba(X), ref.predict_proba(X), atol=1e-12)
    rename = {"a": "zeta", "b": "alpha", "c": "mu"}  # sorted order: alpha, mu, zeta
    relabeled = cls().fit(X, np.array([rename[c] for c in y]), sample_weight=w)
    cols = [list(relabeled.classes_).index(rename[c]) for c in ref.classes_]
    np.testing.assert_allclose(
        relabeled.predict_proba(X)[:, cols], ref.predict_proba(X), atol=1e-12
    )
    np.testing.assert_allclose(relabeled.means_[cols], ref.means_, rtol=1e-12)


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_map_feature_rescaling_equivariant(small, cls):
    X, y, w = small
    D = np.array([1000.0, 1e-3, 1.0])
    ref = cls().fit(X, y, sample_weight=w)
    scaled = cls().fit(X * D, y, sample_weight=w)
    np.testing.assert_allclose(scaled.predict_proba(X * D), ref.predict_proba(X), atol=1e-10)
    np.testing.assert_allclose(scaled.means_, ref.means_ * D, rtol=1e-10)
    np.testing.assert_allclose(
        np.asarray(scaled.covariance_), np.asarray(ref.covariance_) * np.outer(D, D), rtol=1e-9
    )


# ---------------------------------------------------------------------- errors
def test_too_few_samples_for_mle():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(13, 4))
    y = np.array(["big"] * 9 + ["rare"] * 4)
    with pytest.raises(ValueError, match=r"(?s)class 'rare' has 4.*method='map'"):
        bg.QDA(method="mle").fit(X, y)
    w = np.ones(13)
    w[y == "rare"] = 0.0
    with pytest.raises(ValueError, match=r"(?s)class 'rare' has none.*method='map'"):
        bg.LDA(method="mle").fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="more samples"):
        bg.LDA(method="mle").fit(X[[0, 1, 9]], ["u", "v", "w"])


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_singular_covariance(cls):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = np.repeat(["p", "q"], 20)
    X[:, 2] = X[:, 0] - 2.0 * X[:, 1]
    with pytest.raises(ValueError, match=r"(?s)singular.*\[0, 1, 2\].*collinear"):
        cls(method="mle").fit(X, y)
    X[:, 2] = 3.0
    with pytest.raises(ValueError, match="feature 2 is constant"):
        cls(method="mle").fit(X, y)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"cov_target": np.ones(4)}, "cov_target"),
        ({"cov_target": np.eye(4)}, "cov_target"),
        ({"cov_target": [1.0, -1.0, 1.0]}, "cov_target"),
        ({"cov_target": [[1, 2, 0], [0, 1, 0], [0, 0, 1]]}, "symmetric"),
        ({"cov_target": [[1, 2, 0], [2, 1, 0], [0, 0, 1]]}, "cov_target is not positive definite"),
        ({"cov_dof": 4.0}, "cov_dof must be > d \\+ 1"),
        ({"cov_dof": np.inf}, "cov_dof"),
        ({"mean_strength": 0.0}, "mean_strength"),
        ({"mean_prior": [0.0, 1.0]}, "mean_prior"),
    ],
)
def test_bad_hyperparameters(small, kwargs, match):
    X, y, _ = small
    for cls in (bg.LDA, bg.QDA):
        with pytest.raises(ValueError, match=match):
            cls(**kwargs).fit(X, y)


def test_valid_cov_prior_forms(small):
    X, y, _ = small
    a = bg.QDA(cov_target=[1.0, 2.0, 3.0], cov_dof=4.5).fit(X, y)
    b = bg.QDA(cov_target=np.diag([1.0, 2.0, 3.0]), cov_dof=4.5).fit(X, y)
    np.testing.assert_allclose(np.asarray(a.covariance_), np.asarray(b.covariance_))
    np.testing.assert_allclose(a._prior["Psi0"], 0.5 * np.diag([1.0, 2.0, 3.0]))


# --------------------------------------------------------- posterior and draws
def _random_params(rng, n_classes, tied):
    d = 3
    covs = stats.invwishart.rvs(
        df=8, scale=np.eye(d) * 5, size=1 if tied else n_classes, random_state=rng
    )
    covs = np.reshape(covs, (-1, d, d))
    return rng.normal(size=(n_classes, d)), covs[0] if tied else covs


@pytest.mark.parametrize("tied", [True, False])
def test_posterior_density_is_prior_times_likelihood(small, tied):
    X, y, w = small
    clf = (bg.LDA if tied else bg.QDA)().fit(X, y, sample_weight=w)
    prior = clf._prior
    post = clf._family.posterior(clf._stats, prior)
    rng = np.random.default_rng(4)
    diffs = []
    for _ in range(6):
        mus, covs = _random_params(rng, 3, tied)
        log_post, log_niw = 0.0, 0.0
        if tied:
            log_post += iw_logpdf(covs, df=prior["nu0"], scale=prior["Psi0"])
            log_niw += iw_logpdf(covs, df=post["nu"], scale=post["Psi"])
        for k, c in enumerate("abc"):
            cov = covs if tied else covs[k]
            if not tied:
                log_post += iw_logpdf(cov, df=prior["nu0"], scale=prior["Psi0"])
                log_niw += iw_logpdf(cov, df=post["nu"][k], scale=post["Psi"][k])
            log_post += mvn_logpdf(mus[k], prior["m0"], cov / prior["kappa0"])
            log_post += w[y == c] @ mvn_logpdf(X[y == c], mus[k], cov)
            log_niw += mvn_logpdf(mus[k], post["m"][k], cov / post["kappa"][k])
        diffs.append(log_post - log_niw)
    assert np.ptp(diffs) < 1e-8 * np.abs(diffs).max()


@pytest.mark.parametrize("tied", [True, False])
def test_posterior_sequential_update(small, tied):
    X, y, w = small
    fam = get_family("mvn")(tied=tied)
    yi = np.searchsorted(np.array(["a", "b", "c"]), y)
    first = np.arange(y.size) < 50
    prior = fam.prior(fam.stats(X, yi, w, 3))
    mid = fam.posterior(fam.stats(X[first], yi[first], w[first], 3), prior)
    as_prior = {"m0": mid["m"], "kappa0": mid["kappa"], "Psi0": mid["Psi"], "nu0": mid["nu"]}
    seq = fam.posterior(fam.stats(X[~first], yi[~first], w[~first], 3), as_prior)
    once = fam.posterior(fam.stats(X, yi, w, 3), prior)
    for key in ("m", "kappa", "Psi", "nu"):
        np.testing.assert_allclose(seq[key], once[key], rtol=1e-10)


def _iw_sd(psi, nu, d):
    """Element-wise sd of Sigma ~ IW(psi, nu) (Press 1982; needs nu > d + 3)."""
    dg = np.diag(psi)
    var = ((nu - d + 1) * psi**2 + (nu - d - 1) * np.outer(dg, dg)) / (
        (nu - d) * (nu - d - 1) ** 2 * (nu - d - 3)
    )
    return np.sqrt(var)


@pytest.mark.parametrize("tied", [True, False])
def test_draw_moments(tied):
    d, n_classes, size = 3, 2, 20000
    rng = np.random.default_rng(7)
    psi = np.array([[2.0, 0.5, -0.3], [0.5, 1.0, 0.2], [-0.3, 0.2, 3.0]])
    post = {"m": np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]]), "kappa": np.array([4.0, 25.0])}
    if tied:
        post |= {"Psi": psi * 6, "nu": 9.0}
    else:
        post |= {"Psi": np.stack([psi * 6, psi[::-1, ::-1] * 2]), "nu": np.array([9.0, 14.0])}
    fam = get_family("mvn")(tied=tied)
    out = fam.draw(post, size, rng)
    assert out["mu"].shape == (size, n_classes, d)
    assert out["cov"].shape == ((size, d, d) if tied else (size, n_classes, d, d))
    covs = out["cov"][:, None] if tied else out["cov"]
    psis = np.reshape(post["Psi"], (-1, d, d))
    nus = np.atleast_1d(post["nu"])
    for j in range(psis.shape[0]):
        draws = covs[:, j]
        mean = stats.invwishart.mean(df=nus[j], scale=psis[j])
        np.testing.assert_allclose(mean, psis[j] / (nus[j] - d - 1))
        z = (draws.mean(0) - mean) / (_iw_sd(psis[j], nus[j], d) / np.sqrt(size))
        assert np.abs(z).max() < 4.5
        ref = stats.invwishart.rvs(df=nus[j], scale=psis[j], size=size, random_state=11)
        for fn in (lambda c: c[:, 0, 0], lambda c: c[:, 0, 2], lambda c: np.linalg.slogdet(c)[1]):
            assert stats.ks_2samp(fn(draws), fn(ref)).pvalue > 1e-3
    # mu | Sigma ~ N(m, Sigma / kappa): whitened draws are standard normal.
    full_cov = np.broadcast_to(covs, (size, n_classes, d, d))
    L = np.linalg.cholesky(full_cov)
    e = (out["mu"] - post["m"]) * np.sqrt(post["kappa"])[:, None]
    e = np.linalg.solve(L, e[..., None])[..., 0]
    for k in range(n_classes):
        assert np.abs(e[:, k].mean(0)).max() < 4.5 / np.sqrt(size)
        np.testing.assert_allclose(np.cov(e[:, k], rowvar=False), np.eye(d), atol=0.05)


# ------------------------------------------------------------- sampling, attrs
@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_sample_matches_fitted_gaussians(cls):
    X, y = load_iris(return_X_y=True)
    clf = cls().fit(X, y)
    n = 20000
    Xs, ys = clf.sample(n, classes=1, random_state=0)
    assert Xs.shape == (n, 4) and np.all(ys == 1)
    cov = clf.covariance_ if cls is bg.LDA else clf.covariance_[1]
    e = np.linalg.solve(np.linalg.cholesky(cov), (Xs - clf.means_[1]).T).T
    assert np.abs(e.mean(0)).max() < 4.5 / np.sqrt(n)
    np.testing.assert_allclose(np.cov(e, rowvar=False), np.eye(4), atol=0.06)
    again, _ = clf.sample(n, classes=1, random_state=0)
    np.testing.assert_array_equal(Xs, again)


@pytest.mark.parametrize("tied", [True, False])
def test_sample_with_per_row_params(small, tied):
    X, y, w = small
    clf = (bg.LDA if tied else bg.QDA)().fit(X, y, sample_weight=w)
    fam = clf._family
    n = 4000
    params = fam.draw(fam.posterior(clf._stats, clf._prior), n, np.random.default_rng(0))
    yi = np.random.default_rng(1).integers(0, 3, size=n)
    Xs = fam.sample(params, yi, np.random.default_rng(2))
    rows = np.arange(n)
    cov = params["cov"] if tied else params["cov"][rows, yi]
    e = np.linalg.solve(np.linalg.cholesky(cov), (Xs - params["mu"][rows, yi])[..., None])
    np.testing.assert_allclose(np.cov(e[..., 0], rowvar=False), np.eye(3), atol=0.1)
    assert np.abs(e.mean(0)).max() < 4.5 / np.sqrt(n)


def test_attributes_and_param_dims(small):
    X, y, _ = small
    lda, qda = bg.LDA().fit(X, y), bg.QDA().fit(X, y)
    assert lda.covariance_.shape == (3, 3) and lda.means_.shape == (3, 3)
    assert len(qda.covariance_) == 3 and qda.covariance_[0].shape == (3, 3)
    assert lda._family.param_dims["cov"] == ("feature", "feature_bis")
    assert qda._family.param_dims["cov"] == ("class", "feature", "feature_bis")
    for clf in (lda, qda):
        for name, dims in clf._family.param_dims.items():
            assert np.ndim(clf._params[name]) == len(dims)


@pytest.mark.parametrize("tied", [True, False])
def test_log_predictive_is_multivariate_t(small, tied):
    X, y, w = small
    clf = (bg.LDA if tied else bg.QDA)().fit(X[::3], y[::3], sample_weight=w[::3])
    fam = clf._family
    post = fam.posterior(clf._stats, clf._prior)
    got = fam.log_predictive(X, post)
    d = X.shape[1]
    for k in range(3):
        psi = post["Psi"] if tied else post["Psi"][k]
        df = (post["nu"] if tied else post["nu"][k]) - d + 1
        shape = psi * (post["kappa"][k] + 1) / (post["kappa"][k] * df)
        want = stats.multivariate_t.logpdf(X, post["m"][k], shape, df=df)
        np.testing.assert_allclose(got[:, k], want, rtol=1e-10)
    # ... and the Monte Carlo average of the likelihood over posterior draws.
    draws = fam.draw(post, 20000, np.random.default_rng(8))
    ll = fam.log_lik(X, draws)
    mc = np.log(np.mean(np.exp(ll - ll.max(0)), axis=0)) + ll.max(0)
    own = np.searchsorted(clf.classes_, y)
    rows = np.arange(y.size)
    np.testing.assert_allclose(mc[rows, own], got[rows, own], atol=0.05)
