"""MixtureDA with Bernoulli and Poisson components (``component="bernoulli"`` /
``"poisson"``): one component against BernoulliNB / PoissonNB, the EM M-step and its
fixed point against the closed-form MAP, densities against scipy.stats, the Gibbs
sampler against the Beta / Gamma posterior, a two-mode data set where the mixture
beats one component on held-out data, missing entries, the capabilities, and the
scikit-learn checks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp
from sklearn.metrics import log_loss
from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesgen as bg
from bayesgen.families import get_family
from bayesgen.families.mixture import em
from tests.sklearn_checks import _NEGATIVE_BLOBS, _expected_failures

#: class 0 of the binary data: two modes (features 0-2 on, or features 3-5 on)
MODES = np.array([[0.9, 0.85, 0.9, 0.1, 0.15, 0.1, 0.6, 0.4],
                  [0.1, 0.15, 0.1, 0.9, 0.85, 0.9, 0.6, 0.4]])
#: class 1: one mode with the average probabilities of class 0's
FLAT = MODES.mean(axis=0)
#: the count data: class 0 two modes of rates, class 1 their average
RATES = np.array([[8.0, 1.0, 6.0, 0.5], [1.0, 8.0, 0.5, 6.0]])


def binary(n: int, seed: int):
    """Class 0 a 0.4 / 0.6 mixture of two binary modes, class 1 independent features
    with the mixture's average probabilities: one Bernoulli product per class sees the
    same marginals in both classes."""
    rng = np.random.default_rng(seed)
    z = (rng.uniform(size=n) < 0.6).astype(int)
    X0 = (rng.uniform(size=(n, MODES.shape[1])) < MODES[z]).astype(float)
    X1 = (rng.uniform(size=(n, MODES.shape[1])) < FLAT).astype(float)
    return np.vstack([X0, X1]), np.repeat([0, 1], n)


def counts(n: int, seed: int):
    """Class 0 a 0.5 / 0.5 mixture of two Poisson rate vectors, class 1 one Poisson with
    their average rates."""
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 2, size=n)
    X0 = rng.poisson(RATES[z]).astype(float)
    X1 = rng.poisson(RATES.mean(axis=0), size=(n, RATES.shape[1])).astype(float)
    return np.vstack([X0, X1]), np.repeat([0, 1], n)


DATA = {"bernoulli": binary, "poisson": counts}
LOGPMF = {"bernoulli": lambda x, p: stats.bernoulli.logpmf(x, p),
          "poisson": lambda x, p: stats.poisson.logpmf(x, p)}


@pytest.fixture(scope="module", params=["bernoulli", "poisson"])
def fitted(request):
    """(component, X, y, map fit with two components in class 0, gibbs fit)."""
    kind = request.param
    X, y = DATA[kind](300, 0)
    fit = bg.MixtureDA(component=kind, n_components=[2, 1], random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)  # short chains on purpose
        gibbs = bg.MixtureDA(component=kind, n_components=[2, 1], method="gibbs", draws=80,
                             tune=30, chains=2, random_state=1).fit(X, y)
    return kind, X, y, fit, gibbs


def _nb(kind: str, **kw):
    return bg.BernoulliNB(**kw) if kind == "bernoulli" else bg.PoissonNB(**kw)


# ----------------------------------------------------- one component = naive Bayes
@pytest.mark.parametrize("kind,kw", [
    ("bernoulli", {}), ("bernoulli", {"alpha": 1.5, "class_alpha": 3.0}),
    ("bernoulli", {"binarize": 0.5}), ("bernoulli", {"binarize": None}),
    ("poisson", {}), ("poisson", {"alpha": 3.0, "rate_prior": 2.0}),
    ("poisson", {"class_alpha": 2.0})])
def test_one_component_equals_naive_bayes(kind, kw):
    """n_components=1 is BernoulliNB / PoissonNB (method="map") with the same prior, to
    1e-10: joint log-probabilities, probabilities and the parameters."""
    X, y = DATA[kind](120, 3)
    if kw.get("binarize", 0.0) == 0.5:
        X = X * np.random.default_rng(0).uniform(0.2, 1.0, size=X.shape)
    mix = bg.MixtureDA(component=kind, n_components=1, **kw).fit(X, y)
    nb = _nb(kind, **kw).fit(X, y)
    np.testing.assert_allclose(mix.predict_joint_log_proba(X), nb.predict_joint_log_proba(X),
                               rtol=0, atol=1e-10)
    np.testing.assert_allclose(mix.predict_proba(X), nb.predict_proba(X), rtol=0, atol=1e-10)
    key = "theta" if kind == "bernoulli" else "rate"
    np.testing.assert_allclose(mix.means_[:, 0], nb._params[key], rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ["bernoulli", "poisson"])
def test_one_component_posterior_predictive_equals_conjugate_naive_bayes(kind):
    """n_components=1 with predictive="posterior" is the closed-form Beta-Bernoulli /
    negative binomial predictive of BernoulliNB / PoissonNB(method="conjugate"), a
    missing entry included, to 1e-10."""
    X, y = DATA[kind](100, 0)
    X[3, 2] = np.nan
    nb = _nb(kind, method="conjugate").fit(X, y)
    mix = bg.MixtureDA(component=kind, n_components=1, predictive="posterior").fit(X, y)
    np.testing.assert_allclose(mix.predict_joint_log_proba(X), nb.predict_joint_log_proba(X),
                               rtol=0, atol=1e-10)


@pytest.mark.parametrize("kind", ["bernoulli", "poisson"])
def test_one_component_auto_keeps_one_where_one_suffices(kind):
    """Classes that are one product of independent features: "auto" keeps one
    component per class (BIC, then the held-out check)."""
    rng = np.random.default_rng(4)
    p = rng.uniform(0.1, 0.9, size=(2, 6))
    X = (rng.uniform(size=(400, 6)) < p[np.repeat([0, 1], 200)]).astype(float)
    if kind == "poisson":
        X = rng.poisson(5 * p[np.repeat([0, 1], 200)]).astype(float)
    y = np.repeat([0, 1], 200)
    fit = bg.MixtureDA(component=kind, random_state=0).fit(X, y)
    np.testing.assert_array_equal(fit.n_components_, [1, 1])


# ----------------------------------------------------------------------- EM
@pytest.mark.parametrize("kind", ["bernoulli", "poisson"])
def test_m_step_on_fixed_responsibilities_is_the_closed_form(kind):
    """The M-step of fixed responsibilities R and row weights v is the conjugate MAP
    of the soft counts: Bernoulli theta_mj = (sum_n v r x + a - 1) / (sum_n v r + 2 (a - 1)),
    Poisson lambda_mj = (sum_n v r x + a - 1) / (sum_n v r + beta_j), with a missing
    entry left out of its feature's sums."""
    X, _ = DATA[kind](50, 1)
    X = X[:50].copy()
    X[3, 1] = X[7, 2] = np.nan
    rng = np.random.default_rng(0)
    R = rng.dirichlet(np.ones(3), size=50)
    v = rng.uniform(0.5, 2.0, size=50)
    a = 2.5
    fam = (get_family("bernoulli")(alpha=a, binarize=None) if kind == "bernoulli"
           else get_family("poisson")(alpha=a, rate_prior=1.7)).configured(labels=np.arange(1))
    prior = fam.prior(fam.stats(X, np.zeros(50, dtype=np.intp), v, 1))
    found = em._m_step(fam, em.component_stats(fam, X, R, v), prior, None)
    seen = ~np.isnan(X)
    Xf = np.where(seen, X, 0.0)
    soft_x = (R * v[:, None]).T @ Xf  # (M, d)
    soft_n = (R * v[:, None]).T @ seen.astype(float)  # observed weight per (m, j)
    if kind == "bernoulli":
        expect = (soft_x + a - 1) / (soft_n + 2 * (a - 1))
        np.testing.assert_allclose(found["theta"], expect, rtol=1e-12)
    else:
        expect = (soft_x + a - 1) / (soft_n + (a - 1) / 1.7)
        np.testing.assert_allclose(found["rate"], expect, rtol=1e-12)


