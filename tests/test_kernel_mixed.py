"""KernelNB (Gaussian KDE naive Bayes) and MixedNB (per-column families).

KernelNB is checked against scikit-learn's ``KernelDensity``, ``scipy.stats.norm``
and a brute-force 1-D maximisation of the leave-one-out likelihood written here;
MixedNB against the standalone estimators fitted on the column slices.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine
from sklearn.neighbors import KernelDensity

import bayesgen as bg
from bayesgen.families.kernel import family as kernel_module
from bayesgen.families.kernel import kde
from bayesgen.families.kernel.family import KernelFamily
from bayesgen.families.mixed import pymc
from bayesgen.families.mixed.family import MixedFamily
from bayesgen.inference import posterior

# ---------------------------------------------------------------- KernelNB


@pytest.fixture(scope="module")
def real_data():
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1, 2], [30, 25, 35])
    centres = np.array([[0.0, 5.0, -2.0], [2.0, 4.0, 0.0], [1.0, 8.0, 3.0]])
    scales = np.array([1.0, 0.5, 2.0])
    X = centres[y] + rng.normal(size=(y.size, 3)) * scales
    return X, y


def reference_loo(x: np.ndarray, h: float) -> float:
    """LOO log-likelihood of a 1-D sample: sum_i log mean_{l != i} N(x_i; x_l, h^2)."""
    dens = stats.norm.pdf(x[:, None], loc=x[None, :], scale=h)
    np.fill_diagonal(dens, 0.0)
    with np.errstate(divide="ignore"):  # tiny h: -inf, never the maximum
        return float(np.sum(np.log(dens.sum(axis=1) / (x.size - 1))))


def brute_force_max(objective, lo: float, hi: float) -> float:
    """argmax over log h: a fine grid, then Brent's method around the best point."""
    grid = np.linspace(lo, hi, 801)
    values = np.array([objective(t) for t in grid])
    b = int(values.argmax())
    res = optimize.minimize_scalar(
        lambda t: -objective(t),
        bounds=(grid[max(b - 1, 0)], grid[min(b + 1, grid.size - 1)]),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return float(res.x)


def silverman_reference(x: np.ndarray) -> float:
    q1, q3 = np.quantile(x, [0.25, 0.75], method="inverted_cdf")
    return 0.9 * min(np.std(x), (q3 - q1) / 1.34) * x.size ** (-0.2)


def test_log_lik_matches_sklearn_kernel_density(real_data):
    X, y = real_data
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=y.size)
    clf = bg.KernelNB(method="map").fit(X, y, sample_weight=w)
    X_test = np.random.default_rng(3).normal(size=(17, 3)) * 3 + [1.0, 5.0, 0.0]
    ours = clf.predict_joint_log_proba(X_test) - clf.class_log_prior_
    ref = np.zeros_like(ours)
    for k in range(3):
        for j in range(3):
            kde = KernelDensity(bandwidth=clf.bandwidth_[k, j], kernel="gaussian")
            kde.fit(X[y == k][:, [j]], sample_weight=w[y == k])
            ref[:, k] += kde.score_samples(X_test[:, [j]])
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-10)


def test_log_lik_far_points_finite_and_matches_scipy(real_data):
    X, y = real_data
    clf = bg.KernelNB(method="mle").fit(X, y)
    X_test = np.array([[40.0, -30.0, 25.0], [0.0, 5.0, -2.0]])
    ours = clf._family.log_lik(X_test, clf._params)
    ref = np.zeros((2, 3))
    for k in range(3):
        Pk = X[y == k]
        logpdf = stats.norm.logpdf(X_test[:, None, :], Pk[None], clf.bandwidth_[k])
        ref[:, k] = (logsumexp(logpdf, axis=1) - np.log(Pk.shape[0])).sum(-1)
    assert np.all(np.isfinite(ours))
    np.testing.assert_allclose(ours, ref, rtol=1e-10)
    # full=False only drops a class-independent constant
    diff = ours - clf._family.log_lik(X_test, clf._params, full=False)
    np.testing.assert_allclose(diff, diff[:, :1] * np.ones((1, 3)))


