"""method="mcmc" for KernelNB and MixedNB: PyMC models, NUTS, predictive groups.

KernelNB's likelihood is checked against a leave-one-out KDE written here with
``scipy.stats.norm`` (duplicated rows for weights), its prior against
``scipy.stats.norm`` on log h around Silverman's rule written here; MixedNB's model
against ``scipy.stats`` log-densities of its parts and its MCMC posterior against the
exact conjugate posterior.
"""

import warnings

import arviz as az
import numpy as np
import pytensor.tensor as pt
import pytest
from scipy import stats
from scipy.special import logsumexp

import bayesgen as bg
from bayesgen.families.kernel import pymc
from bayesgen.families.kernel.family import KernelFamily
from bayesgen.inference.mcmc import convergence_report
from bayesgen.inference.model import build_stats_model
from tests.conftest import make_data

# PSIS-LOO of few posterior draws: ArviZ's Pareto-k warning is expected
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings(
    "ignore:Estimated shape parameter of Pareto distribution:UserWarning:arviz")]

MCMC = {"chains": 2, "draws": 1000, "tune": 500, "progressbar": False}
# the mixed data of conftest with its columns interleaved: real, binary, count, real, ...
MIXED_ORDER = [0, 2, 4, 1, 3, 5]
MIXED = [("gaussian", [0, 3]), ("bernoulli", [1, 4]), ("poisson", [2, 5])]
COLUMNS = {"gaussian": [0, 3], "bernoulli": [1, 4], "poisson": [2, 5]}


def _quiet_prior_predictive(clf, **kwargs):
    """sample_prior_predictive without PyMC's warning that Potentials are ignored: a
    KernelNB potential is the likelihood, which prior predictive sampling must ignore."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Potentials.*", category=UserWarning)
        return clf.sample_prior_predictive(**kwargs)


def _point(model, rng, scale=0.3):
    """Random values for every free variable, in the model's value space."""
    return {
        k: v + rng.normal(scale=scale, size=np.shape(v)) for k, v in model.initial_point().items()
    }


def _natural(model, point):
    """The model's unobserved variables (natural space) at a value-space point."""
    fn = model.compile_fn(
        model.unobserved_value_vars, inputs=model.value_vars, on_unused_input="ignore"
    )
    values = fn(point)
    return dict(zip([v.name for v in model.unobserved_value_vars], values, strict=True))


def _assert_constant_difference(clf, X, y):
    rows, on_stats = clf.build_model(X, y), build_stats_model(clf)
    f_rows = rows.compile_logp(jacobian=False)
    f_stats = on_stats.compile_logp(jacobian=False)
    rng = np.random.default_rng(1)
    diffs = [f_rows(p) - f_stats(p) for p in (_point(on_stats, rng) for _ in range(5))]
    assert np.all(np.isfinite(diffs))
    np.testing.assert_allclose(diffs, diffs[0], rtol=0, atol=1e-8 * max(1.0, abs(diffs[0])))
    return diffs[0]


# ---------------------------------------------------------------- KernelNB


def reference_loo(x: np.ndarray, h: float) -> float:
    """LOO log-likelihood of a 1-D sample: sum_i log mean_{l != i} N(x_i; x_l, h^2)."""
    dens = stats.norm.pdf(x[:, None], loc=x[None, :], scale=h)
    np.fill_diagonal(dens, 0.0)
    return float(np.sum(np.log(dens.sum(axis=1) / (x.size - 1))))


def reference_total_loo(X, y, h):
    return sum(
        reference_loo(X[y == k, j], h[k, j]) for k in range(h.shape[0]) for j in range(h.shape[1])
    )


def silverman_reference(x: np.ndarray) -> float:
    q1, q3 = np.quantile(x, [0.25, 0.75], method="inverted_cdf")
    return 0.9 * min(np.std(x), (q3 - q1) / 1.34) * x.size ** (-0.2)