def test_em_fixed_point_and_objective(fitted):
    """At convergence the fit is a fixed point of EM computed here from scipy: the
    responsibilities of the fitted mixture (scipy log-pmfs) give back its parameters by
    the closed-form MAP, and the weights are N_m / N (weight_alpha = 1)."""
    kind, X, y, fit, _ = fitted
    Xk = X[y == 0]
    w, P = fit.weights_[0], fit.means_[0]
    logs = np.stack([np.log(w[m]) + LOGPMF[kind](Xk, P[m]).sum(axis=1) for m in range(2)],
                    axis=1)
    R = np.exp(logs - logsumexp(logs, axis=1, keepdims=True))
    prior = fit.component_prior_[0]
    a = prior["alpha"]
    N = R.sum(axis=0)
    soft = R.T @ Xk
    expect = ((soft + a - 1) / (N[:, None] + 2 * (a - 1)) if kind == "bernoulli"
              else (soft + a - 1) / (N[:, None] + prior["beta"]))
    np.testing.assert_allclose(P, expect, rtol=2e-3, atol=2e-4)
    np.testing.assert_allclose(w, N / Xk.shape[0], atol=2e-4)
    assert fit.converged_.all()


def test_em_recovers_the_modes(fitted):
    kind, _, _, fit, _ = fitted
    truth = MODES if kind == "bernoulli" else RATES
    order = np.argsort(fit.means_[0, :, 0])[::-1]
    tol = 0.15 if kind == "bernoulli" else 1.0  # about 3.5 standard errors at 150 rows
    np.testing.assert_allclose(fit.means_[0, order], truth, atol=tol)


