"""Discrete naive Bayes families: Bernoulli, Multinomial, Categorical, Poisson.

References are independent of the code under test: scikit-learn's naive Bayes
estimators (additive alpha = a is our alpha = a + 1), ``scipy.stats`` log-pmfs, a
numerical maximiser of the log posterior written with ``scipy.stats`` densities, and
the textbook moments of the Beta, Dirichlet and Gamma distributions.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import softmax
from sklearn import naive_bayes as sknb
from sklearn.datasets import load_breast_cancer, load_digits

import bayesgen as bg
from bayesgen.families import get_family

ESTIMATORS = {
    "bernoulli": bg.BernoulliNB,
    "multinomial": bg.MultinomialNB,
    "categorical": bg.CategoricalNB,
    "poisson": bg.PoissonNB,
}


@pytest.fixture(scope="module")
def digits():
    return load_digits(return_X_y=True)


@pytest.fixture(scope="module")
def cancer_binary():
    X, y = load_breast_cancer(return_X_y=True)
    return (X > np.median(X, axis=0)).astype(float), y


@pytest.fixture(scope="module")
def random_codes():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 300)
    # class-dependent category probabilities, 4 features with 2..6 categories
    X = np.column_stack(
        [(rng.integers(0, c, 300) + (y == 1) * rng.integers(0, 2, 300)) % c for c in (3, 6, 2, 4)]
    ).astype(float)
    return X, y


def small_data(name: str, seed: int = 0, n: int = 40):
    """Small (X, y) with 3 classes suited to family ``name``; every value occurs."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    if name == "bernoulli":
        p = np.array([[0.2, 0.7, 0.5, 0.9], [0.6, 0.3, 0.4, 0.1], [0.5, 0.5, 0.8, 0.3]])
        X = (rng.uniform(size=(n, 4)) < p[y]).astype(float)
    elif name == "categorical":
        X = np.column_stack([rng.integers(0, c, n) for c in (3, 2, 5, 4)]).astype(float)
        X[:5] = [[2, 1, 4, 3]] * 5
    else:
        lam = np.array([[1.0, 3.0, 0.5, 2.0], [4.0, 1.0, 2.0, 0.7], [2.0, 2.0, 2.0, 2.0]])
        X = rng.poisson(lam[y]).astype(float)
    return X, y


def fitted_family(name: str, X, y, w=None, **kw):
    family = get_family(name)(**kw)
    w = np.ones(len(y)) if w is None else w
    X = family.check_X(X, method="map", who=name)
    st = family.stats(X, y, w, int(y.max()) + 1)
    family = family.learned(st)  # as a fit's family (a categorical family's levels)
    return family, st, family.prior(st)


# --------------------------------------------------------------- scikit-learn
@pytest.mark.parametrize("a", [1.0, 0.5, "array"])
def test_multinomial_matches_sklearn(digits, a):
    X, y = digits
    a = np.linspace(0.2, 3.0, X.shape[1]) if isinstance(a, str) else a
    ours = bg.MultinomialNB(alpha=np.asarray(a) + 1, class_alpha=1).fit(X, y)
    ref = sknb.MultinomialNB(alpha=a).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(ours.feature_log_prob_, ref.feature_log_prob_, rtol=1e-10)
    np.testing.assert_allclose(ours.feature_count_, ref.feature_count_)
    np.testing.assert_allclose(ours.class_count_, ref.class_count_)
    # scikit-learn's joint log-probability omits the multinomial coefficient, as our
    # discriminant scores do
    np.testing.assert_allclose(ours.decision_function(X), ref.predict_joint_log_proba(X))
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