@pytest.fixture(scope="module")
def kde_data():
    """2 classes x 30 points x 2 features on different scales."""
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 30)
    X = rng.normal(size=(60, 2)) * [1.0, 3.0] + 2.0 * y[:, None]
    X[y == 1, 0] = rng.gamma(2.0, size=30)  # a skewed class
    return X, y


@pytest.fixture(scope="module")
def kde_fits(kde_data):
    X, y = kde_data
    mcmc = bg.KernelNB(method="mcmc", random_state=4, **MCMC).fit(X, y)
    map_ = bg.KernelNB(method="map").fit(X, y)
    return mcmc, map_


def test_kernel_stats_loglik_is_the_loo_likelihood(kde_data):
    X, y = kde_data
    family = KernelFamily()
    rng = np.random.default_rng(0)
    h = np.exp(rng.normal(size=(2, 2))) * 0.5
    unit = family.stats(X, y, np.ones(60), 2)
    value = family.pymc_stats_loglik({"bandwidth": pt.as_tensor(h)}, unit).eval()
    assert value == pytest.approx(reference_total_loo(X, y, h), rel=1e-10)
    # integer weights: the same as duplicated rows
    w = rng.integers(1, 4, size=60).astype(float)
    weighted = family.stats(X, y, w, 2)
    value = family.pymc_stats_loglik({"bandwidth": pt.as_tensor(h)}, weighted).eval()
    rows = np.repeat(np.arange(60), w.astype(int))
    assert value == pytest.approx(reference_total_loo(X[rows], y[rows], h), rel=1e-10)


def test_kernel_stats_loglik_stays_finite_for_tiny_bandwidths(kde_data):
    X, y = kde_data
    family = KernelFamily()
    h = pt.dmatrix("h")
    loglik = family.pymc_stats_loglik({"bandwidth": h}, family.stats(X, y, np.ones(60), 2))
    tiny = np.full((2, 2), 1e-8)
    value, grad = loglik.eval({h: tiny}), pt.grad(loglik, h).eval({h: tiny})
    assert np.isfinite(value) and np.all(np.isfinite(grad))
    assert np.all(grad > 0)  # far below the optimum: widening helps


def test_kernel_model_logp_matches_scipy(kde_data):
    X, y = kde_data
    clf = bg.KernelNB(bandwidth_sd=0.7, class_alpha=2.0).fit(X, y)
    model = clf.build_model(X, y)
    assert "x" not in model.named_vars and "x_loglik" in model.named_vars
    assert model.named_vars_to_dims["bandwidth"] == ("class", "feature")
    point = _point(model, np.random.default_rng(2))
    logp = model.compile_logp(jacobian=False)(point)
    named = _natural(model, point)
    pi, h = named["pi"], named["bandwidth"]
    centre = np.array([[silverman_reference(X[y == k, j]) for j in range(2)] for k in range(2)])
    expected = stats.dirichlet.logpdf(pi, [2.0, 2.0]) + np.log(pi[y]).sum()
    expected += stats.norm.logpdf(np.log(h), np.log(centre), 0.7).sum()
    expected += reference_total_loo(X, y, h)
    assert logp == pytest.approx(expected, rel=1e-9)


def test_kernel_stats_model_equals_row_model_up_to_a_constant(kde_data):
    X, y = kde_data
    _assert_constant_difference(bg.KernelNB().fit(X, y), X, y)


def test_kernel_mcmc_posterior(kde_fits, kde_data):
    mcmc, map_ = kde_fits
    X, _ = kde_data
    post = mcmc.idata_.posterior
    assert set(post.data_vars) == {"pi", "bandwidth"}
    assert post["bandwidth"].dims == ("chain", "draw", "class", "feature")
    assert "diverging" in mcmc.idata_.sample_stats
    assert convergence_report(mcmc.idata_, ["pi", "bandwidth"]) == []
    median = post["bandwidth"].median(("chain", "draw")).values
    ratio = median / map_.bandwidth_
    assert np.all((ratio > 0.5) & (ratio < 2.0))
    # the data are informative: the posterior of log h is narrower than the prior
    assert np.all(np.log(post["bandwidth"]).std(("chain", "draw")).values < 1.0)
    assert np.isfinite(az.loo(mcmc.idata_).elpd_loo)
    np.testing.assert_allclose(mcmc.predict_proba(X), map_.predict_proba(X), atol=0.1)