# -------------------------------------------------------------------- densities
@pytest.mark.parametrize("method", ["map", "gibbs"])
def test_densities_match_scipy(fitted, method):
    """predict_joint_log_proba = log pi_k + log sum_m w_km prod_j f(x_j | theta_kmj),
    f scipy's Bernoulli / Poisson pmf (the point parameters of "map"; for "gibbs" the
    log of the mean over the draws)."""
    kind, X, _, fit, gibbs = fitted
    Xt = DATA[kind](30, 9)[0]
    if method == "map":
        expect = np.stack([
            np.log(fit.class_prior_[k]) + logsumexp(
                np.stack([np.log(fit.weights_[k, m]) + LOGPMF[kind](Xt, fit.means_[k, m]).sum(1)
                          for m in range(fit.n_components_[k])], axis=1), axis=1)
            for k in range(2)], axis=1)
        np.testing.assert_allclose(fit.predict_joint_log_proba(Xt), expect, rtol=1e-10)
        np.testing.assert_allclose(fit.score_samples(Xt), logsumexp(expect, axis=1),
                                   rtol=1e-10)
        return
    post = gibbs.idata_.posterior
    key = "theta" if kind == "bernoulli" else "rate"
    P = post[key].values.reshape(-1, 2, 2, Xt.shape[1])
    W = post["weights"].values.reshape(-1, 2, 2)
    pi = post["pi"].values.reshape(-1, 2)
    draws = np.empty((P.shape[0], Xt.shape[0], 2))
    for s in range(P.shape[0]):
        for k in range(2):
            M = gibbs.n_components_[k]
            comp = np.stack([np.log(W[s, k, m]) + LOGPMF[kind](Xt, P[s, k, m]).sum(1)
                             for m in range(M)], axis=1)
            draws[s, :, k] = np.log(pi[s, k]) + logsumexp(comp, axis=1)
    expect = logsumexp(draws, axis=0) - np.log(P.shape[0])
    np.testing.assert_allclose(gibbs.predict_joint_log_proba(Xt), expect, rtol=1e-9)


def test_posterior_predictive_is_the_beta_and_negative_binomial(fitted):
    """predictive="posterior": each component's closed-form conjugate predictive of its
    responsibility-weighted rows (Beta-Bernoulli: p(x_j = 1) = a / (a + b); Gamma-Poisson:
    scipy's negative binomial), weighted by E[w_m]."""
    kind, X, y, _, _ = fitted
    fit = bg.MixtureDA(component=kind, n_components=[2, 1], predictive="posterior",
                       random_state=0).fit(X, y)
    Xt = DATA[kind](20, 5)[0]
    Xk = X[y == 0]
    w, P = fit.weights_[0], fit.means_[0]
    logs = np.stack([np.log(w[m]) + LOGPMF[kind](Xk, P[m]).sum(axis=1) for m in range(2)],
                    axis=1)
    R = np.exp(logs - logsumexp(logs, axis=1, keepdims=True))
    N, soft = R.sum(axis=0), R.T @ Xk
    prior = fit.component_prior_[0]
    comp = []
    for m in range(2):
        if kind == "bernoulli":
            a, b = soft[m] + prior["alpha"], N[m] - soft[m] + prior["alpha"]
            lp = stats.bernoulli.logpmf(Xt, a / (a + b)).sum(axis=1)
        else:
            shape, rate = soft[m] + prior["alpha"], N[m] + prior["beta"]
            lp = stats.nbinom.logpmf(Xt, shape, rate / (rate + 1.0)).sum(axis=1)
        comp.append(np.log((N[m] + 1.0) / (N.sum() + 2.0)) + lp)
    expect = logsumexp(np.stack(comp, axis=1), axis=1)
    class_mean = np.log((300 + 1.0) / (600 + 2.0))
    np.testing.assert_allclose(fit.predict_joint_log_proba(Xt)[:, 0], class_mean + expect,
                               rtol=2e-3)