@pytest.mark.parametrize("data", ["digits", "cancer"])
def test_bernoulli_matches_sklearn(digits, cancer_binary, data):
    if data == "digits":
        X, y = digits
        ours = bg.BernoulliNB(alpha=2.0, binarize=8).fit(X, y)
        ref = sknb.BernoulliNB(alpha=1.0, binarize=8).fit(X, y)
    else:
        X, y = cancer_binary
        # (scikit-learn's BernoulliNB cannot take a per-feature alpha; the MAP test does)
        ours = bg.BernoulliNB(alpha=1.5).fit(X, y)
        ref = sknb.BernoulliNB(alpha=0.5, binarize=None).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(ours.feature_log_prob_, ref.feature_log_prob_, rtol=1e-10)
    np.testing.assert_allclose(ours.feature_count_, ref.feature_count_)
    np.testing.assert_allclose(
        ours.predict_joint_log_proba(X), ref.predict_joint_log_proba(X), rtol=1e-10
    )


@pytest.mark.parametrize("data", ["digits", "random"])
def test_categorical_matches_sklearn(digits, random_codes, data):
    X, y = digits if data == "digits" else random_codes
    # scikit-learn's categories are 0..max(x_j), ours the observed values (4 digits
    # features have gaps): declaring 0..max(x_j) with min_categories makes them equal
    mins = (X.max(axis=0) + 1).astype(int)
    ours = bg.CategoricalNB(alpha=1.5, min_categories=mins).fit(X, y)
    ref = sknb.CategoricalNB(alpha=0.5, min_categories=mins).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(
        ours.predict_joint_log_proba(X), ref.predict_joint_log_proba(X), rtol=1e-10
    )
    np.testing.assert_array_equal(ours.n_categories_, ref.n_categories_)
    assert len(ours.feature_log_prob_) == X.shape[1]
    for mine, theirs in zip(ours.feature_log_prob_, ref.feature_log_prob_, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10)
    for mine, theirs in zip(ours.category_count_, ref.category_count_, strict=True):
        np.testing.assert_allclose(mine, theirs)


def test_categorical_min_categories_matches_sklearn(random_codes):
    X, y = random_codes
    mins = np.array([5, 2, 1, 7])  # larger than seen (3, 6, 2, 4) for features 0 and 3
    ours = bg.CategoricalNB(alpha=2.0, min_categories=mins).fit(X, y)
    ref = sknb.CategoricalNB(alpha=1.0, min_categories=mins).fit(X, y)
    np.testing.assert_array_equal(ours.n_categories_, [5, 6, 2, 7])
    np.testing.assert_array_equal(ours.n_categories_, ref.n_categories_)
    for mine, theirs in zip(ours.feature_log_prob_, ref.feature_log_prob_, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10)
    X_new = X[:10].copy()
    X_new[:, 0] = 4  # never seen in training, allowed by min_categories
    X_new[:, 3] = 6
    np.testing.assert_allclose(ours.predict_proba(X_new), ref.predict_proba(X_new), atol=1e-6)
    # a scalar applies to every feature
    scalar = bg.CategoricalNB(min_categories=6).fit(X, y)
    np.testing.assert_array_equal(scalar.n_categories_, [6, 6, 6, 6])


# ------------------------------------------------------------ scipy.stats
def scipy_loglik(name: str, clf, X) -> np.ndarray:
    """sum_j log p(x_nj | k) from scipy.stats, (n, K)."""
    if name == "bernoulli":
        theta = np.exp(clf.feature_log_prob_)
        return stats.bernoulli.logpmf(X[:, None, :], theta[None]).sum(-1)
    if name == "poisson":
        return stats.poisson.logpmf(X[:, None, :], clf.rate_[None]).sum(-1)
    if name == "multinomial":
        theta = np.exp(clf.feature_log_prob_)
        return np.column_stack([stats.multinomial.logpmf(X, X.sum(1), t) for t in theta])
    probs = [np.exp(f) for f in clf.feature_log_prob_]  # categorical
    codes = X.astype(int)
    out = np.zeros((X.shape[0], len(clf.classes_)))
    for j, p in enumerate(probs):
        with np.errstate(divide="ignore"):
            out += np.log(p[:, codes[:, j]]).T
    return out