def test_kernel_mcmc_predictive_uses_the_draws_and_the_training_points(kde_fits, kde_data):
    """predict_proba = posterior mean of the KDE joint over the draws, written with scipy."""
    mcmc, _ = kde_fits
    X, y = kde_data
    Xt = np.array([[0.5, 1.0], [2.0, 2.0], [-1.0, 4.0], [3.0, -2.0]])
    h = mcmc.idata_.posterior["bandwidth"].values.reshape(-1, 2, 2)
    pi = mcmc.idata_.posterior["pi"].values.reshape(-1, 2)
    joint = np.log(pi)[:, None, :].repeat(len(Xt), 1)  # (S, n, K)
    for k in range(2):
        for j in range(2):
            dens = stats.norm.logpdf(Xt[None, :, None, j], X[y == k, j], h[:, None, None, k, j])
            joint[:, :, k] += logsumexp(dens, axis=2) - np.log((y == k).sum())
    expected = logsumexp(joint, axis=0)
    expected = np.exp(expected - logsumexp(expected, axis=1, keepdims=True))
    np.testing.assert_allclose(mcmc.predict_proba(Xt), expected, rtol=1e-8)


def reference_loo_terms(X, y, h):
    """Per row, sum_j log mean_{l != n, y_l = y_n} N(x_nj; x_lj, h_{y_n j}^2)."""
    out = np.empty(y.size)
    for n in range(y.size):
        others = (y == y[n]) & (np.arange(y.size) != n)
        out[n] = (logsumexp(stats.norm.logpdf(X[n], X[others], h[y[n]]), axis=0)
                  - np.log(others.sum())).sum()
    return out


def test_kernel_pointwise_log_lik_is_the_loo_kde(kde_fits, kde_data):
    """idata_'s log_likelihood: log pi_{y_n} + the LOO KDE term of row n, per draw."""
    mcmc, _ = kde_fits
    X, y = kde_data
    ll = mcmc.idata_.log_likelihood["xy"]
    assert ll.dims == ("chain", "draw", "obs")
    post = mcmc.idata_.posterior
    for chain, draw in [(0, 7), (1, 503)]:
        h = post["bandwidth"].values[chain, draw]
        pi = post["pi"].values[chain, draw]
        expected = np.log(pi[y]) + reference_loo_terms(X, y, h)
        np.testing.assert_allclose(ll.values[chain, draw], expected, rtol=1e-10)


def test_kernel_predictive_groups(kde_fits, kde_data):
    mcmc, _ = kde_fits
    X, y = kde_data
    pp = mcmc.sample_posterior_predictive(random_state=0).posterior_predictive
    assert pp["x"].dims == ("chain", "draw", "obs", "feature")
    assert pp["x"].shape == (2, 1000, *X.shape)
    rep = pp["x"].values.reshape(-1, *X.shape)
    cls = pp["y"].values.reshape(-1, X.shape[0])
    np.testing.assert_allclose(rep[cls == 1].mean(0), X[y == 1].mean(0), atol=0.05)