# ------------------------------------------------------------------- held out
@pytest.mark.parametrize("kind", ["bernoulli", "poisson"])
def test_mixture_beats_one_component_on_held_out_data(kind):
    """On the two-mode data a product of independent features per class cannot tell
    class 0 from class 1 (the same marginals); "auto" finds two components in class 0
    and one in class 1 and has a much lower held-out log loss than n_components=1
    (= naive Bayes)."""
    X, y = DATA[kind](300, 0)
    Xt, yt = DATA[kind](1000, 1)
    auto = bg.MixtureDA(component=kind, random_state=0).fit(X, y)
    one = bg.MixtureDA(component=kind, n_components=1).fit(X, y)
    np.testing.assert_array_equal(auto.n_components_, [2, 1])
    loss_auto = log_loss(yt, auto.predict_proba(Xt))
    loss_one = log_loss(yt, one.predict_proba(Xt))
    assert loss_auto < loss_one - 0.1, (loss_auto, loss_one)
    assert auto.score(Xt, yt) > one.score(Xt, yt) + 0.1


# ----------------------------------------------------------------------- Gibbs
@pytest.mark.parametrize("kind", ["bernoulli", "poisson"])
def test_gibbs_one_component_is_the_conjugate_posterior(kind):
    """M = 1: each sweep is an exact conjugate draw: the draws' means and variances of
    theta (Beta(c + a, N - c + a)) or lambda (Gamma(S + a, N + beta)) match the closed
    form, within Monte Carlo error; a missing entry leaves its feature's counts."""
    X, y = DATA[kind](40, 2)
    X[0, 0] = X[5, 3] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        fit = bg.MixtureDA(component=kind, n_components=1, method="gibbs", draws=1500,
                           tune=2, chains=2, random_state=0).fit(X, y)
    key = "theta" if kind == "bernoulli" else "rate"
    draws = fit.idata_.posterior[key].values[:, :, :, 0].reshape(-1, 2, X.shape[1])
    prior = fit.component_prior_[0]
    seen = ~np.isnan(X)
    Xf = np.where(seen, X, 0.0)
    for k in range(2):
        c = Xf[y == k].sum(axis=0)
        n = seen[y == k].sum(axis=0)
        if kind == "bernoulli":
            ref = stats.beta(c + prior["alpha"], n - c + prior["alpha"])
        else:
            ref = stats.gamma(c + prior["alpha"], scale=1.0 / (n + prior["beta"]))
        se = ref.std() / np.sqrt(draws.shape[0])
        np.testing.assert_array_less(np.abs(draws[:, k].mean(axis=0) - ref.mean()), 5 * se)
        np.testing.assert_allclose(draws[:, k].std(axis=0), ref.std(), rtol=0.1)


def test_gibbs_near_the_map_and_relabeled(fitted):
    """Two well separated modes: the relabeled posterior means of the Gibbs draws are
    near the MAP's components (the pivot), and the predictive matches the MAP's."""
    kind, X, _, fit, gibbs = fitted
    tol = 0.05 if kind == "bernoulli" else 0.4
    np.testing.assert_allclose(gibbs.means_[0], fit.means_[0], atol=tol)
    np.testing.assert_allclose(gibbs.weights_, fit.weights_, atol=0.06)
    assert np.abs(gibbs.predict_proba(X) - fit.predict_proba(X)).max() < 0.15