def test_log_lik_broadcasts_over_draws_and_chunks(real_data, monkeypatch):
    X, y = real_data
    clf = bg.KernelNB().fit(X, y)
    fam, params = clf._family, dict(clf._params)
    factors = np.array([0.5, 1.0, 2.0, 3.0]).reshape(2, 2, 1, 1)
    params["bandwidth"] = clf.bandwidth_ * factors  # (2, 2, K, d) draws
    out = fam.log_lik(X[:20], params)
    assert out.shape == (2, 2, 20, 3)
    for a in range(2):
        for b in range(2):
            one = dict(clf._params, bandwidth=clf.bandwidth_ * factors[a, b])
            np.testing.assert_allclose(out[a, b], fam.log_lik(X[:20], one), rtol=1e-12)
    monkeypatch.setattr(kde, "_BUDGET", 50)  # forces one row/draw per block
    np.testing.assert_allclose(fam.log_lik(X[:20], params), out, rtol=1e-12)


def test_mle_matches_brute_force_loo(real_data):
    X, y = real_data
    clf = bg.KernelNB(method="mle").fit(X, y)
    for k, j in [(0, 0), (1, 2), (2, 1)]:
        x = X[y == k, j]
        sd = np.std(x)
        t = brute_force_max(
            lambda t, x=x: reference_loo(x, np.exp(t)), np.log(sd / 50), np.log(sd * 5)
        )
        np.testing.assert_allclose(clf.bandwidth_[k, j], np.exp(t), rtol=1e-5)


def test_prior_centre_is_silverman_and_map_between(real_data):
    X, y = real_data
    mle = bg.KernelNB(method="mle").fit(X, y).bandwidth_
    clf = bg.KernelNB(method="map", bandwidth_sd=0.5).fit(X, y)
    centre = np.array([[silverman_reference(X[y == k, j]) for j in range(3)] for k in range(3)])
    np.testing.assert_allclose(clf._prior["centre"], centre, rtol=1e-12)
    assert clf._prior["sd"] == 0.5
    lo, hi = np.minimum(mle, centre), np.maximum(mle, centre)
    assert np.all((clf.bandwidth_ >= lo * (1 - 1e-8)) & (clf.bandwidth_ <= hi * (1 + 1e-8)))
    # MAP in log h against a brute-force maximisation of LOO + log-normal prior
    k, j = 2, 0
    x = X[y == k, j]

    def log_post(t, x=x):
        return reference_loo(x, np.exp(t)) + stats.norm.logpdf(t, np.log(centre[k, j]), 0.5)

    t = brute_force_max(log_post, np.log(centre[k, j] / 50), np.log(centre[k, j] * 5))
    np.testing.assert_allclose(clf.bandwidth_[k, j], np.exp(t), rtol=1e-5)
    # a tight prior pins the centre, a flat one gives the MLE
    tight = bg.KernelNB(bandwidth_sd=1e-4).fit(X, y).bandwidth_
    np.testing.assert_allclose(tight, centre, rtol=1e-2)
    flat = bg.KernelNB(bandwidth_sd=1e4).fit(X, y).bandwidth_
    np.testing.assert_allclose(flat, mle, rtol=1e-4)


@pytest.mark.parametrize("method", ["mle", "map"])
def test_scale_equivariance(real_data, method):
    X, y = real_data
    scale = np.array([1e3, 1.0, 1e-3])
    a = bg.KernelNB(method=method).fit(X, y)
    b = bg.KernelNB(method=method).fit(X * scale, y)
    np.testing.assert_allclose(b.bandwidth_, a.bandwidth_ * scale, rtol=1e-5)
    X_test = X[::7] + 0.3
    np.testing.assert_allclose(
        b.predict_proba(X_test * scale), a.predict_proba(X_test), rtol=1e-6, atol=1e-9
    )


@pytest.mark.parametrize("method", ["mle", "map"])
def test_duplicated_rows_equal_weight_two(real_data, method):
    X, y = real_data
    dup = np.r_[np.arange(y.size), np.arange(0, y.size, 4)]
    w = np.ones(y.size)
    w[::4] = 2.0
    a = bg.KernelNB(method=method).fit(X[dup], y[dup])
    b = bg.KernelNB(method=method).fit(X, y, sample_weight=w)
    # the optimum of a smooth objective is located to about sqrt(machine eps)
    np.testing.assert_allclose(a.bandwidth_, b.bandwidth_, rtol=1e-5)
    np.testing.assert_allclose(
        a.predict_joint_log_proba(X[:9]), b.predict_joint_log_proba(X[:9]), rtol=1e-5
    )