@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.parametrize("method", ["map", "mle"])
def test_full_loglik_matches_scipy(name, method):
    X, y = small_data(name, seed=1)
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    clf = ESTIMATORS[name](method=method, alpha=2.5).fit(X, y, sample_weight=w)
    X_test, _ = small_data(name, seed=5, n=30)
    expected = scipy_loglik(name, clf, X_test) + np.log(clf.class_prior_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = clf.predict_joint_log_proba(X_test)
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, expected, rtol=1e-10)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_loglik_broadcasts_over_draws(name):
    X, y = small_data(name, seed=1)
    family, st, prior = fitted_family(name, X, y)
    draws = family.draw(family.posterior(st, prior), 3, np.random.default_rng(0))
    batched = family.log_lik(X, draws)
    assert batched.shape == (3, X.shape[0], 3)
    for s in range(3):
        single = family.log_lik(X, {k: v[s] for k, v in draws.items()})
        np.testing.assert_allclose(batched[s], single, rtol=1e-12)


# ------------------------------------------------------------------- MAP
def argmax_simplex(logpost, m: int) -> np.ndarray:
    """Maximise logpost(theta) over the (m - 1)-simplex via softmax coordinates."""
    res = optimize.minimize(
        lambda z: -logpost(softmax(np.r_[0.0, z])),
        np.zeros(m - 1),
        method="BFGS",
        options={"gtol": 1e-10},
    )
    return softmax(np.r_[0.0, res.x])


def test_bernoulli_map_is_posterior_mode():
    X, y = small_data("bernoulli", seed=2)
    alpha = np.array([1.5, 2.0, 3.0, 1.2])
    clf = bg.BernoulliNB(alpha=alpha).fit(X, y)
    for k in range(3):
        for j in range(4):
            x = X[y == k, j]
            res = optimize.minimize_scalar(
                lambda t, x=x, a=alpha[j]: (
                    -(stats.beta.logpdf(t, a, a) + stats.bernoulli.logpmf(x, t).sum())
                ),
                bounds=(1e-9, 1 - 1e-9),
                method="bounded",
                options={"xatol": 1e-10},
            )
            assert np.exp(clf.feature_log_prob_[k, j]) == pytest.approx(res.x, abs=1e-6)


def test_multinomial_map_is_posterior_mode():
    X, y = small_data("multinomial", seed=2)
    alpha = np.array([1.5, 2.0, 3.0, 1.2])
    clf = bg.MultinomialNB(alpha=alpha).fit(X, y)
    for k in range(3):
        Xk = X[y == k]

        def logpost(t, Xk=Xk):
            return (
                stats.dirichlet.logpdf(t, alpha) + stats.multinomial.logpmf(Xk, Xk.sum(1), t).sum()
            )

        np.testing.assert_allclose(
            np.exp(clf.feature_log_prob_[k]), argmax_simplex(logpost, 4), atol=1e-5
        )


def test_categorical_map_is_posterior_mode():
    X, y = small_data("categorical", seed=2)
    clf = bg.CategoricalNB(alpha=[1.5, 2.0, 3.0, 1.2], min_categories=[4, 2, 5, 4]).fit(X, y)
    alpha = [1.5, 2.0, 3.0, 1.2]
    for k in range(3):
        for j, c in enumerate(clf.n_categories_):
            counts = np.bincount(X[y == k, j].astype(int), minlength=c)

            def logpost(t, counts=counts, a=alpha[j], c=c):
                return stats.dirichlet.logpdf(t, np.full(c, a)) + np.sum(counts * np.log(t))

            np.testing.assert_allclose(
                np.exp(clf.feature_log_prob_[j][k]), argmax_simplex(logpost, c), atol=1e-5
            )


