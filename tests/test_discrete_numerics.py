"""Issue 12 numerics of the discrete families: categories are observed values, extreme
sample weights, huge counts and rates, tiny term weights.

References are independent of the code under test: scikit-learn's ``OrdinalEncoder`` +
``CategoricalNB`` and ``MultinomialNB``, ``scipy.stats`` log-pmfs and log-densities,
counts written here from raw X, and closed-form limits (a Dirichlet-multinomial with
huge concentration is a multinomial).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln
from sklearn import naive_bayes as sknb
from sklearn.preprocessing import OrdinalEncoder

import bayesgen as bg
from bayesgen.families import dirichlet as dr
from bayesgen.families import get_family

ESTIMATORS = {
    "bernoulli": bg.BernoulliNB,
    "multinomial": bg.MultinomialNB,
    "categorical": bg.CategoricalNB,
    "poisson": bg.PoissonNB,
}


def data(name: str, n: int = 60, seed: int = 0):
    """(X, y) with 2 classes suited to family ``name``."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    if name == "bernoulli":
        X = (rng.uniform(size=(n, 4)) < np.where(y[:, None] == 1, 0.7, 0.3)).astype(float)
    elif name == "categorical":
        X = np.column_stack([rng.integers(0, c, n) for c in (3, 2, 4)]).astype(float)
    else:
        X = rng.poisson(np.where(y[:, None] == 1, [1.0, 3.0, 0.5], [2.0, 1.0, 2.0])).astype(float)
    return X, y


@pytest.fixture(scope="module")
def gappy():
    """Categorical codes with gaps and a huge code: categories {0, 1e9}, {2, 5, 7}, {0, 1}."""
    rng = np.random.default_rng(1)
    n = 90
    y = rng.integers(0, 3, n)
    X = np.column_stack([
        np.where(rng.uniform(size=n) < 0.3 + 0.2 * y, 1e9, 0.0),
        rng.choice([2.0, 5.0, 7.0], size=n),
        (rng.uniform(size=n) < 0.5).astype(float),
    ])
    return X, y


# ---------------------------------------------------- categories = observed values
def test_huge_code_is_one_category(gappy):
    X, y = gappy
    clf = bg.CategoricalNB().fit(X, y)  # was a 67 GiB allocation (codes 0..1e9)
    assert [list(c) for c in clf.categories_] == [[0.0, 1e9], [2.0, 5.0, 7.0], [0.0, 1.0]]
    np.testing.assert_array_equal(clf.n_categories_, [2, 3, 2])
    assert clf._params["theta"].shape == (3, 3, 3)
    for j, cats in enumerate(clf.categories_):
        counts = np.array([[np.sum((X[:, j] == c) & (y == k)) for c in cats] for k in range(3)])
        np.testing.assert_array_equal(clf.category_count_[j], counts)
        # MAP with alpha = 2: (count + 1) / (N_k + C_j)
        expected = (counts + 1.0) / (np.bincount(y)[:, None] + cats.size)
        np.testing.assert_allclose(np.exp(clf.feature_log_prob_[j]), expected, rtol=1e-12)