def test_zero_weight_rows_are_ignored_and_merge(real_data):
    X, y = real_data
    w = np.ones(y.size)
    w[:5] = 0.0
    a = bg.KernelNB().fit(X, y, sample_weight=w)
    b = bg.KernelNB().fit(X[5:], y[5:])
    np.testing.assert_allclose(a.bandwidth_, b.bandwidth_, rtol=1e-10)
    fam = KernelFamily(bandwidth_sd=1.0)
    whole = fam.stats(X, y, np.ones(y.size), 3)
    halves = fam.merge(
        fam.stats(X[::2], y[::2], np.ones(45), 3), fam.stats(X[1::2], y[1::2], np.ones(45), 3)
    )
    np.testing.assert_allclose(halves["count"], whole["count"])
    np.testing.assert_allclose(fam.mle(halves)["bandwidth"], fam.mle(whole)["bandwidth"], rtol=1e-5)
    # with zero weights in both halves: the same points, and the same row positions
    w = np.random.default_rng(0).integers(0, 3, size=y.size).astype(float)
    whole = fam.stats(X, y, w, 3)
    halves = fam.merge(fam.stats(X[:40], y[:40], w[:40], 3), fam.stats(X[40:], y[40:], w[40:], 3))
    np.testing.assert_array_equal(halves["row"], np.flatnonzero(w > 0))
    np.testing.assert_array_equal(halves["row"], whole["row"])
    assert halves["n_rows"] == whole["n_rows"] == y.size
    np.testing.assert_array_equal(halves["X"], X[w > 0])


def test_ties_give_lower_bracket_and_zero_spread_is_finite():
    rng = np.random.default_rng(4)
    base = rng.normal(size=(10, 2))
    X = np.r_[base, base, rng.normal(size=(20, 2)) + 3]  # class 0: every value twice
    X[20:, 1] = 7.0  # class 1: feature 1 constant
    y = np.repeat([0, 1], 20)
    fam = KernelFamily(bandwidth_sd=1.0)
    st = fam.stats(X, y, np.ones(40), 2)
    centre = fam.prior(st)["centre"]
    h = fam.mle(st)["bandwidth"]
    np.testing.assert_allclose(h[0], centre[0] / 1000, rtol=1e-6)  # unbounded LOO
    overall_sd = np.std(X[:, 1])
    np.testing.assert_allclose(centre[1, 1], 1e-3 * overall_sd, rtol=1e-12)
    assert np.all(np.isfinite(h)) and np.all(h > 0)
    clf = bg.KernelNB().fit(X, y)
    proba = clf.predict_proba(np.array([[0.0, 7.0], [3.0, 6.5]]))
    assert np.all(np.isfinite(proba))


def test_sample_moments_match_kde(real_data):
    X, y = real_data
    w = np.random.default_rng(5).uniform(0.5, 2.0, size=y.size)
    clf = bg.KernelNB().fit(X, y, sample_weight=w)
    for k in range(3):
        Xs, ys = clf.sample(6000, classes=k, random_state=k)
        assert Xs.shape == (6000, 3) and np.all(ys == k)
        wk, Pk = w[y == k], X[y == k]
        mean = wk @ Pk / wk.sum()
        var = wk @ (Pk - mean) ** 2 / wk.sum() + clf.bandwidth_[k] ** 2
        se = np.sqrt(var / 6000)
        assert np.all(np.abs(Xs.mean(0) - mean) < 5 * se)
        np.testing.assert_allclose(Xs.var(0), var, rtol=0.1)
    Xs, ys = clf.sample(300, random_state=0)
    assert set(np.unique(ys)) <= {0, 1, 2}


@pytest.mark.parametrize("loader", [load_iris, load_wine])
@pytest.mark.parametrize("method", ["mle", "map"])
def test_accuracy_on_real_data(loader, method):
    X, y = loader(return_X_y=True)
    clf = bg.KernelNB(method=method).fit(X, y)
    assert clf.score(X, y) > 0.9
    assert clf.bandwidth_.shape == (3, X.shape[1])