def test_poisson_map_is_posterior_mode():
    X, y = small_data("poisson", seed=2)
    r = np.array([2.0, 0.5, 1.0, 3.0])
    clf = bg.PoissonNB(alpha=2.5, rate_prior=r).fit(X, y)
    for k in range(3):
        for j in range(4):
            x = X[y == k, j]
            res = optimize.minimize_scalar(
                lambda u, x=x, r=r[j]: (
                    -(
                        stats.gamma.logpdf(np.exp(u), 2.5, scale=r / 1.5)  # mode at r
                        + stats.poisson.logpmf(x, np.exp(u)).sum()
                    )
                ),
                bounds=(-10, 5),
                method="bounded",
                options={"xatol": 1e-10},
            )
            assert clf.rate_[k, j] == pytest.approx(np.exp(res.x), rel=1e-6)


def test_poisson_default_rate_prior_is_feature_mean():
    X, y = small_data("poisson", seed=2)
    X[:, 2] = 0.0  # all-zero feature: the floored prior keeps its rate positive
    default = bg.PoissonNB().fit(X, y)
    mean = np.maximum(X.mean(0), 0.5 / len(y))
    explicit = bg.PoissonNB(rate_prior=mean).fit(X, y)
    np.testing.assert_allclose(default.rate_, explicit.rate_)
    assert np.all(default.rate_[:, 2] > 0)
    mle = bg.PoissonNB(method="mle").fit(X, y)
    np.testing.assert_allclose(mle.rate_, bg.PoissonNB(alpha=1.0).fit(X, y).rate_)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_alpha_one_is_mle(name):
    X, y = small_data(name, seed=3)
    a = ESTIMATORS[name](method="mle").fit(X, y)
    b = ESTIMATORS[name](method="map", alpha=1.0).fit(X, y)
    np.testing.assert_allclose(a.predict_joint_log_proba(X), b.predict_joint_log_proba(X))