# --------------------------------------------------------------- capabilities
def test_sample_save_load_intervals_and_loo(fitted, tmp_path):
    kind, X, y, fit, gibbs = fitted
    for est in (fit, gibbs):
        Xs, ys = est.sample(400, classes=0, random_state=0)
        assert Xs.shape == (400, X.shape[1]) and set(ys) == {0}
        if kind == "bernoulli":
            assert set(np.unique(Xs)) <= {0.0, 1.0}
            # class 0's first feature: 0.4 * 0.9 + 0.6 * 0.1 = 0.42 (truth); the fit's
            expect = est.weights_[0] @ est.means_[0, :, 0]
        else:
            assert np.all(Xs == np.round(Xs)) and Xs.min() >= 0
            expect = est.weights_[0] @ est.means_[0, :, 0]
        assert abs(Xs[:, 0].mean() - expect) < 4 * np.sqrt(max(expect, 0.2) / 400) + 0.02
        path = tmp_path / f"{kind}_{est.method_}.nc"
        est.save(path)
        loaded = bg.load(path)
        assert loaded.component == kind
        np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    interval = gibbs.predict_proba_interval(X[:3])
    assert interval.dims == ("obs", "class", "hdi")
    lo, hi = interval.sel(hdi="lower").values, interval.sel(hdi="higher").values
    assert np.all(lo <= gibbs.predict_proba(X[:3]) + 1e-12)
    assert np.all(gibbs.predict_proba(X[:3]) <= hi + 1e-12)
    assert gibbs.predict_proba_draws(X[:3]).shape == (2, 80, 3, 2)
    loo = gibbs.loo_log_joint(X, y)
    assert loo.kind == "psis" and np.all(np.isfinite(loo.log_joint))
    assert set(gibbs.idata_.groups()) >= {"posterior", "log_likelihood", "observed_data",
                                          "sample_stats"}


def test_missing_entries_map_equals_naive_bayes_and_gibbs_accepts_them():
    """NaN entries: a factorised component drops the entry's factor and count; with one
    component that is BernoulliNB's / PoissonNB's own handling, to 1e-10; "gibbs" takes
    them (no imputation needed)."""
    for kind in ("bernoulli", "poisson"):
        X, y = DATA[kind](80, 6)
        rng = np.random.default_rng(1)
        X[rng.uniform(size=X.shape) < 0.1] = np.nan
        mix = bg.MixtureDA(component=kind, n_components=1).fit(X, y)
        nb = _nb(kind).fit(X, y)
        np.testing.assert_allclose(mix.predict_joint_log_proba(X),
                                   nb.predict_joint_log_proba(X), atol=1e-10)
        two = bg.MixtureDA(component=kind, n_components=2, random_state=0).fit(X, y)
        assert np.all(np.isfinite(two.predict_proba(X)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bg.ConvergenceWarning)
            g = bg.MixtureDA(component=kind, n_components=2, method="gibbs", draws=10,
                             tune=5, chains=1, random_state=0).fit(X, y)
        assert np.all(np.isfinite(g.predict_proba(X)))


def test_bad_parameters_and_data():
    X, y = binary(40, 0)
    with pytest.raises(ValueError, match="component"):
        bg.MixtureDA(component="gamma").fit(X, y)
    with pytest.raises(ValueError, match=r"method='mcmc'.*gaussian"):
        bg.MixtureDA(component="bernoulli", method="mcmc").fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        bg.MixtureDA(component="bernoulli", alpha=0.5).fit(X, y)
    with pytest.raises(ValueError):  # binarize=None: X must be 0/1
        bg.MixtureDA(component="bernoulli", binarize=None).fit(X + 0.5, y)
    with pytest.raises(ValueError, match=r"(?i)negative"):
        bg.MixtureDA(component="poisson").fit(X - 1.0, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        g = bg.MixtureDA(component="bernoulli", n_components=1, method="gibbs", draws=5,
                         tune=2, chains=1).fit(X, y)
    with pytest.raises(AttributeError, match="Gaussian"):
        g.model_


# ---------------------------------------------------------- scikit-learn checks
def _expected(estimator) -> dict:
    """As for PoissonNB: the check scores negative blobs despite ``positive_only``."""
    failures = _expected_failures(estimator)
    if estimator.component == "poisson":
        failures["check_decision_proba_consistency"] = _NEGATIVE_BLOBS
    return failures


@parametrize_with_checks([
    bg.MixtureDA(component="bernoulli", max_components=2, n_init=1, random_state=0),
    bg.MixtureDA(component="poisson", max_components=2, n_init=1, random_state=0),
    bg.MixtureDA(component="bernoulli", method="gibbs", max_components=2, n_init=1,
                 draws=20, tune=10, chains=2, random_state=0)],
    expected_failed_checks=_expected)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)  # 20 draws on purpose
        check(estimator)