def test_kernel_prior_predictive(kde_data):
    X, y = kde_data
    sd = 0.5
    clf = bg.KernelNB(bandwidth_sd=sd).fit(X, y)
    idata = _quiet_prior_predictive(clf, draws=2000, random_state=0, X=X, y=y)
    log_h = np.log(idata.prior["bandwidth"].values[0])  # (S, K, d)
    centre = np.array([[silverman_reference(X[y == k, j]) for j in range(2)] for k in range(2)])
    se = sd / np.sqrt(2000)
    np.testing.assert_allclose(log_h.mean(0), np.log(centre), atol=4 * se)
    np.testing.assert_allclose(log_h.std(0), sd, rtol=0.08)
    pp = idata.prior_predictive
    assert pp["x"].dims == ("chain", "draw", "obs", "feature")
    assert pp["x"].shape == (1, 2000, *X.shape)
    # x = a training point of the class + N(0, h^2) noise with the draw's h:
    # E[x | k] = class mean and E[(x - mean)^2 | k] = class variance + mean of h^2
    x, cls, h2 = pp["x"].values[0], pp["y"].values[0], np.exp(2 * log_h)
    for k in range(2):
        rows = cls == k
        mean, var = X[y == k].mean(0), X[y == k].var(0)
        expected = var + (h2[:, k, :][:, None, :] * rows[..., None]).sum((0, 1)) / rows.sum()
        se = np.sqrt(expected / rows.sum())  # rows are independent given the draws of h
        assert np.all(np.abs(x[rows].mean(0) - mean) <= 5 * se)
        np.testing.assert_allclose(((x[rows] - mean) ** 2).mean(0), expected, rtol=0.05)


def test_kernel_mcmc_refuses_too_many_pairs(kde_data, monkeypatch):
    X, y = kde_data
    monkeypatch.setattr(pymc, "MAX_PAIR_BYTES", 10_000)
    with pytest.raises(ValueError, match=r"method='map'.*subsample"):
        bg.KernelNB(method="mcmc", **MCMC).fit(X, y)


def test_kernel_conjugate_points_to_mcmc(kde_data):
    X, y = kde_data
    with pytest.raises(ValueError, match="mcmc"):
        bg.KernelNB(method="conjugate").fit(X, y)


# ---------------------------------------------------------------- MixedNB


@pytest.fixture(scope="module")
def mixed_data():
    X, y = make_data("mixed", n_per_class=40, n_classes=2, seed=5)
    return X[:, MIXED_ORDER], y


@pytest.fixture(scope="module")
def mixed_fits(mixed_data):
    X, y = mixed_data
    mcmc = bg.MixedNB(families=MIXED, method="mcmc", random_state=6, **MCMC).fit(X, y)
    conj = bg.MixedNB(families=MIXED, method="conjugate", chains=4, draws=4000,
                      random_state=7).fit(X, y)
    return mcmc, conj


def test_mixed_model_logp_matches_scipy(mixed_data):
    X, y = mixed_data
    clf = bg.MixedNB(families=MIXED, class_alpha=1.5).fit(X, y)
    model = clf.build_model(X, y)
    assert "x" not in model.named_vars
    for name, var in (("gaussian0", "mu"), ("bernoulli1", "theta"), ("poisson2", "rate")):
        assert model.named_vars_to_dims[f"{name}_{var}"] == ("class", f"{name}_feature")
        assert model.named_vars_to_dims[f"{name}_x"] == ("obs", f"{name}_feature")
    assert list(model.coords["poisson2_feature"]) == ["x2", "x5"]
    point = _point(model, np.random.default_rng(3))
    logp = model.compile_logp(jacobian=False)(point)
    v = _natural(model, point)
    g, b, p = (clf._prior["parts"][i] for i in range(3))
    Xg, Xb, Xp = (X[:, COLUMNS[name]] for name in ("gaussian", "bernoulli", "poisson"))
    pi, mu, var = v["pi"], v["gaussian0_mu"], v["gaussian0_var"]
    theta, rate = v["bernoulli1_theta"], v["poisson2_rate"]
    expected = stats.dirichlet.logpdf(pi, [1.5, 1.5]) + np.log(pi[y]).sum()
    expected += stats.invgamma.logpdf(var, g["a0"], scale=g["b0"]).sum()
    expected += stats.norm.logpdf(mu, g["m0"], np.sqrt(var / g["kappa0"])).sum()
    expected += stats.norm.logpdf(Xg, mu[y], np.sqrt(var[y])).sum()
    expected += stats.beta.logpdf(theta, b["alpha"], b["alpha"]).sum()
    expected += stats.bernoulli.logpmf(Xb, theta[y]).sum()
    expected += stats.gamma.logpdf(rate, p["alpha"], scale=1 / p["beta"]).sum()
    expected += stats.poisson.logpmf(Xp, rate[y]).sum()
    assert logp == pytest.approx(expected, rel=1e-9)


