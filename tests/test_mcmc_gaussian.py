"""method="mcmc" core on GaussianNB: models, NUTS vs the exact posterior, predictive groups."""

import arviz as az
import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_iris

import bayesgen as bg
from bayesgen.inference.mcmc import convergence_report, resolve_sampler
from bayesgen.inference.model import build_stats_model

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y


@pytest.fixture(scope="module")
def fits(iris):
    X, y = iris
    mcmc = bg.GaussianNB(method="mcmc", chains=4, draws=1000, tune=1000, random_state=1,
                         progressbar=False).fit(X, y)
    conj = bg.GaussianNB(method="conjugate", chains=4, draws=4000, random_state=2).fit(X, y)
    return mcmc, conj


def _point(model, rng):
    """Random values for every free variable, in the model's value space."""
    point = model.initial_point()
    return {k: v + rng.normal(scale=0.3, size=np.shape(v)) for k, v in point.items()}


def test_model_logp_matches_scipy(iris):
    X, y = iris
    clf = bg.GaussianNB().fit(X, y)
    model = clf.build_model(X, y)
    rng = np.random.default_rng(0)
    point = _point(model, rng)
    logp = model.compile_logp(jacobian=False)(point)
    # back to natural parameters through the model's own transforms
    values = model.compile_fn(model.unobserved_value_vars, inputs=model.value_vars,
                              on_unused_input="ignore")(point)
    named = dict(zip([v.name for v in model.unobserved_value_vars], values, strict=True))
    pi, mu, var = named["pi"], named["mu"], named["var"]
    prior = clf._prior
    expected = stats.dirichlet.logpdf(pi, clf.class_alpha_)
    expected += stats.invgamma.logpdf(var, prior["a0"], scale=prior["b0"]).sum()
    expected += stats.norm.logpdf(mu, prior["m0"], np.sqrt(var / prior["kappa0"])).sum()
    expected += np.log(pi[y]).sum()
    expected += stats.norm.logpdf(X, mu[y], np.sqrt(var[y])).sum()
    assert logp == pytest.approx(expected, rel=1e-9)


def test_stats_model_equals_row_model_up_to_a_constant(iris):
    X, y = iris
    clf = bg.GaussianNB().fit(X, y)
    rows, on_stats = clf.build_model(X, y), build_stats_model(clf)
    f_rows = rows.compile_logp(jacobian=False)
    f_stats = on_stats.compile_logp(jacobian=False)
    rng = np.random.default_rng(1)
    diffs = [f_rows(p) - f_stats(p) for p in (_point(on_stats, rng) for _ in range(5))]
    np.testing.assert_allclose(diffs, diffs[0], rtol=0, atol=1e-6 * abs(diffs[0]))
    # the constant is the dropped -N d/2 log(2 pi)
    assert diffs[0] == pytest.approx(-0.5 * X.size * np.log(2 * np.pi), rel=1e-9)


def test_mcmc_agrees_with_conjugate(fits, iris):
    mcmc, conj = fits
    X, _ = iris
    for name in ("pi", "mu", "var"):
        a = mcmc.idata_.posterior[name]
        b = conj.idata_.posterior[name]
        mcse = az.mcse(mcmc.idata_, var_names=[name])[name]
        tol = 4 * np.sqrt(mcse**2 + (b.std(("chain", "draw")) ** 2 / 16000))
        diff = np.abs(a.mean(("chain", "draw")) - b.mean(("chain", "draw")))
        assert bool((diff <= tol).all()), name
    np.testing.assert_allclose(mcmc.predict_proba(X), conj.predict_proba(X), atol=0.03)


def test_mcmc_idata_layout(fits):
    mcmc, conj = fits
    for group in ("posterior", "log_likelihood", "observed_data"):
        assert group in mcmc.idata_.groups()
    assert "diverging" in mcmc.idata_.sample_stats
    for name in ("pi", "mu", "var"):
        assert mcmc.idata_.posterior[name].dims == conj.idata_.posterior[name].dims
    assert set(mcmc.idata_.posterior.data_vars) == {"pi", "mu", "var"}
    assert np.isfinite(az.loo(mcmc.idata_).elpd_loo)
    table = mcmc.summary()
    assert {"r_hat", "ess_bulk"} <= set(table.columns)
    assert table["r_hat"].max() <= 1.01
    assert convergence_report(mcmc.idata_, ["pi", "mu", "var"]) == []