@pytest.mark.parametrize("method", ["mle", "map", "conjugate"])
def test_observed_values_equal_ordinal_codes(gappy, method):
    """Raw values and OrdinalEncoder codes (0..C_j - 1, the reference encoding) give the
    same model; for point methods it is also scikit-learn's on the codes."""
    X, y = gappy
    codes = OrdinalEncoder().fit_transform(X)
    kw = {"method": method, "alpha": 1.7, "draws": 50, "chains": 2, "random_state": 0}
    raw = bg.CategoricalNB(**kw).fit(X, y)
    coded = bg.CategoricalNB(**kw).fit(codes, y)
    np.testing.assert_allclose(raw.predict_joint_log_proba(X), coded.predict_joint_log_proba(codes),
                               rtol=1e-12)
    for a, b in zip(raw.feature_log_prob_, coded.feature_log_prob_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    if method == "map":  # scikit-learn's additive alpha = 0.7 is our alpha = 1.7
        ref = sknb.CategoricalNB(alpha=0.7).fit(codes, y)
        np.testing.assert_allclose(raw.predict_proba(X), ref.predict_proba(codes), rtol=1e-10)
        np.testing.assert_array_equal(raw.n_categories_, ref.n_categories_)


def test_unseen_value_raises_and_declared_code_gets_prior_share(gappy):
    X, y = gappy
    clf = bg.CategoricalNB().fit(X, y)
    bad = X[:4].copy()
    bad[2, 1] = 3.0  # between the categories 2 and 5 of feature 1
    with pytest.raises(ValueError, match=r"feature 1 has category code 3.*C_j = 3.*2, 5, 7"):
        clf.predict(bad)
    bad[2, 1] = 8.0  # above all of them
    with pytest.raises(ValueError, match="feature 1 has category code 8"):
        clf.predict_proba(bad)
    # min_categories declares the codes 0..m-1: never seen, they get the prior's share
    declared = bg.CategoricalNB(alpha=3.0, min_categories=[1, 4, 1]).fit(X, y)
    assert [list(c) for c in declared.categories_][1] == [0.0, 1.0, 2.0, 3.0, 5.0, 7.0]
    row = X[:1].copy()
    row[0, 1] = 3.0
    n_k = np.bincount(y)
    share = np.exp(declared.feature_log_prob_[1][:, 3])
    np.testing.assert_allclose(share, 2.0 / (n_k + 6 * 2.0), rtol=1e-12)
    assert np.all(np.isfinite(declared.predict_log_proba(row)))


def test_categorical_sample_returns_category_values(gappy):
    X, y = gappy
    for method in ("map", "conjugate"):
        clf = bg.CategoricalNB(method=method, draws=20, chains=1, random_state=0).fit(X, y)
        Xs, _ = clf.sample(3000, random_state=1)
        for j, cats in enumerate(clf.categories_):
            assert set(np.unique(Xs[:, j])) <= set(cats)
        freq = np.mean(Xs[:, 0] == 1e9)
        assert freq == pytest.approx(np.mean(X[:, 0] == 1e9), abs=0.06)


def test_categorical_merge_unites_categories(gappy):
    X, y = gappy
    family = get_family("categorical")()
    w = np.random.default_rng(0).uniform(0.5, 2.0, y.size)
    order = np.argsort(X[:, 1], kind="stable")  # the halves see different categories
    X, y, w = X[order], y[order], w[order]
    h = y.size // 2
    halves = [family.stats(X[s], y[s], w[s], 3) for s in (slice(0, h), slice(h, None))]
    merged = family.merge(*halves)
    whole = family.stats(X, y, w, 3)
    for key in whole:
        np.testing.assert_allclose(merged[key], whole[key], rtol=1e-12)


def test_categorical_pymc_model_with_value_categories(gappy):
    """model_ observes the values (not codes); its log-density matches scipy.stats and
    the statistics model up to nothing (categorical drops no constant)."""
    from bayesgen.inference.model import build_stats_model

    X, y = gappy
    clf = bg.CategoricalNB(alpha=1.5, class_alpha=2.0).fit(X, y)
    model = clf.build_model(X, y)
    np.testing.assert_array_equal(model.rvs_to_values[model["x"]].eval(), X)
    rng = np.random.default_rng(3)
    pi = rng.dirichlet(np.ones(3))
    blocks = {c: rng.dirichlet(np.ones(c), size=(3, int(np.sum(clf.n_categories_ == c))))
              for c in np.unique(clf.n_categories_)}
    point = {"pi_simplex__": _stick(pi)}
    for c, block in blocks.items():
        point[f"theta_c{c}_simplex__"] = _stick(block)
    logp_full = model.compile_logp(jacobian=False)(point)
    logp_stats = build_stats_model(clf).compile_logp(jacobian=False)(point)
    # independent reference: priors, y and x with scipy.stats
    expected = stats.dirichlet.logpdf(pi, [2.0] * 3) + np.sum(np.log(pi[y]))
    theta = np.zeros((3, 3, 3))
    for c, block in blocks.items():
        for i, j in enumerate(np.flatnonzero(clf.n_categories_ == c)):
            theta[:, j, :c] = block[:, i]
            expected += sum(stats.dirichlet.logpdf(block[k, i], [1.5] * c) for k in range(3))
    for j, cats in enumerate(clf.categories_):
        expected += np.sum(np.log(theta[y, j, np.searchsorted(cats, X[:, j])]))
    assert logp_full == pytest.approx(expected, rel=1e-10)
    assert logp_stats == pytest.approx(expected, rel=1e-10)
    prior = clf.sample_prior_predictive(draws=30, random_state=0, X=X, y=y)
    x_rep = prior.prior_predictive["x"].values
    for j, cats in enumerate(clf.categories_):
        assert set(np.unique(x_rep[..., j])) <= set(cats)


def _stick(p: np.ndarray) -> np.ndarray:
    """PyMC's simplex transform (log-ratio to the last entry, centred), last axis."""
    import pymc as pm
    import pytensor.tensor as pt

    return pm.distributions.transforms.simplex.forward(pt.as_tensor(p)).eval()


# ------------------------------------------------------------------ sample weights
@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.parametrize("factor", [1e-300, 1e300])
def test_mle_invariant_to_common_weight_factor(name, factor):
    X, y = data(name)
    w = np.random.default_rng(4).uniform(0.5, 2.0, y.size)
    base = ESTIMATORS[name](method="mle").fit(X, y, sample_weight=w)
    scaled = ESTIMATORS[name](method="mle").fit(X, y, sample_weight=w * factor)
    np.testing.assert_allclose(
        scaled.predict_proba(X), base.predict_proba(X), rtol=1e-12, atol=1e-15
    )
    np.testing.assert_allclose(scaled.class_prior_, base.class_prior_, rtol=1e-12)
    attr = "rate_" if name == "poisson" else "feature_log_prob_"
    mine, ref = getattr(scaled, attr), getattr(base, attr)
    for a, b in zip(mine if isinstance(mine, list) else [mine],
                    ref if isinstance(ref, list) else [ref], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_overflowing_weights_raise_naming_sample_weight(name):
    X, y = data(name)
    w = np.full(y.size, 1e308)  # every class total overflows float64
    with pytest.raises(ValueError, match="sample_weight"):
        ESTIMATORS[name]().fit(X, y, sample_weight=w)
    w = np.ones(y.size)
    w[:2] = 1.7e308  # one per class: class totals finite, their sum N overflows
    with pytest.raises(ValueError, match="sample_weight"):
        ESTIMATORS[name]().fit(X, y, sample_weight=w)


@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.parametrize("method", ["mle", "map", "conjugate"])
def test_extreme_weight_ratios_never_nan(name, method):
    X, y = data(name)
    rng = np.random.default_rng(5)
    w = 10.0 ** rng.choice([-300.0, 300.0], size=y.size)
    w[:4] = [1e-300, 1e300, 1e-300, 1e300]  # both scales in both classes
    clf = ESTIMATORS[name](method=method, draws=30, chains=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # rows impossible under every class
        clf.fit(X, y, sample_weight=w)
        for proba in (clf.predict_proba(X), np.exp(clf.predict_log_proba(X))):
            assert not np.isnan(proba).any()
            np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    if method == "mle":  # the MLE ignores the 1e-300 rows to double precision
        keep = w > 1
        ref = ESTIMATORS[name](method="mle").fit(X[keep], y[keep], sample_weight=w[keep] / 1e300)
        np.testing.assert_allclose(clf.class_prior_, ref.class_prior_, rtol=1e-12)


# ------------------------------------------------------------- huge counts / rates
@pytest.mark.parametrize("cls", [bg.PoissonNB, bg.MultinomialNB])
def test_sample_with_huge_rates(cls):
    X, y = data("poisson")
    clf = cls().fit(X * 1e300, y)  # rates / mean totals ~ 1e300 (numpy stops at 9.2e18)
    Xs, ys = clf.sample(400, classes=1, random_state=0)
    assert np.all(np.isfinite(Xs)) and np.all(Xs >= 0)
    if cls is bg.PoissonNB:
        expected = clf.rate_[1]
    else:
        expected = np.exp(clf.feature_log_prob_[1]) * (X[y == 1] * 1e300).sum(1).mean()
    np.testing.assert_allclose(Xs.mean(axis=0), expected, rtol=1e-9)


def test_poisson_sampler_switches_to_normal_above_numpy_limit():
    rng = np.random.default_rng(0)
    mean = np.array([3.0, 5e17, 2e18, 1e25])
    draws = np.stack([dr.poisson(mean, rng) for _ in range(4000)])
    assert np.all(draws == np.round(draws))
    z = (draws.mean(0) - mean) / np.sqrt(mean / 4000)
    assert np.all(np.abs(z) < 5)
    np.testing.assert_allclose(draws.var(0) / mean, 1.0, atol=0.1)
    # below the switch, the stream is numpy's own
    small = np.array([1.0, 2.0])
    np.testing.assert_array_equal(dr.poisson(small, np.random.default_rng(7)),
                                  np.random.default_rng(7).poisson(small))
    with pytest.raises(ValueError, match="overflows float64"):
        dr.poisson(np.array([np.inf]), rng)


def test_log_rising_is_accurate_for_huge_concentrations():
    a = np.array([0.3, 5.0, 9999.0, 1e4, 3e7, 1e15, 1e300])
    x = np.array([0.0, 1.0, 2.0, 7.0, 3.0, 2.0, 2.0])
    got = dr.log_rising(a, x)
    # exact for integer x: sum_{i < x} log(a + i)
    exact = np.array([np.sum(np.log(a_ + np.arange(int(x_)))) for a_, x_ in zip(a, x, strict=True)])
    np.testing.assert_allclose(got, exact, rtol=1e-13)
    assert got[0] == 0.0
    # continuity at the switch to Stirling's series (non-integer x, a around 1e4)
    near = np.array([9999.999, 10000.0, 10000.001])
    ref = gammaln(near + 2.5) - gammaln(near)  # accurate to ~1e-11 at this size
    np.testing.assert_allclose(dr.log_rising(near, 2.5), ref, rtol=1e-13, atol=1e-10)


def test_conjugate_predictive_with_huge_counts():
    """Counts ~1e15: lgamma(a + x) - lgamma(a) would lose every digit. The
    Dirichlet-multinomial is then a multinomial at the posterior mean (error ~n^2/A),
    and the negative binomial is checked against its exact finite-product form."""
    X, y = data("poisson")
    big = np.round(X * 1e15)
    test = data("poisson", n=10, seed=3)[0]
    multi = bg.MultinomialNB(method="conjugate", draws=10, chains=1).fit(big, y)
    conc = multi._posterior["concentration"]
    theta = conc / conc.sum(axis=1, keepdims=True)
    got = multi._family.log_predictive(test, multi._posterior)
    ref = np.column_stack([stats.multinomial.logpmf(test, test.sum(1), t) for t in theta])
    np.testing.assert_allclose(got, ref, rtol=1e-9)
    pois = bg.PoissonNB(method="conjugate", draws=10, chains=1).fit(big, y)
    a, b = pois._posterior["a"], pois._posterior["b"]
    got = pois._family.log_predictive(test, pois._posterior)
    ref = np.zeros_like(got)
    for n, row in enumerate(test):
        for k in range(2):
            for j, x in enumerate(row.astype(int)):  # NB(a, b/(b+1)) with integer x
                ref[n, k] += np.sum(np.log(a[k, j] + np.arange(x))) - gammaln(x + 1)
                ref[n, k] += a[k, j] * np.log(b[k, j] / (b[k, j] + 1)) - x * np.log(b[k, j] + 1)
    np.testing.assert_allclose(got, ref, rtol=1e-12)


@pytest.mark.parametrize("name", ["multinomial", "poisson"])
def test_huge_counts_at_predict_finite_or_clear_error(name):
    X, y = data(name)
    clf = ESTIMATORS[name]().fit(X, y)
    proba = clf.predict_proba(X * 1e300)  # scores ~ -1e300: finite, decisive
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(1), 1.0)
    with pytest.raises(ValueError, match=r"overflows float64.*Rescale X"):
        clf.predict_joint_log_proba(X * 1e307)


@pytest.mark.parametrize("name", ["multinomial", "poisson"])
def test_tiny_term_weights(name):
    X, y = data(name)
    weights = X * 1e-300
    mle = ESTIMATORS[name](method="mle").fit(weights, y)
    proba = mle.predict_proba(weights)
    assert np.all(np.isfinite(proba))
    if name == "multinomial":  # theta = c / T is invariant to scaling the counts
        ref = sknb.MultinomialNB(alpha=0.0, force_alpha=True).fit(X, y)
        np.testing.assert_allclose(mle.feature_log_prob_, ref.feature_log_prob_, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        smoothed = ESTIMATORS[name](method="map").fit(weights, y).predict_proba(weights)
    assert np.all(np.isfinite(smoothed))


def test_poisson_prior_finite_for_tiny_total_weight():
    X, y = data("poisson")
    X[:, 2] = 0.0
    clf = bg.PoissonNB(method="conjugate", draws=20, chains=1, random_state=0)
    clf.fit(X, y, sample_weight=np.full(y.size, 1e-320))
    assert np.all(np.isfinite(clf._prior["beta"])) and np.all(clf._prior["beta"] > 0)
    assert np.all(np.isfinite(clf.predict_proba(X)))


def test_category_tables_take_strings_and_bools():
    """The family's statistics, estimates and log-likelihood work on any sortable
    values (strings, booleans) once the estimator lets them through: the same model as
    for their ordinal codes."""
    rng = np.random.default_rng(2)
    n = 60
    y = rng.integers(0, 2, n)
    words = np.array(["red", "green", "blue"], dtype=object)[rng.integers(0, 3, n)]
    flags = rng.uniform(size=n) < 0.3 + 0.4 * y
    X = np.empty((n, 2), dtype=object)
    X[:, 0], X[:, 1] = words, flags
    codes = OrdinalEncoder().fit_transform(X)
    results = []
    for data in (X, codes):
        family = get_family("categorical")(alpha=2.0)
        st = family.stats(data, y, np.ones(n), 2)
        family = family.learned(st)  # the categories of the statistics
        params = family.map(st, family.prior(st))
        results.append((family, family.log_lik(data, params)))
    (fam_x, ll_x), (_, ll_codes) = results
    assert [list(c) for c in fam_x.categories_] == [["blue", "green", "red"], [False, True]]
    np.testing.assert_allclose(ll_x, ll_codes, rtol=1e-12)
    with pytest.raises(ValueError, match="feature 0 has category code 'purple'"):
        fam_x.log_lik(np.array([["purple", True]], dtype=object), {"theta": np.ones((2, 2, 3))})


def test_two_class_decision_function_of_an_impossible_row_is_the_prior_log_odds():
    # MLE: a value never seen in either class has likelihood 0 under both; like
    # predict_proba (which falls back to the prior), the score is log pi_1 - log pi_0
    clf = bg.BernoulliNB(method="mle").fit([[0], [0], [0]], [0, 1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        score = clf.decision_function([[1]])
    np.testing.assert_allclose(score, [np.log(2.0)], rtol=1e-12)