def test_mixed_stats_model_equals_row_model_up_to_a_constant(mixed_data):
    X, y = mixed_data
    _assert_constant_difference(bg.MixedNB(families=MIXED).fit(X, y), X, y)


def test_mixed_with_kernel_and_categorical_parts(kde_data):
    """Models, coords and predictive x of a mix with fixed params and extra dims."""
    X, y = kde_data
    rng = np.random.default_rng(8)
    codes = rng.integers(0, 3, size=(60, 1)).astype(float)
    Xm = np.column_stack([X[:, :1], codes, X[:, 1:]])
    parts = [("kernel", [2]), ("categorical", [1]), ("gaussian", [0])]
    clf = bg.MixedNB(families=parts).fit(Xm, y)
    model = clf.build_model(Xm, y)
    assert "kernel0_x_loglik" in model.named_vars and "categorical1_x" in model.named_vars
    assert model.named_vars_to_dims["kernel0_bandwidth"] == ("class", "kernel0_feature")
    assert list(model.coords["categorical1_category"]) == [0, 1, 2]
    _assert_constant_difference(clf, Xm, y)
    fixed = clf._family.fixed_params(clf._stats)
    assert set(fixed) == {
        "kernel0_points", "kernel0_point_class", "kernel0_point_weight", "kernel0_point_row"
    }
    np.testing.assert_array_equal(fixed["kernel0_points"], Xm[:, [2]])
    idata = _quiet_prior_predictive(clf, draws=200, random_state=0, X=Xm, y=y)
    x = idata.prior_predictive["x"]
    assert x.dims == ("chain", "draw", "obs", "feature") and x.shape == (1, 200, 60, 3)
    assert set(np.unique(x.values[..., 1])) <= {0.0, 1.0, 2.0}
    assert not np.all(x.values[..., [0, 2]] == np.round(x.values[..., [0, 2]]))


def test_mixed_mcmc_agrees_with_conjugate(mixed_fits, mixed_data):
    mcmc, conj = mixed_fits
    X, _ = mixed_data
    for name in ("pi", *mcmc._family.param_dims):
        a = mcmc.idata_.posterior[name]
        b = conj.idata_.posterior[name]
        mcse = az.mcse(mcmc.idata_, var_names=[name])[name]
        tol = 4 * np.sqrt(mcse**2 + b.std(("chain", "draw")) ** 2 / 16000)
        diff = np.abs(a.mean(("chain", "draw")) - b.mean(("chain", "draw")))
        assert bool((diff <= tol).all()), name
    np.testing.assert_allclose(mcmc.predict_proba(X), conj.predict_proba(X), atol=0.03)


def test_mixed_mcmc_idata_layout(mixed_fits):
    mcmc, conj = mixed_fits
    names = {"pi", "gaussian0_mu", "gaussian0_var", "bernoulli1_theta", "poisson2_rate"}
    assert set(mcmc.idata_.posterior.data_vars) == names
    assert set(conj.idata_.posterior.data_vars) == names
    for name in names:
        assert mcmc.idata_.posterior[name].dims == conj.idata_.posterior[name].dims
    assert mcmc.idata_.posterior["gaussian0_mu"].dims == (
        "chain", "draw", "class", "gaussian0_feature"
    )
    assert list(mcmc.idata_.posterior["bernoulli1_feature"].values) == ["x1", "x4"]
    assert "diverging" in mcmc.idata_.sample_stats
    assert list(mcmc.idata_.log_likelihood.data_vars) == ["xy"]
    assert convergence_report(mcmc.idata_, sorted(names)) == []
    assert np.isfinite(az.loo(mcmc.idata_).elpd_loo)