def test_posterior_predictive_group(fits, iris):
    mcmc, _ = fits
    X, y = iris
    idata = mcmc.sample_posterior_predictive(random_state=0)
    pp = idata.posterior_predictive
    assert pp["y"].dims == ("chain", "draw", "obs")
    assert pp["x"].dims == ("chain", "draw", "obs", "feature")
    assert pp["x"].shape == (4, 1000, *X.shape)
    # replicated class frequencies centre on the observed ones
    freq = np.stack([(pp["y"].values == k).mean() for k in range(3)])
    np.testing.assert_allclose(freq, np.bincount(y) / len(y), atol=0.02)
    # replicated setosa feature means centre on the observed ones
    rep = pp["x"].values.reshape(-1, *X.shape)
    ymask = pp["y"].values.reshape(-1, X.shape[0]) == 0
    setosa = rep[ymask].mean(0)
    np.testing.assert_allclose(setosa, X[y == 0].mean(0), rtol=0.03)


def test_prior_predictive_moments(iris):
    X, y = iris
    clf = bg.GaussianNB(class_alpha=2.0).fit(X, y)
    idata = clf.sample_prior_predictive(draws=3000, random_state=0, X=X, y=y)
    assert {"prior", "prior_predictive", "observed_data"} <= set(idata.groups())
    prior = idata.prior
    np.testing.assert_allclose(prior["pi"].mean(("chain", "draw")), 1 / 3, atol=0.02)
    b0, a0 = clf._prior["b0"], clf._prior["a0"]
    # the prior mean of var is b0 / (a0 - 1); var's prior is heavy-tailed, compare medians
    med = prior["var"].median(("chain", "draw")).values
    np.testing.assert_allclose(med, stats.invgamma.median(a0, scale=b0) * np.ones((3, 1)),
                               rtol=0.1)
    # mu | var ~ N(m0, var / kappa0): its median is m0; MC error ~ a few % of its spread
    spread = np.sqrt(med / clf._prior["kappa0"])
    z = (prior["mu"].median(("chain", "draw")).values - clf._prior["m0"]) / spread
    assert np.all(np.abs(z) < 0.1)
    pp = idata.prior_predictive
    assert pp["x"].dims == ("chain", "draw", "obs", "feature")
    assert pp["y"].shape == (1, 3000, len(y))


def test_convergence_warning_says_what_to_try(iris):
    X, y = iris
    with pytest.warns(bg.ConvergenceWarning, match="target_accept"):
        bg.GaussianNB(method="mcmc", chains=2, draws=30, tune=30, random_state=0,
                      progressbar=False).fit(X, y)


def test_bad_sampler_settings(iris):
    X, y = iris
    with pytest.raises(ValueError, match="sampler"):
        bg.GaussianNB(method="mcmc", sampler="gibbs").fit(X, y)
    with pytest.raises(ValueError, match="target_accept"):
        bg.GaussianNB(method="mcmc", target_accept=1.5).fit(X, y)
    with pytest.raises(ValueError, match="draws"):
        bg.GaussianNB(method="mcmc", draws=0).fit(X, y)
    assert resolve_sampler("auto") in ("numpyro", "nutpie", "blackjax", "pymc")
    with pytest.raises(ValueError, match="posterior"):
        bg.GaussianNB().fit(X, y).summary()


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/maps"), reason="Linux only")
def test_repeated_fits_do_not_leak_compiled_programs():
    """Each JAX fit compiles a program for its own data; without releasing it a process
    ran out of memory maps (LLVM "Cannot allocate memory") after ~110 fits."""
    rng = np.random.default_rng(0)
    sizes = []
    for rep in range(4):
        y = np.repeat([0, 1, 2], 10)
        X = rng.normal(size=(30, 2)) + y[:, None]
        with pytest.warns(bg.ConvergenceWarning, match="converged"):
            bg.GaussianNB(method="mcmc", chains=1, draws=50, tune=50, random_state=rep,
                          progressbar=False).fit(X, y)
        with open("/proc/self/maps") as maps:
            sizes.append(sum(1 for _ in maps))
    # before the fix every fit added ~570 maps
    assert max(sizes[1:]) - sizes[1] < 100, sizes