def test_kernel_errors(real_data):
    X, y = real_data
    fam = KernelFamily(bandwidth_sd=1.0)
    st = fam.stats(X, y, np.ones(y.size), 3)
    caps = fam.capabilities  # no conjugate hooks; the estimator says why
    assert not (caps.conjugate or caps.evidence or caps.exact_loo)
    assert not hasattr(fam, "posterior") and not hasattr(fam, "loo_log_predictive")
    with pytest.raises(ValueError, match=r"no conjugate prior.*use method='mcmc'"):
        bg.KernelNB(method="conjugate").fit(X, y)
    with pytest.raises(ValueError, match="KernelNB has no closed-form marginal likelihood"):
        fam.log_evidence(st, fam.prior(st), None, method="map", who="KernelNB")
    labels = np.array(["a"] * 5 + ["b"] + ["c"] * 5)
    with pytest.raises(ValueError, match=r"at least 2 samples.*class 'b'"):
        bg.KernelNB().fit(X[:11], labels)
    with pytest.raises(ValueError, match=r"at least 2 samples.*class 'b'"):
        bg.KernelNB(method="mle").fit(X[:11], labels)
    for bad in [0.0, -1.0, np.nan, "x"]:
        with pytest.raises(ValueError, match="bandwidth_sd"):
            bg.KernelNB(bandwidth_sd=bad).fit(X, y)


# ------------------------------------------- pointwise (leave-one-out) likelihood


def reference_loo_terms(X, y, h):
    """Per row, sum_j log mean_{l != n, y_l = y_n} N(x_nj; x_lj, h_{y_n j}^2) (unit weights)."""
    out = np.empty(y.size)
    for n in range(y.size):
        others = (y == y[n]) & (np.arange(y.size) != n)
        logpdf = stats.norm.logpdf(X[n], X[others], h[y[n]])
        out[n] = (logsumexp(logpdf, axis=0) - np.log(others.sum())).sum()
    return out


def reference_kde_terms(X_eval, y_eval, X, y, w, h):
    """Per row, sum_j log sum_{y_l = y_n} w_l N(x_nj; x_lj, h^2) / W (sklearn's KDE)."""
    out = np.zeros(y_eval.size)
    for k in np.unique(y_eval):
        rows, mine = y_eval == k, (y == k) & (w > 0)
        for j in range(X.shape[1]):
            kde = KernelDensity(bandwidth=h[k, j]).fit(X[mine][:, [j]], sample_weight=w[mine])
            out[rows] += kde.score_samples(X_eval[rows][:, [j]])
    return out


def bandwidth_draws(clf, size, seed):
    """Posterior-like bandwidth draws around a fitted KernelNB: (size, K, d)."""
    rng = np.random.default_rng(seed)
    return clf.bandwidth_ * np.exp(0.3 * rng.normal(size=(size, *clf.bandwidth_.shape)))


def test_train_log_lik_is_the_loo_kde_per_row(real_data):
    X, y = real_data
    clf = bg.KernelNB().fit(X, y)
    params = dict(clf._params, bandwidth=bandwidth_draws(clf, 3, 0))
    out = clf._family.train_log_lik(X, y, params)
    assert out.shape == (3, y.size)
    for s in range(3):
        np.testing.assert_allclose(out[s], reference_loo_terms(X, y, params["bandwidth"][s]),
                                   rtol=1e-10)
    # the rows' terms add up to the LOO likelihood that MLE/MAP/NUTS use (unit weights)
    total = [kernel_module._loo(np.ascontiguousarray(X[y == k].T), np.ones((y == k).sum()),
                                np.log(params["bandwidth"][1, k])).sum() for k in range(3)]
    assert out[1].sum() == pytest.approx(sum(total), rel=1e-10)
    # and they are lower than log_lik, which puts every row under its own kernel
    plug_in = np.take_along_axis(clf._family.log_lik(X, params), y[None, :, None], 2)[..., 0]
    assert np.all(out.sum(1) < plug_in.sum(1))
    # posterior.pointwise_log_lik uses the hook and adds log pi_{y_n}
    log_pi = np.log(np.random.default_rng(1).dirichlet(np.ones(3), size=3))
    joint = posterior.pointwise_log_lik(clf._family, X, y, params, log_pi)
    np.testing.assert_allclose(joint, out + log_pi[:, y], rtol=1e-12)