# -------------------------------------------------------- MLE zero probabilities
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_mle_unseen_value(name):
    if name == "categorical":
        X = np.array([[0, 0], [1, 0], [0, 1], [2, 1], [1, 2]], dtype=float)
        possible, impossible = [2, 1], [2, 0]  # x0 = 2 only in class 1, x1 = 0 only in 0
    elif name == "bernoulli":
        X = np.array([[1, 0, 1], [1, 0, 1], [0, 1, 1], [1, 1, 1]], dtype=float)
        possible, impossible = [0, 1, 1], [0, 1, 0]  # x2 = 0 never seen
    else:
        X = np.array([[3, 0, 0, 0], [1, 2, 0, 0], [2, 0, 1, 0], [0, 4, 1, 0]], dtype=float)
        possible, impossible = [1, 0, 2, 0], [1, 0, 0, 1]  # word 3 never seen
    y = np.array([0, 0, 1, 1, 1][: len(X)])
    clf = ESTIMATORS[name](method="mle").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        proba = clf.predict_proba([possible])
    np.testing.assert_allclose(proba, [[0.0, 1.0]], atol=1e-12)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        proba = clf.predict_proba([impossible, possible])
    messages = [str(c.message) for c in caught]
    assert len(messages) == 1 and "1 row(s)" in messages[0], messages
    assert issubclass(caught[0].category, bg.DataWarning)
    assert not np.isnan(proba).any()
    np.testing.assert_allclose(proba[0], clf.class_prior_)
    # zero probabilities (and 0 log 0 = 0) agree with scipy.stats
    rows = np.array([possible, impossible], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        joint = clf.predict_joint_log_proba(rows)
    expected = scipy_loglik(name, clf, rows) + np.log(clf.class_prior_)
    np.testing.assert_array_equal(np.isinf(joint), [[True, False], [True, True]])
    np.testing.assert_allclose(joint, expected, rtol=1e-10)


# ----------------------------------------------------------------- errors
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_negative_values_rejected(name):
    X, y = small_data(name)
    bad = X.copy()
    bad[0, 0] = -1.0
    make = ESTIMATORS[name]
    if name == "bernoulli":  # the default binarize=0.0 thresholds (as scikit-learn):
        assert make().fit(bad, y).feature_count_[y[0], 0] == make().fit(
            np.where(bad > 0, 1.0, 0.0), y).feature_count_[y[0], 0]
        make = lambda: bg.BernoulliNB(binarize=None)  # noqa: E731 (strict: 0 and 1 only)
    with pytest.raises(ValueError, match="Negative values in data passed to"):
        make().fit(bad, y)
    clf = make().fit(X, y)
    with pytest.raises(ValueError, match="Negative values in data passed to"):
        clf.predict(bad)


def test_positive_only_tag():
    for name, cls in ESTIMATORS.items():
        if name != "bernoulli":
            assert cls().__sklearn_tags__().input_tags.positive_only
    # BernoulliNB's default binarize=0.0 takes any real X; binarize=None only 0 and 1
    assert not bg.BernoulliNB().__sklearn_tags__().input_tags.positive_only
    assert bg.BernoulliNB(binarize=None).__sklearn_tags__().input_tags.positive_only


def test_mixed_bernoulli_part_has_the_standalone_default(digits):
    """A MixedNB part's defaults are the standalone estimator's: binarize=0.0."""
    X, y = digits
    alone = bg.BernoulliNB().fit(X, y)
    part = bg.MixedNB(families=[("bernoulli", list(range(X.shape[1])))]).fit(X, y)
    np.testing.assert_allclose(part.predict_proba(X), alone.predict_proba(X), rtol=1e-12)
    with pytest.raises(ValueError, match="only 0 and 1"):
        bg.MixedNB(families=[("bernoulli", list(range(X.shape[1])), {"binarize": None})]
                   ).fit(X, y)


def test_bernoulli_binarize(digits):
    X, y = digits
    with pytest.raises(ValueError, match="binarize"):
        bg.BernoulliNB(binarize=None).fit(X, y)  # strict: only 0 and 1
    # the default threshold is scikit-learn's 0.0: x > 0 is a presence
    np.testing.assert_allclose(bg.BernoulliNB().fit(X, y).predict_proba(X),
                               bg.BernoulliNB(binarize=None).fit((X > 0) * 1.0, y)
                               .predict_proba((X > 0) * 1.0))
    pre = bg.BernoulliNB().fit((X > 4).astype(float), y)
    thresholded = bg.BernoulliNB(binarize=4).fit(X, y)
    np.testing.assert_allclose(thresholded.predict_proba(X), pre.predict_proba((X > 4) * 1.0))
    # with a threshold negative values are meaningful
    Xc = X - 8.0
    centred = bg.BernoulliNB(binarize=-4.0).fit(Xc, y)
    np.testing.assert_allclose(centred.predict_proba(Xc), pre.predict_proba((X > 4) * 1.0))
    with pytest.raises(ValueError, match="'binarize' parameter of BernoulliNB must be None or"):
        bg.BernoulliNB(binarize="high").fit(X, y)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_alpha_validation(name):
    X, y = small_data(name)
    with pytest.raises(ValueError, match=r"alpha must be a scalar or have one value per feature"):
        ESTIMATORS[name](alpha=[2.0, 2.0, 2.0]).fit(X, y)
    with pytest.raises(ValueError, match=r"'alpha' parameter of \w+ must be a float in the"):
        ESTIMATORS[name](alpha=0.0).fit(X, y)
    with pytest.raises(ValueError, match="alpha must be finite and > 0"):
        ESTIMATORS[name](alpha=[1.0, 1.0, 0.0, 1.0]).fit(X, y)
    with pytest.raises(ValueError, match="alpha >= 1"):
        ESTIMATORS[name](alpha=0.5).fit(X, y)
    # a per-feature array is accepted
    ESTIMATORS[name](alpha=[1.0, 2.0, 3.0, 4.0]).fit(X, y)


@pytest.mark.parametrize("name", ["bernoulli", "multinomial", "categorical"])
def test_posterior_allows_alpha_below_one(name):
    X, y = small_data(name)
    family, st, prior = fitted_family(name, X, y, alpha=0.3)
    draws = family.draw(family.posterior(st, prior), 5, np.random.default_rng(0))
    assert np.all(np.isfinite(family.log_lik(X, draws)))


@pytest.mark.parametrize("name", ["multinomial", "poisson"])
def test_every_method_takes_real_valued_counts(name):
    """Real-valued term weights are accepted by the posterior methods too (issue 26):
    the Gamma/Dirichlet posteriors are defined for them; negative values are not."""
    family = get_family(name)()
    X = np.array([[1.0, 0.5], [2.0, 0.0]])
    for method in ("mle", "map", "conjugate", "mcmc"):
        np.testing.assert_array_equal(family.check_X(X, method=method, who="CountNB"), X)
    with pytest.raises(ValueError, match="must be >= 0"):
        family.check_X(-X, method="conjugate", who="CountNB")
    # term weights work for point estimates
    clf = ESTIMATORS[name]().fit(
        np.array([[1.0, 0.5], [0.2, 1.5], [2.0, 0.0], [0.0, 3.1]]), [0, 1, 0, 1]
    )
    assert np.all(np.isfinite(clf.predict_joint_log_proba([[0.3, 0.7]])))


def test_categorical_code_errors(random_codes):
    X, y = random_codes
    clf = bg.CategoricalNB().fit(X, y)
    bad = X[:3].copy()
    bad[1, 2] = 5  # feature 2 has C_j = 2
    with pytest.raises(ValueError, match=r"feature 2 has category code 5.*C_j = 2.*min_categories"):
        clf.predict(bad)
    bad = X[:3].copy()
    bad[0, 1] = 1.5
    with pytest.raises(ValueError, match="integer category codes"):
        clf.predict(bad)
    with pytest.raises(ValueError, match="integer category codes"):
        bg.CategoricalNB().fit(X + 0.5, y)
    with pytest.raises(ValueError, match="min_categories"):
        bg.CategoricalNB(min_categories=[3, 3]).fit(X, y)
    with pytest.raises(ValueError, match="min_categories"):
        bg.CategoricalNB(min_categories=2.5).fit(X, y)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_mle_empty_class_raises(name):
    X, y = small_data(name)
    w = np.where(y == 2, 0.0, 1.0)
    with pytest.raises(ValueError, match="class 2 has no data"):
        ESTIMATORS[name](method="mle").fit(X, y, sample_weight=w)
    # the prior makes MAP well defined
    clf = ESTIMATORS[name](method="map").fit(X, y, sample_weight=w)
    assert np.all(np.isfinite(clf.predict_log_proba(X)[:, :2]))


# ------------------------------------------------------------- invariances
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_merge_halves_equals_all(name):
    X, y = small_data(name, seed=4)
    if name == "categorical":  # the halves see different numbers of categories
        order = np.argsort(X[:, 2], kind="stable")
        X, y = X[order], y[order]
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    family = get_family(name)()
    whole = family.stats(X, y, w, 3)
    h = len(y) // 2
    merged = family.merge(
        family.stats(X[:h], y[:h], w[:h], 3), family.stats(X[h:], y[h:], w[h:], 3)
    )
    assert whole.keys() == merged.keys()
    for key in whole:
        np.testing.assert_allclose(merged[key], whole[key], rtol=1e-12)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_weight_two_equals_duplicated_rows(name):
    X, y = small_data(name, seed=6)
    w = np.where(np.arange(len(y)) % 4 == 0, 2.0, 1.0)
    weighted = ESTIMATORS[name]().fit(X, y, sample_weight=w)
    dup = np.repeat(np.arange(len(y)), w.astype(int))
    duplicated = ESTIMATORS[name]().fit(X[dup], y[dup])
    np.testing.assert_allclose(weighted.predict_proba(X), duplicated.predict_proba(X))
    np.testing.assert_allclose(weighted.class_count_, duplicated.class_count_)
    key = "category_count_" if name == "categorical" else "feature_count_"
    for a, b in zip(getattr(weighted, key), getattr(duplicated, key), strict=True):
        np.testing.assert_allclose(a, b)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_relabeled_classes(name):
    X, y = small_data(name, seed=7)
    names = np.array(["zeta", "alpha", "mu"])  # sorted order: alpha, mu, zeta
    base = ESTIMATORS[name]().fit(X, y)
    relabeled = ESTIMATORS[name]().fit(X, names[y])
    np.testing.assert_array_equal(relabeled.classes_, ["alpha", "mu", "zeta"])
    np.testing.assert_allclose(relabeled.predict_proba(X), base.predict_proba(X)[:, [1, 2, 0]])
    np.testing.assert_array_equal(relabeled.predict(X), names[base.predict(X)])


# ----------------------------------------------------- posterior and draws
def check_moments(draws, mean, var, n_draws):
    """Sample mean and variance within 5 Monte Carlo standard errors of the truth."""
    se_mean = np.sqrt(var / n_draws)
    assert np.all(np.abs(draws.mean(0) - mean) < 5 * se_mean + 1e-12)
    # sd of the sample variance: sqrt((m4 - var^2) / n), m4 the 4th central moment
    m4 = ((draws - draws.mean(0)) ** 4).mean(0)
    se_var = np.sqrt(np.maximum(m4 - var**2, 0.0) / n_draws)
    assert np.all(np.abs(draws.var(0) - var) < 5 * se_var + 1e-12)


N_DRAWS = 20_000


def test_bernoulli_posterior_draws():
    X, y = small_data("bernoulli", seed=8)
    family, st, prior = fitted_family("bernoulli", X, y, alpha=1.5)
    theta = family.draw(family.posterior(st, prior), N_DRAWS, np.random.default_rng(1))["theta"]
    assert theta.shape == (N_DRAWS, 3, 4)
    ones = np.array([X[y == k].sum(0) for k in range(3)])
    zeros = np.array([(1 - X[y == k]).sum(0) for k in range(3)])
    a, b = ones + 1.5, zeros + 1.5
    check_moments(theta, a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1)), N_DRAWS)


