"""ExponentialNB (bayesgen.families.exponential) against independent references.

References written here from the raw data, not from the code under test:
``scipy.stats.expon`` for the likelihood, ``scipy.stats.lomax`` for the posterior
predictive, the Gamma posterior Gamma(a0 + n_kj, b0 + s_kj), numerical integration for
the evidence and for a small-n posterior, and the exact rescaling rules (x -> c x).
The capability suite (tests/conftest.py's CLASSIFIERS and the per-capability lists)
tests the rest of the API with the other estimators.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, optimize, stats
from scipy.special import gammaln, logsumexp, softmax

import bayesgen as bg
from bayesgen.inference import exact_loo
from bayesgen.inference.posterior import closed_form_log_pi

K, D = 3, 3
MEANS = np.array([[1.0, 0.05, 40.0], [3.0, 0.02, 10.0], [0.5, 0.2, 90.0]])  # (K, d)


def _data(n_per_class: int = 20, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n_per_class)
    return rng.exponential(MEANS[y]), y


def _raw_posterior(X, y, w, alpha, mean_prior):
    """Gamma posterior (a, b) per (class, feature) from the raw rows, and beta."""
    beta = (alpha - 1.0) * np.asarray(mean_prior, dtype=float)
    a = np.array([[w[(y == k) & ~np.isnan(X[:, j])].sum() for j in range(X.shape[1])]
                  for k in range(K)]) + alpha
    b = np.array([[np.nansum(w[y == k] * X[y == k, j]) for j in range(X.shape[1])]
                  for k in range(K)]) + beta
    return a, b, beta


# ----------------------------------------------------------------- likelihood
def test_log_lik_is_scipy_expon_with_draw_dims_and_missing_entries():
    X, y = _data(8)
    X[[0, 3, 5], [1, 0, 2]] = np.nan
    family = bg.ExponentialNB().fit(X, y)._family
    rate = np.random.default_rng(1).gamma(2.0, 1.0, size=(4, 2, K, D))  # draws (4, 2)
    got = family.log_lik(X, {"rate": rate})
    assert got.shape == (4, 2, X.shape[0], K)
    seen = ~np.isnan(X)
    want = np.where(seen[None, None, :, None, :],
                    stats.expon.logpdf(np.nan_to_num(X)[None, None, :, None, :],
                                       scale=1.0 / rate[:, :, None]), 0.0).sum(axis=-1)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", ["mle", "map"])
def test_point_estimates_and_plug_in_joint(method):
    X, y = _data(15, seed=2)
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=y.size)
    alpha = 2.5
    clf = bg.ExponentialNB(method=method, alpha=alpha).fit(X, y, sample_weight=w)
    mean = (w @ X) / w.sum()  # default prior mean duration: the weighted overall mean
    np.testing.assert_allclose(clf._prior["beta"], (alpha - 1.0) * mean, rtol=1e-12)
    n = np.array([w[y == k].sum() for k in range(K)])[:, None]
    s = np.array([w[y == k] @ X[y == k] for k in range(K)])
    want = n / s if method == "mle" else (n + alpha - 1.0) / (s + (alpha - 1.0) * mean)
    np.testing.assert_allclose(clf.rate_, want, rtol=1e-12)
    joint = clf.predict_joint_log_proba(X)
    ref = np.log(clf.class_prior_) + np.stack(
        [stats.expon.logpdf(X, scale=1.0 / want[k]).sum(axis=1) for k in range(K)], axis=1)
    np.testing.assert_allclose(joint, ref, rtol=1e-12)
    np.testing.assert_allclose(clf.score_samples(X), logsumexp(ref, axis=1), rtol=1e-12)


# ------------------------------------------------------------ conjugate posterior
@pytest.fixture(scope="module")
def conjugate():
    X, y = _data(12, seed=4)
    X[[2, 7, 30], [0, 2, 1]] = np.nan
    clf = bg.ExponentialNB(method="conjugate", alpha=3.0, draws=4000, chains=2,
                           random_state=0).fit(X, y)
    return clf, X, y


def test_posterior_is_the_closed_form_gamma(conjugate):
    clf, X, y = conjugate
    mean = np.nanmean(X, axis=0)  # observed entries only
    a, b, beta = _raw_posterior(X, y, np.ones(y.size), 3.0, mean)
    np.testing.assert_allclose(clf._prior["beta"], beta, rtol=1e-12)
    np.testing.assert_allclose(clf._posterior["a"], a, rtol=1e-12)
    np.testing.assert_allclose(clf._posterior["b"], b, rtol=1e-12)
    draws = clf.idata_.posterior["rate"].values.reshape(-1, K, D)
    assert clf.idata_.posterior["rate"].dims == ("chain", "draw", "class", "feature")
    np.testing.assert_allclose(clf.rate_, draws.mean(axis=0))
    for k, j in [(0, 0), (1, 2), (2, 1)]:
        p = stats.kstest(draws[:, k, j], stats.gamma(a[k, j], scale=1.0 / b[k, j]).cdf).pvalue
        assert p > 1e-3, (k, j, p)


def test_predictive_is_scipy_lomax(conjugate):
    clf, X, y = conjugate
    a, b = clf._posterior["a"], clf._posterior["b"]
    Xt = np.random.default_rng(5).exponential(MEANS[[0, 1, 2, 1]])
    Xt[1, 2] = np.nan
    Xt[2, 0] = 0.0  # the edge of the support
    got = clf.predict_joint_log_proba(Xt) - closed_form_log_pi(clf)
    seen = ~np.isnan(Xt)
    want = np.stack([np.where(seen, stats.lomax.logpdf(np.nan_to_num(Xt), a[k], scale=b[k]),
                              0.0).sum(axis=1) for k in range(K)], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # the log-mean-exp over the posterior draws estimates the same density
    lik = clf._family.log_lik(Xt, clf._params)  # (S, n, K)
    by_draws = logsumexp(lik, axis=0) - np.log(lik.shape[0])
    np.testing.assert_allclose(by_draws, want, atol=0.02)


def test_predictive_integrates_to_one():
    X, y = _data(10, seed=6)
    clf = bg.ExponentialNB(method="conjugate", draws=10).fit(X[:, :1], y)
    mass, _ = integrate.quad(lambda t: np.exp(clf.score_samples([[t]])[0]), 0, np.inf,
                             limit=200)
    assert mass == pytest.approx(1.0, abs=1e-6)


# ------------------------------------------------------------------- evidence
def _label_evidence(y, alpha: float) -> float:
    counts, total = np.zeros(K), 0.0
    for label in y:
        total += np.log((counts[label] + alpha) / (counts.sum() + K * alpha))
        counts[label] += 1
    return total


def test_evidence_equals_numerical_integration():
    x = np.array([0.4, 1.7, 0.2, 3.1, 5.5, 2.2, 9.0, 0.3, 0.8])
    y = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    alpha, m = 2.5, 1.3
    est = bg.ExponentialNB(method="map", alpha=alpha, mean_prior=m,
                           class_alpha=2.0).fit(x[:, None], y)
    beta = (alpha - 1.0) * m
    total = _label_evidence(y, 2.0)
    for k in range(K):
        xs = x[y == k]

        def integrand(lam, xs=xs):
            return np.exp(stats.expon.logpdf(xs, scale=1.0 / lam).sum()
                          + stats.gamma.logpdf(lam, alpha, scale=1.0 / beta))

        value, _ = integrate.quad(integrand, 0, np.inf, epsabs=1e-14, limit=200)
        total += np.log(value)
    assert est.log_marginal_likelihood() == pytest.approx(total, abs=1e-9)


def test_compare_by_evidence_prefers_the_generating_prior():
    X, y = _data(30, seed=7)
    good = bg.ExponentialNB(method="conjugate", draws=20, alpha=2.0).fit(X, y)
    bad = bg.ExponentialNB(method="conjugate", draws=20, alpha=2.0,
                           mean_prior=[1e-3, 1e3, 1e-2]).fit(X, y)
    table = bg.compare({"good": good, "bad": bad}, ic="evidence")
    assert table.index[0] == "good" and table.loc["bad", "log_bayes_factor"] < -10
    loo = bg.compare({"good": good, "bad": bad})  # exact LOO for conjugate fits
    assert loo.index[0] == "good"


# --------------------------------------------------- small n: brute-force posterior
def test_small_n_matches_a_brute_force_posterior():
    """Two rows per class: the posterior of every rate by quadrature over lambda
    (prior x likelihood, normalised numerically), its mode and mean, and the
    posterior predictive p(y | x, data) by integrating the likelihood of new rows."""
    x = np.array([[0.7, 12.0], [2.1, 3.0], [0.05, 40.0], [0.4, 25.0], [5.0, 1.0],
                  [6.5, 0.6]])
    y = np.array([0, 0, 1, 1, 2, 2])
    alpha, m = 1.8, np.array([1.5, 10.0])
    kw = {"alpha": alpha, "mean_prior": m, "class_alpha": 1.5}
    beta = (alpha - 1.0) * m
    post = {}
    for k in range(K):
        for j in range(2):
            xs = x[y == k, j]

            def log_unnorm(lam, xs=xs, j=j):
                return (stats.expon.logpdf(xs, scale=1.0 / lam).sum()
                        + stats.gamma.logpdf(lam, alpha, scale=1.0 / beta[j]))

            mode = optimize.minimize_scalar(lambda t, f=log_unnorm: -f(np.exp(t)),
                                            bounds=(-15, 15), method="bounded",
                                            options={"xatol": 1e-12}).x
            ref = log_unnorm(np.exp(mode))  # keeps exp() in range
            z = integrate.quad(lambda t, f=log_unnorm, r=ref: np.exp(f(t) - r), 0, np.inf,
                               limit=200)[0]
            mean = integrate.quad(lambda t, f=log_unnorm, r=ref: t * np.exp(f(t) - r), 0,
                                  np.inf, limit=200)[0] / z
            post[k, j] = (log_unnorm, ref, z, np.exp(mode), mean)
    map_fit = bg.ExponentialNB(method="map", **kw).fit(x, y)
    conj = bg.ExponentialNB(method="conjugate", draws=10, **kw).fit(x, y)
    for (k, j), (_, _, _, mode, mean) in post.items():
        assert map_fit.rate_[k, j] == pytest.approx(mode, rel=1e-7)
        a, b = conj._posterior["a"][k, j], conj._posterior["b"][k, j]
        assert a / b == pytest.approx(mean, rel=1e-8)
    Xt = np.array([[0.3, 20.0], [4.0, 0.8], [1.0, 5.0]])
    log_joint = np.zeros((Xt.shape[0], K))
    for i, row in enumerate(Xt):
        for k in range(K):
            label = np.log((np.sum(y == k) + 1.5) / (y.size + 1.5 * K))
            dens = 0.0
            for j in range(2):
                f, ref, z, _, _ = post[k, j]
                value = integrate.quad(
                    lambda t, f=f, r=ref, v=row[j]: stats.expon.pdf(v, scale=1.0 / t)
                    * np.exp(f(t) - r), 0, np.inf, limit=200)[0] / z
                dens += np.log(value)
            log_joint[i, k] = label + dens
    np.testing.assert_allclose(conj.predict_joint_log_proba(Xt), log_joint, rtol=1e-8)
    np.testing.assert_allclose(conj.predict_proba(Xt), softmax(log_joint, axis=1), atol=1e-9)


# ---------------------------------------------------------------- scale invariance
@pytest.mark.parametrize("c", [1e-6, 3.7, 2.0**20, 1e5])
def test_rescaling_changes_only_by_the_jacobian(c):
    """x -> c x (every feature): rates / c, identical predicted probabilities, and every
    log-density of x shifted by -log c per observed entry."""
    X, y = _data(10, seed=8)
    X[4, 1] = np.nan
    Xt, _ = _data(3, seed=9)
    seen = (~np.isnan(X)).sum()
    for method in ("mle", "map", "conjugate"):
        kw = {"method": method, "draws": 200, "chains": 2, "random_state": 0}
        base = bg.ExponentialNB(**kw).fit(X, y)
        scaled = bg.ExponentialNB(**kw).fit(X * c, y)
        np.testing.assert_allclose(scaled.rate_ * c, base.rate_, rtol=1e-10)
        np.testing.assert_allclose(scaled.predict_proba(Xt * c), base.predict_proba(Xt),
                                   rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(scaled.score_samples(Xt * c),
                                   base.score_samples(Xt) - D * np.log(c), rtol=1e-10)
        if method == "mle":
            continue
        assert scaled.log_marginal_likelihood() == pytest.approx(
            base.log_marginal_likelihood() - seen * np.log(c), rel=1e-10)
        if method == "conjugate":
            np.testing.assert_allclose(scaled.idata_.posterior["rate"].values * c,
                                       base.idata_.posterior["rate"].values, rtol=1e-10)
            np.testing.assert_allclose(exact_loo.pointwise(scaled),
                                       exact_loo.pointwise(base)
                                       - (~np.isnan(X)).sum(axis=1) * np.log(c), rtol=1e-10)


# ---------------------------------------------------------------------- errors
def test_negative_values_name_the_column():
    X, y = _data(5)
    X[3, 2] = -0.5
    with pytest.raises(ValueError, match=r"Negative values.*feature x2 \(position 2\)"):
        bg.ExponentialNB().fit(X, y)
    frame = pd.DataFrame(X, columns=["wait", "service", "repair"])
    with pytest.raises(ValueError, match=r"feature 'repair'.*>= 0"):
        bg.ExponentialNB().fit(frame, y)
    clf = bg.ExponentialNB().fit(np.abs(frame), y)
    with pytest.raises(ValueError, match=r"feature 'repair'"):
        clf.predict(frame)
    assert clf.__sklearn_tags__().input_tags.positive_only


def test_degenerate_data_and_priors_raise():
    X, y = _data(5)
    X[y == 1, 0] = 0.0  # zero durations are in the support
    assert np.all(np.isfinite(bg.ExponentialNB().fit(X, y).predict_proba(X)))
    with pytest.raises(ValueError, match=r"feature x0.*0 wherever observed in class 1"):
        bg.ExponentialNB(method="mle").fit(X, y)
    with pytest.raises(ValueError, match=r"0 wherever observed in class 1"):
        bg.ExponentialNB(alpha=1.0).fit(X, y)
    with pytest.raises(ValueError, match="alpha >= 1"):
        bg.ExponentialNB(alpha=0.5).fit(X, y)
    with pytest.raises(ValueError, match="mean_prior"):
        bg.ExponentialNB(mean_prior=[1.0, 2.0]).fit(X, y)
    with pytest.raises(ValueError, match="mean_prior"):
        bg.ExponentialNB(mean_prior=[1.0, 0.0, 1.0]).fit(X, y)
    X, y = _data(5)
    flat = bg.ExponentialNB(alpha=1.0).fit(X, y)  # the improper prior: MAP is the MLE
    np.testing.assert_allclose(flat.rate_, bg.ExponentialNB(method="mle").fit(X, y).rate_)
    with pytest.raises(ValueError, match="improper"):
        flat.log_marginal_likelihood()
    with pytest.raises(ValueError, match=r"improper.*alpha > 1"):
        flat.build_model(X, y)
    with pytest.raises(ValueError, match="infinity"):
        bg.ExponentialNB().fit(np.where(X > 5, np.inf, X), y)


# ------------------------------------------------------------------- MixedNB part
def test_mixed_part_is_the_standalone_family():
    X, y = _data(20, seed=10)
    Z = np.column_stack([np.log(X[:, 0]), X[:, 1:]])  # a real column and two durations
    mixed = bg.MixedNB(families=[("gaussian", [0]), ("exponential", [1, 2])]).fit(Z, y)
    gauss = bg.GaussianNB().fit(Z[:, :1], y)
    expo = bg.ExponentialNB().fit(Z[:, 1:], y)
    np.testing.assert_allclose(mixed.exponential1_rate_, expo.rate_, rtol=1e-12)
    want = (gauss.predict_joint_log_proba(Z[:, :1]) + expo.predict_joint_log_proba(Z[:, 1:])
            - np.log(expo.class_prior_))
    np.testing.assert_allclose(mixed.predict_joint_log_proba(Z), want, rtol=1e-10)
    auto = bg.MixedNB(families="auto", overrides={1: "exponential", 2: "exponential"})
    assert auto.fit(Z, y).families_ == [("gaussian", [0]), ("exponential", [1, 2])]
    with pytest.raises(ValueError, match="Negative values"):
        bg.MixedNB(families=[("exponential", [0, 1, 2])]).fit(Z - 10.0, y)


# --------------------------------------------- unlabeled rows, sampling and PPC
def test_unlabeled_rows_em_and_data_augmentation_agree():
    X, y = _data(60, seed=11)
    labels = y.astype(float)
    labels[np.arange(y.size) % 6 != 0] = np.nan  # 10 labeled rows per class
    em = bg.ExponentialNB(method="map").fit(X, labels)
    assert em.n_unlabeled_ == 150 and np.all(np.diff(em.em_objective_) >= -1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)  # short chains
        da = bg.ExponentialNB(method="conjugate", draws=300, tune=100, chains=2,
                              random_state=0).fit(X, labels)
    # EM's MAP lies within one posterior sd of the augmented posterior's mean
    sd = da.idata_.posterior["rate"].std(("chain", "draw")).values
    assert np.all(np.abs(da.rate_ - em.rate_) < sd)
    assert abs((da.predict(X) == y).mean() - (em.predict(X) == y).mean()) < 0.05


def test_sample_and_posterior_predictive_checks():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = _data(40, seed=12)
    clf = bg.ExponentialNB(method="conjugate", draws=200, chains=2, random_state=0).fit(X, y)
    Xs, ys = clf.sample(3000, random_state=1)
    assert np.all(Xs >= 0)
    for k in range(K):  # predictive mean of a Lomax: b / (a - 1)
        want = clf._posterior["b"][k] / (clf._posterior["a"][k] - 1.0)
        np.testing.assert_allclose(Xs[ys == k].mean(axis=0), want, rtol=0.15)
    table = bg.ppc_pvalues(clf, random_state=0)
    assert not table["p_value"].isna().any() and not table["flagged"].any()
    axes = bg.plot_ppc(clf, num_pp_samples=10, random_state=0)  # kde: continuous
    assert axes.shape == (K, D)
    plt.close("all")
    # durations far less variable than an exponential's (sd = mean): flagged by the sd
    rng = np.random.default_rng(13)
    tight = rng.gamma(30.0, MEANS[y] / 30.0)
    bad = bg.ExponentialNB(method="conjugate", draws=200, chains=2, random_state=0)
    flagged = bg.ppc_pvalues(bad.fit(tight, y), random_state=0)
    sd_rows = flagged[flagged["statistic"] == "sd"]
    assert sd_rows["flagged"].all()


def test_evidence_is_the_closed_form():
    """log p(X | y) = sum_kj a0 log b0 - lgamma(a0) + lgamma(a) - a log b, written out."""
    X, y = _data(6, seed=14)
    clf = bg.ExponentialNB(method="conjugate", alpha=2.0, draws=5).fit(X, y)
    a, b, beta = _raw_posterior(X, y, np.ones(y.size), 2.0, X.mean(axis=0))
    features = np.sum(2.0 * np.log(beta) - gammaln(2.0) + gammaln(a) - a * np.log(b))
    counts = np.bincount(y)
    labels = gammaln(K) - gammaln(K + y.size) + np.sum(gammaln(1.0 + counts))
    assert clf.log_marginal_likelihood() == pytest.approx(features + labels, rel=1e-12)