def test_train_log_lik_weights_are_duplicated_rows(real_data):
    """Integer weights (zeros included) against the LOO KDE of the duplicated data; a
    weight-0 row is no training point: the plain weighted KDE at its class; a weight
    below 1 leaves the whole point out."""
    X, y = real_data
    rng = np.random.default_rng(6)
    w = rng.integers(0, 4, size=y.size).astype(float)
    clf = bg.KernelNB().fit(X, y, sample_weight=w)
    h = bandwidth_draws(clf, 2, 1)
    out = clf._family.train_log_lik(X, y, dict(clf._params, bandwidth=h))
    dup = np.repeat(np.arange(y.size), w.astype(int))
    first = np.searchsorted(dup, np.arange(y.size))  # first copy of each row in dup
    for s in range(2):
        ref = reference_loo_terms(X[dup], y[dup], h[s])
        pos = w > 0
        np.testing.assert_allclose(out[s, pos], ref[first[pos]], rtol=1e-10)
        kde = reference_kde_terms(X[~pos], y[~pos], X, y, w, h[s])
        np.testing.assert_allclose(out[s, ~pos], kde, rtol=1e-10)
    w_half = np.ones(y.size)
    w_half[[0, 40]] = 0.5
    clf = bg.KernelNB().fit(X, y, sample_weight=w_half)
    out = clf._family.train_log_lik(X, y, clf._params)  # point fit: no draw dim
    assert out.shape == (y.size,)
    for n in (0, 40):
        others = np.arange(y.size) != n
        ref = reference_kde_terms(X[[n]], y[[n]], X[others], y[others], w_half[others],
                                  clf.bandwidth_)
        np.testing.assert_allclose(out[n], ref[0], rtol=1e-10)


def test_train_log_lik_blocks_draw_dims_and_errors(real_data, monkeypatch):
    X, y = real_data
    clf = bg.KernelNB().fit(X, y)
    h = bandwidth_draws(clf, 6, 2).reshape(2, 3, 3, 3)
    params = dict(clf._params, bandwidth=h)
    out = clf._family.train_log_lik(X, y, params)
    assert out.shape == (2, 3, y.size)
    one = clf._family.train_log_lik(X, y, dict(clf._params, bandwidth=h[1, 2]))
    np.testing.assert_allclose(out[1, 2], one, rtol=1e-12)
    monkeypatch.setattr(kde, "_BUDGET", 50)  # one row and draw per block
    np.testing.assert_allclose(clf._family.train_log_lik(X, y, params), out, rtol=1e-12)
    # the training rows in another order: each row keeps its own term
    np.testing.assert_allclose(clf._family.train_log_lik(X[::-1], y[::-1], params),
                               out[..., ::-1], rtol=1e-12)
    with pytest.raises(ValueError, match="training rows"):
        clf._family.train_log_lik(X[:10], y[:10], params)


def test_mixed_train_log_lik_is_the_sum_of_the_parts(mixed_data, monkeypatch):
    X, y, _ = mixed_data
    Xm = X[:, [0, 2, 3, 4, 7]]  # real, counts (as reals), categories, real, categories
    cols = {"gaussian": [3], "kernel": [0, 1], "categorical": [2, 4]}
    clf = bg.MixedNB(families=list(cols.items())).fit(Xm, y)
    fam = clf._family
    rng = np.random.default_rng(4)
    gauss, _, cat = (q["family"] for q in fam.parts_)
    g_stats, _, c_stats = clf._stats["parts"]
    g_prior, _, c_prior = clf._prior["parts"]
    h = clf.kernel1_bandwidth_ * np.exp(0.3 * rng.normal(size=(4, 3, 2)))
    params = {
        **{f"gaussian0_{k}": v for k, v in gauss.draw(gauss.posterior(g_stats, g_prior), 4,
                                                       rng).items()},
        **{f"categorical2_{k}": v for k, v in cat.draw(cat.posterior(c_stats, c_prior), 4,
                                                        rng).items()},
        **fam.fixed_params(clf._stats),
        "kernel1_bandwidth": h,
    }
    out = fam.train_log_lik(Xm, y, params)
    assert out.shape == (4, y.size)
    mu, var, theta = params["gaussian0_mu"], params["gaussian0_var"], params["categorical2_theta"]
    codes = Xm[:, cols["categorical"]].astype(int)
    for s in range(2):
        expected = reference_loo_terms(Xm[:, cols["kernel"]], y, h[s])
        expected += stats.norm.logpdf(Xm[:, 3], mu[s, y, 0], np.sqrt(var[s, y, 0]))
        expected += np.log(theta[s, y[:, None], np.arange(2), codes]).sum(1)
        np.testing.assert_allclose(out[s], expected, rtol=1e-10)
    monkeypatch.setattr(pymc, "_BUDGET", 10)  # a few rows per block
    np.testing.assert_allclose(fam.train_log_lik(Xm, y, params), out, rtol=1e-12)
    log_pi = np.log(rng.dirichlet(np.ones(3), size=4))
    np.testing.assert_allclose(
        posterior.pointwise_log_lik(fam, Xm, y, params, log_pi), out + log_pi[:, y], rtol=1e-12
    )