def test_multinomial_posterior_draws():
    X, y = small_data("multinomial", seed=8)
    alpha = np.array([0.5, 1.0, 2.0, 3.0])
    family, st, prior = fitted_family("multinomial", X, y, alpha=alpha)
    theta = family.draw(family.posterior(st, prior), N_DRAWS, np.random.default_rng(2))["theta"]
    assert theta.shape == (N_DRAWS, 3, 4)
    np.testing.assert_allclose(theta.sum(-1), 1.0)
    a = np.array([X[y == k].sum(0) for k in range(3)]) + alpha
    a0 = a.sum(1, keepdims=True)
    check_moments(theta, a / a0, a * (a0 - a) / (a0**2 * (a0 + 1)), N_DRAWS)


def test_categorical_posterior_draws():
    X, y = small_data("categorical", seed=8)
    family, st, prior = fitted_family("categorical", X, y, alpha=0.05, min_categories=[4, 2, 5, 6])
    theta = family.draw(family.posterior(st, prior), N_DRAWS, np.random.default_rng(3))["theta"]
    assert theta.shape == (N_DRAWS, 3, 4, 6)
    np.testing.assert_allclose(theta.sum(-1), 1.0)
    valid = np.arange(6) < np.array([4, 2, 5, 6])[:, None]
    assert np.all(theta[..., ~valid] == 0.0)
    assert np.all(theta[..., valid] > 0.0), "tiny concentrations must not give exact zeros"
    for k in range(3):
        for j, c in enumerate([4, 2, 5, 6]):
            a = np.bincount(X[y == k, j].astype(int), minlength=c) + 0.05
            a0 = a.sum()
            check_moments(theta[:, k, j, :c], a / a0, a * (a0 - a) / (a0**2 * (a0 + 1)), N_DRAWS)