def test_mixed_pointwise_log_lik_is_the_sum_of_the_parts(mixed_fits, mixed_data):
    """idata_'s log_likelihood of an MCMC fit: log pi_{y_n} + each part's scipy log-density."""
    mcmc, _ = mixed_fits
    X, y = mixed_data
    post = mcmc.idata_.posterior
    Xg, Xb, Xp = (X[:, COLUMNS[name]] for name in ("gaussian", "bernoulli", "poisson"))
    for chain, draw in [(0, 11), (1, 940)]:
        v = {name: post[name].values[chain, draw] for name in post.data_vars}
        expected = np.log(v["pi"][y])
        expected += stats.norm.logpdf(Xg, v["gaussian0_mu"][y],
                                      np.sqrt(v["gaussian0_var"][y])).sum(1)
        expected += stats.bernoulli.logpmf(Xb, v["bernoulli1_theta"][y]).sum(1)
        expected += stats.poisson.logpmf(Xp, v["poisson2_rate"][y]).sum(1)
        np.testing.assert_allclose(mcmc.idata_.log_likelihood["xy"].values[chain, draw],
                                   expected, rtol=1e-10)


def _check_columns(x: np.ndarray) -> None:
    """Replicated x keeps the original column order: binary, counts, reals in place."""
    assert set(np.unique(x[..., COLUMNS["bernoulli"]])) <= {0.0, 1.0}
    counts = x[..., COLUMNS["poisson"]]
    assert np.all(counts >= 0) and np.all(counts == np.round(counts))
    real = x[..., COLUMNS["gaussian"]]
    assert not np.any(real == np.round(real))


def test_mixed_posterior_predictive(mixed_fits, mixed_data):
    mcmc, _ = mixed_fits
    X, y = mixed_data
    pp = mcmc.sample_posterior_predictive(random_state=0).posterior_predictive
    assert pp["x"].dims == ("chain", "draw", "obs", "feature")
    assert pp["x"].shape == (2, 1000, *X.shape)
    assert list(pp["feature"].values) == [f"x{j}" for j in range(6)]
    _check_columns(pp["x"].values)
    rep = pp["x"].values.reshape(-1, *X.shape)
    cls = pp["y"].values.reshape(-1, X.shape[0])
    for k in range(2):  # up to the prior's shrinkage and the posterior spread
        diff = rep[cls == k].mean(0) - X[y == k].mean(0)
        assert np.all(np.abs(diff) <= 0.1 * X[y == k].std(0) + 0.03), diff


def test_mixed_prior_predictive(mixed_data):
    X, y = mixed_data
    clf = bg.MixedNB(families=MIXED, class_alpha=2.0).fit(X, y)
    n_draws = 2000
    idata = clf.sample_prior_predictive(draws=n_draws, random_state=0, X=X, y=y)
    prior = idata.prior
    g, b, p = (clf._prior["parts"][i] for i in range(3))
    np.testing.assert_allclose(prior["pi"].mean(("chain", "draw")), 0.5,
                               atol=4 * np.sqrt(0.05 / n_draws))
    # marginal prior medians (heavy tails: medians, not means): about half of the
    # draws fall below each one, within 4 binomial standard errors
    medians = {
        "pi": stats.beta.median(2.0, 2.0),
        "gaussian0_mu": g["m0"],
        "gaussian0_var": stats.invgamma.median(g["a0"], scale=g["b0"]),
        "bernoulli1_theta": stats.beta.median(b["alpha"], b["alpha"]),
        "poisson2_rate": stats.gamma.median(p["alpha"], scale=1 / p["beta"]),
    }
    for name, median in medians.items():
        below = (prior[name].values[0] <= median).mean(axis=0)
        np.testing.assert_allclose(below, 0.5, atol=4 * np.sqrt(0.25 / n_draws), err_msg=name)
    pp = idata.prior_predictive
    assert pp["x"].dims == ("chain", "draw", "obs", "feature")
    assert pp["x"].shape == (1, n_draws, *X.shape)
    assert list(pp["feature"].values) == [f"x{j}" for j in range(6)]
    _check_columns(pp["x"].values)