# ------------------------------------------------------------------ MixedNB


@pytest.fixture(scope="module")
def mixed_data():
    rng = np.random.default_rng(10)
    y = np.repeat([0, 1, 2], [40, 30, 50])
    n = y.size
    real = rng.normal(size=(n, 2)) * [1.0, 3.0] + 2.0 * y[:, None]
    binary = (rng.uniform(size=(n, 2)) < 0.2 + 0.3 * y[:, None]).astype(float)
    counts = rng.poisson(1.0 + 2.0 * y[:, None], size=(n, 2)).astype(float)
    cats = ((rng.integers(0, 3, size=(n, 2)) + y[:, None]) % 4).astype(float)
    # interleave the groups so that column positions are not contiguous
    X = np.column_stack(
        [
            real[:, 0],
            binary[:, 0],
            counts[:, 0],
            cats[:, 0],
            real[:, 1],
            binary[:, 1],
            counts[:, 1],
            cats[:, 1],
        ]
    )
    w = rng.uniform(0.5, 2.0, size=n)
    return X, y, w


GROUPS = {"gaussian": [0, 4], "bernoulli": [1, 5], "poisson": [2, 6], "categorical": [3, 7]}


def standalone(name, method, alpha):
    """The standalone estimator that a MixedNB(alpha=alpha) part must reproduce."""
    if name == "gaussian":
        return bg.GaussianNB(method=method)
    if name == "bernoulli":
        return bg.BernoulliNB(method=method, alpha=alpha)
    if name == "categorical":
        return bg.CategoricalNB(method=method, alpha=alpha)
    return bg.PoissonNB(method=method)  # not discrete: keeps its own default alpha


@pytest.mark.parametrize("method", ["mle", "map"])
def test_joint_equals_sum_of_standalone(mixed_data, method):
    X, y, w = mixed_data
    alpha = 3.0 if method == "map" else 1.0
    clf = bg.MixedNB(families=list(GROUPS.items()), method=method, alpha=alpha)
    clf.fit(X, y, sample_weight=w)
    X_test = X[::3]
    expected = clf.class_log_prior_.copy()
    for name, cols in GROUPS.items():
        est = standalone(name, method, alpha).fit(X[:, cols], y, sample_weight=w)
        expected = expected + est.predict_joint_log_proba(X_test[:, cols]) - est.class_log_prior_
    np.testing.assert_allclose(clf.predict_joint_log_proba(X_test), expected, rtol=1e-10)
    pi = bg.GaussianNB(method=method).fit(X[:, :1], y, sample_weight=w).class_prior_
    np.testing.assert_allclose(clf.class_prior_, pi)
    assert clf.score(X, y) > 0.8


def test_part_options_and_binarize(mixed_data):
    X, y, _ = mixed_data
    Xr = X.copy()
    Xr[:, [1, 5]] += np.random.default_rng(0).uniform(-0.3, 0.3, size=(X.shape[0], 2))
    fams = [
        ("gaussian", [0, 4], {"var_dof": 6.0}),
        ("bernoulli", [1, 5], {"binarize": 0.5, "alpha": 1.5}),
        ("kernel", [2, 3, 6, 7], {"bandwidth_sd": 0.3}),
    ]
    clf = bg.MixedNB(families=fams, alpha=5.0).fit(Xr, y)
    parts = [
        (bg.GaussianNB(var_dof=6.0), [0, 4]),
        (bg.BernoulliNB(binarize=0.5, alpha=1.5), [1, 5]),
        (bg.KernelNB(bandwidth_sd=0.3), [2, 3, 6, 7]),
    ]
    expected = clf.class_log_prior_
    for est, cols in parts:
        est.fit(Xr[:, cols], y)
        expected = expected + est.predict_joint_log_proba(Xr[:, cols]) - est.class_log_prior_
    np.testing.assert_allclose(clf.predict_joint_log_proba(Xr), expected, rtol=1e-10)
    np.testing.assert_allclose(clf.kernel2_bandwidth_, parts[2][0].bandwidth_)
    assert [p["prefix"] for p in clf.parts_] == ["gaussian0", "bernoulli1", "kernel2"]