def test_poisson_posterior_draws():
    X, y = small_data("poisson", seed=8)
    r = np.array([1.0, 2.0, 0.5, 1.5])
    family, st, prior = fitted_family("poisson", X, y, alpha=3.0, rate_prior=r)
    rate = family.draw(family.posterior(st, prior), N_DRAWS, np.random.default_rng(4))["rate"]
    assert rate.shape == (N_DRAWS, 3, 4)
    shape = np.array([X[y == k].sum(0) for k in range(3)]) + 3.0
    rate_param = np.array([[np.sum(y == k)] for k in range(3)]) + 2.0 / r  # (alpha-1)/r
    check_moments(rate, shape / rate_param, shape / rate_param**2, N_DRAWS)


# ------------------------------------------------------------------ sample
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_sample_matches_fitted_model(name):
    X, y = small_data(name, seed=9, n=90)
    clf = ESTIMATORS[name]().fit(X, y)
    Xs, ys = clf.sample(4000, classes=1, random_state=0)
    assert Xs.shape == (4000, 4) and np.all(ys == 1)
    assert np.all(Xs >= 0) and np.array_equal(Xs, np.round(Xs))
    if name == "bernoulli":
        expected = np.exp(clf.feature_log_prob_[1])
    elif name == "poisson":
        expected = clf.rate_[1]
    elif name == "multinomial":  # totals ~ Poisson(mean training row total of the class)
        expected = np.exp(clf.feature_log_prob_[1]) * X[y == 1].sum(1).mean()
    else:
        expected = [np.exp(f[1]) @ np.arange(f.shape[1]) for f in clf.feature_log_prob_]
        assert np.all(Xs < clf.n_categories_)
    np.testing.assert_allclose(Xs.mean(0), expected, rtol=0.1, atol=0.03)
    again, _ = clf.sample(4000, classes=1, random_state=0)
    np.testing.assert_array_equal(again, Xs)


# ------------------------------------------------ closed-form posterior predictive
def scipy_predictive(name: str, X, post) -> np.ndarray:
    """log p(x | y=k, data) from scipy.stats' compound distributions, (n, K)."""
    if name == "bernoulli":
        return stats.betabinom.logpmf(X[:, None, :], 1, post["a"], post["b"]).sum(-1)
    if name == "poisson":
        a, b = post["a"], post["b"]
        return stats.nbinom.logpmf(X[:, None, :], a, b / (b + 1.0)).sum(-1)
    conc = post["concentration"]
    if name == "multinomial":
        return np.column_stack([stats.dirichlet_multinomial.logpmf(X, a, X.sum(1)) for a in conc])
    out = np.zeros((X.shape[0], conc.shape[0]))  # categorical: one-hot, n = 1
    for j in range(X.shape[1]):
        valid = conc[0, j] > 0
        onehot = np.eye(valid.sum())[X[:, j].astype(int)]
        for k in range(conc.shape[0]):
            out[:, k] += stats.dirichlet_multinomial.logpmf(onehot, conc[k, j, valid], 1)
    return out


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_log_predictive_matches_scipy(name):
    X, y = small_data(name, seed=10)
    kw = {"min_categories": [3, 3, 5, 4]} if name == "categorical" else {}
    family, st, prior = fitted_family(name, X, y, alpha=1.7, **kw)
    post = family.posterior(st, prior)
    X_test, _ = small_data(name, seed=11, n=25)
    got = family.log_predictive(X_test, post)
    assert got.shape == (25, 3)
    np.testing.assert_allclose(got, scipy_predictive(name, X_test, post), rtol=1e-10)