def test_dataframe_names_and_column_order(mixed_data):
    X, y, _ = mixed_data
    names = [f"c{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names)
    by_name = [(n, [names[j] for j in cols]) for n, cols in GROUPS.items()]
    a = bg.MixedNB(families=by_name).fit(df, y)
    b = bg.MixedNB(families=list(GROUPS.items())).fit(X, y)
    np.testing.assert_allclose(a.predict_proba(df), b.predict_proba(X), rtol=1e-12)
    assert a.parts_[0]["features"] == ["c0", "c4"]
    assert a._family.coords()["gaussian0_feature"] == ["c0", "c4"]
    # permuted DataFrame columns, permuted parts: the same model
    perm = np.random.default_rng(1).permutation(X.shape[1])
    c = bg.MixedNB(families=by_name[::-1]).fit(df.iloc[:, perm], y)
    np.testing.assert_allclose(
        c.predict_joint_log_proba(df.iloc[:, perm]), a.predict_joint_log_proba(df), rtol=1e-10
    )
    # permuted plain-array columns with positions mapped accordingly
    inverse = np.argsort(perm)
    mapped = [(n, [int(inverse[j]) for j in cols]) for n, cols in GROUPS.items()]
    d = bg.MixedNB(families=mapped).fit(X[:, perm], y)
    np.testing.assert_allclose(d.predict_proba(X[:, perm]), b.predict_proba(X), rtol=1e-10)


def test_sample_and_draws(mixed_data):
    X, y, _ = mixed_data
    clf = bg.MixedNB(families=list(GROUPS.items())).fit(X, y)
    Xs, _ = clf.sample(500, random_state=0)
    assert Xs.shape == (500, 8)
    assert set(np.unique(Xs[:, [1, 5]])) <= {0.0, 1.0}
    assert np.all(Xs[:, [2, 6]] == np.round(Xs[:, [2, 6]])) and np.all(Xs[:, [2, 6]] >= 0)
    assert set(np.unique(Xs[:, [3, 7]])) <= {0.0, 1.0, 2.0, 3.0}
    X2, _ = clf.sample(4000, classes=2, random_state=1)
    np.testing.assert_allclose(X2[:, [0, 4]].mean(0), clf.gaussian0_theta_[2], atol=0.15)
    # conjugate posterior draws: namespaced, broadcast through log_lik
    fam = clf._family
    post = fam.posterior(clf._stats, clf._prior)
    draws = fam.draw(post, 5, np.random.default_rng(0))
    assert set(draws) == set(fam.param_dims)
    assert draws["categorical3_theta"].shape[:2] == (5, 3)
    ll = fam.log_lik(X[:7], draws)
    assert ll.shape == (5, 7, 3)
    one = {key: value[2] for key, value in draws.items()}
    np.testing.assert_allclose(ll[2], fam.log_lik(X[:7], one), rtol=1e-12)


def test_log_predictive_matches_monte_carlo(mixed_data):
    X, y, w = mixed_data
    clf = bg.MixedNB(families=list(GROUPS.items())).fit(X, y, sample_weight=w)
    fam = clf._family
    post = fam.posterior(clf._stats, clf._prior)
    draws = fam.draw(post, 20000, np.random.default_rng(3))
    X_test = X[::25]
    monte_carlo = logsumexp(fam.log_lik(X_test, draws), axis=0) - np.log(20000)
    exact = fam.log_predictive(X_test, post)
    # Monte Carlo is only reliable where the predictive is not far in a tail
    typical = exact > exact.max(axis=1, keepdims=True) - 3.0
    np.testing.assert_allclose(exact[typical], monte_carlo[typical], atol=0.03)


def test_kernel_part_has_no_posterior(mixed_data):
    X, y, _ = mixed_data
    clf = bg.MixedNB(families=[("gaussian", [0, 4]), ("kernel", [1, 2, 3, 5, 6, 7])]).fit(X, y)
    with pytest.raises(ValueError, match=r"kernel.*mcmc"):
        clf._family.posterior(clf._stats, clf._prior)
    with pytest.raises(ValueError, match=r"kernel.*mcmc"):
        bg.MixedNB(families=clf.families, method="conjugate").fit(X, y)
    # the kernel part's fixed data are not random parameters
    assert set(clf._family.param_dims) == {"gaussian0_mu", "gaussian0_var", "kernel1_bandwidth"}
    Xs, _ = clf.sample(10, random_state=0)
    assert Xs.shape == (10, 8)


def test_tags_clone_and_lazy_validation():
    assert bg.MixedNB().__sklearn_tags__().input_tags.positive_only is False
    pos = bg.MixedNB(families=[("poisson", [0]), ("bernoulli", [1], {"binarize": None})])
    assert pos.__sklearn_tags__().input_tags.positive_only is True
    # a Bernoulli part thresholds at binarize=0.0 by default (as BernoulliNB): any real x
    thresholded = bg.MixedNB(families=[("poisson", [0]), ("bernoulli", [1])])
    assert thresholded.__sklearn_tags__().input_tags.positive_only is False
    mixed = bg.MixedNB(families=[("poisson", [0]), ("gaussian", [1])])
    assert mixed.__sklearn_tags__().input_tags.positive_only is False
    bad = bg.MixedNB(families=[("nope", [0])])
    assert bad.__sklearn_tags__().input_tags.positive_only is False
    assert clone(pos).get_params()["families"] == pos.families
    MixedFamily(None)  # never raises at construction


@pytest.mark.parametrize(
    ("families", "match"),
    [
        (None, "needs families="),
        ([], "needs families="),
        ([("gaussian", [0, 1]), ("gaussian", [1, 2, 3])], r"Columns \[1\] are in more than one"),
        ([("gaussian", [0, 0, 1, 2, 3])], r"Columns \[0\] are in more than one"),
        ([("gaussian", [0, 1])], r"Columns \[2, 3\] are in no part"),
        ([("gaussian", [0, 1, 2, 3]), ("poisson", [])], "has no columns"),
        ([("gaussian", [0, 1, 2, 4])], "position 4 is out of range"),
        ([("gaussian", [-1, 0, 1, 2])], "position -1 is out of range"),
        ([("gaussian", ["a", 0, 1, 2])], "needs X to be a DataFrame"),
        ([("gaussian", [0.5, 1, 2, 3])], "must be an int position or a name"),
        ([("weibull", [0, 1, 2, 3])], "unknown family 'weibull'"),
        ([("mvn", [0, 1, 2, 3])], "unknown family 'mvn'"),
        ([("gaussian", [0, 1, 2, 3], {"alpha": 2})], r"unknown option\(s\) \['alpha'\]"),
        ([("gaussian", [0, 1, 2, 3], "var_dof=3")], "options must be a dict"),
        ([("gaussian",)], r"must be \(name, columns"),
    ],
)
def test_specification_errors(families, match):
    X = np.random.default_rng(0).normal(size=(20, 4))
    y = np.repeat([0, 1], 10)
    with pytest.raises(ValueError, match=match):
        bg.MixedNB(families=families).fit(X, y)


def test_dataframe_name_errors_and_part_checks():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(20, 3)), columns=["a", "b", "c"])
    y = np.repeat([0, 1], 10)
    with pytest.raises(ValueError, match="unknown column 'z'"):
        bg.MixedNB(families=[("gaussian", ["a", "b", "z"])]).fit(df, y)
    # names and positions may be mixed
    clf = bg.MixedNB(families=[("gaussian", ["a", 1]), ("kernel", "c")]).fit(df, y)
    assert clf.parts_[1]["features"] == ["c"]
    # a part's own support checks run on its columns only (a strict Bernoulli part: its
    # default binarize=0.0 thresholds, as BernoulliNB's)
    with pytest.raises(ValueError, match=r"MixedNB part bernoulli1.*binarize"):
        bg.MixedNB(families=[("gaussian", ["a", "b"]), ("bernoulli", ["c"], {"binarize": None})]
                   ).fit(df.abs(), y)
    with pytest.raises(ValueError, match="at least 2 samples"):
        bg.MixedNB(families=[("kernel", [0, 1, 2])]).fit(df.iloc[:11], y[:11])
