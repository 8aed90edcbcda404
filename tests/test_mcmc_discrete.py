"""PyMC models and method="mcmc" of the discrete naive Bayes families and ExponentialNB.

BernoulliNB, MultinomialNB, PoissonNB, CategoricalNB and ExponentialNB (the same Gamma
prior on a rate as PoissonNB, for positive durations). References are independent
of the code under test: ``scipy.stats`` log-densities (priors and rows), the textbook
moments of the Beta, Dirichlet and Gamma priors, and the closed-form conjugate
posteriors (Beta, Dirichlet, Gamma updates written here from raw counts of X).
One conjugate and one MCMC fit per family, shared by the module.
"""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from scipy import stats
from scipy.special import gammaln

import bayesgen as bg
from bayesgen.inference import mcmc
from bayesgen.inference.model import build_stats_model
from bayesgen.inference.posterior import exact_predictive_log_joint

pytestmark = pytest.mark.slow

NAMES = ("bernoulli", "multinomial", "poisson", "categorical", "exponential")
PARAM = {"bernoulli": "theta", "multinomial": "theta", "poisson": "rate", "categorical": "theta",
         "exponential": "rate"}
CLASS_ALPHA = 2.0
K = 3
#: CategoricalNB case: C_j = (3, 5, 3) (blocks C = 3: features 0 and 2, C = 5: feature 1);
#: code 2 of feature 0 and code 4 of feature 1 never occur in the data
N_CATEGORIES = (3, 5, 3)
CASES = {
    "bernoulli": (bg.BernoulliNB, {"alpha": 2.0}),
    "multinomial": (bg.MultinomialNB, {"alpha": np.array([1.5, 2.0, 2.5, 3.0, 1.2])}),
    "poisson": (bg.PoissonNB, {"alpha": 3.0}),
    "categorical": (bg.CategoricalNB, {"alpha": 1.5, "min_categories": list(N_CATEGORIES)}),
    "exponential": (bg.ExponentialNB, {"alpha": 3.0}),
}
CHAINS, DRAWS = 4, 1000


def make_data(name: str, n_per_class: int = 30, seed: int = 7):
    """Small simulated (X, y) with K = 3 classes for family ``name``."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n_per_class)
    n = y.size
    if name == "bernoulli":
        p = rng.uniform(0.1, 0.9, size=(K, 5))
        X = (rng.uniform(size=(n, 5)) < p[y]).astype(float)
    elif name == "multinomial":
        theta = rng.dirichlet(np.full(5, 2.0), size=K)
        X = np.array([rng.multinomial(rng.poisson(10), theta[k]) for k in y], dtype=float)
    elif name == "poisson":
        lam = rng.uniform(0.5, 5.0, size=(K, 4))
        X = rng.poisson(lam[y]).astype(float)
    elif name == "exponential":
        X = rng.exponential(rng.uniform(0.2, 20.0, size=(K, 4))[y])
    else:
        seen = (2, 4, 3)  # below min_categories for features 0 and 1
        cols = [(rng.integers(0, c, n) + y * (rng.uniform(size=n) < 0.6)) % c for c in seen]
        X = np.column_stack(cols).astype(float)
    return X, y


def make_estimator(name: str, **kwargs):
    cls, options = CASES[name]
    return cls(class_alpha=CLASS_ALPHA, **options, **kwargs)


@pytest.fixture(scope="module")
def fits():
    """Lazy cache of fits: ``fits(name, method)`` -> (estimator, X, y, warnings)."""
    cache: dict = {}

    def get(name: str, method: str):
        if (name, method) not in cache:
            X, y = make_data(name)
            kwargs = {"method": method}
            if method in ("conjugate", "mcmc"):
                kwargs.update(chains=CHAINS, draws=DRAWS, random_state=3)
            if method == "mcmc":
                kwargs.update(tune=1000, progressbar=False)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                est = make_estimator(name, **kwargs).fit(X, y)
            runtime = [str(w.message) for w in caught
                       if issubclass(w.category, bg.ConvergenceWarning)]
            cache[name, method] = (est, X, y, runtime)
        return cache[name, method]

    return get


# ------------------------------------------------------------------ helpers
def prior_hyper(name: str, X: np.ndarray) -> dict:
    """The prior's hyper-parameters from the estimator's options (textbook definitions)."""
    options = CASES[name][1]
    d = X.shape[1]
    alpha = np.broadcast_to(np.asarray(options["alpha"], dtype=float), (d,))
    out = {"alpha": alpha}
    if name == "poisson":
        out["beta"] = (alpha - 1.0) / X.mean(axis=0)  # prior mode at the overall mean
    if name == "exponential":
        out["beta"] = (alpha - 1.0) * X.mean(axis=0)  # prior mean duration: the overall mean
    return out


def random_values(name: str, X: np.ndarray, rng: np.random.Generator) -> dict:
    """Random constrained values of every free variable of the models."""
    d = X.shape[1]
    values = {"pi": rng.dirichlet(np.ones(K))}
    if name == "bernoulli":
        values["theta"] = rng.uniform(0.05, 0.95, size=(K, d))
    elif name == "multinomial":
        values["theta"] = rng.dirichlet(np.ones(d), size=K)
    elif name in ("poisson", "exponential"):
        values["rate"] = rng.gamma(2.0, 1.5, size=(K, d)) + 0.05
    else:
        per_feature = [rng.dirichlet(np.ones(c), size=K) for c in N_CATEGORIES]
        values["features"] = per_feature
        for c in set(N_CATEGORIES):  # the model's blocks of features with C_j = c
            block = [t for t, c_j in zip(per_feature, N_CATEGORIES, strict=True) if c_j == c]
            values[f"theta_c{c}"] = np.stack(block, axis=1)
    return values


def value_point(model, values: dict) -> dict:
    """The model's value-variable point (transformed space) for constrained ``values``."""
    point = {}
    for rv in model.free_RVs:
        x = np.asarray(values[rv.name], dtype=np.float64)  # KeyError: unexpected variable
        transform = model.rvs_to_transforms.get(rv)
        if transform is not None:
            x = transform.forward(pt.as_tensor(x), *rv.owner.inputs).eval()
        point[model.rvs_to_values[rv].name] = x
    return point


def scipy_logp(name: str, X: np.ndarray, y: np.ndarray, values: dict) -> float:
    """log p(pi, theta) + sum_n log p(y_n | pi) + log p(x_n | y_n, theta) with scipy.stats."""
    hyper = prior_hyper(name, X)
    alpha = hyper["alpha"]
    pi = values["pi"]
    total = stats.dirichlet.logpdf(pi, np.full(K, CLASS_ALPHA))
    total += stats.multinomial.logpmf(np.eye(K)[y], 1, pi).sum()
    if name == "bernoulli":
        theta = values["theta"]
        total += stats.beta.logpdf(theta, alpha, alpha).sum()
        total += stats.bernoulli.logpmf(X, theta[y]).sum()
    elif name == "multinomial":
        theta = values["theta"]
        total += sum(stats.dirichlet.logpdf(theta[k], alpha) for k in range(K))
        total += stats.multinomial.logpmf(X, X.sum(axis=1), theta[y]).sum()
    elif name == "poisson":
        rate = values["rate"]
        total += stats.gamma.logpdf(rate, alpha, scale=1.0 / hyper["beta"]).sum()
        total += stats.poisson.logpmf(X, rate[y]).sum()
    elif name == "exponential":
        rate = values["rate"]
        total += stats.gamma.logpdf(rate, alpha, scale=1.0 / hyper["beta"]).sum()
        total += stats.expon.logpdf(X, scale=1.0 / rate[y]).sum()
    else:
        for j, c in enumerate(N_CATEGORIES):
            theta_j = values["features"][j]
            total += sum(stats.dirichlet.logpdf(theta_j[k], np.full(c, alpha[j])) for k in range(K))
            onehot = np.eye(c)[X[:, j].astype(int)]
            total += stats.multinomial.logpmf(onehot, 1, theta_j[y]).sum()
    return float(total)


def exact_posterior(name: str, X: np.ndarray, y: np.ndarray) -> dict:
    """Closed-form conjugate posterior (mean, sd) of pi and the family parameter."""
    hyper = prior_hyper(name, X)
    alpha = hyper["alpha"]
    n_k = np.bincount(y, minlength=K).astype(float)
    a_pi = n_k + CLASS_ALPHA
    out = {"pi": _dirichlet_moments(a_pi)}
    sums = np.array([X[y == k].sum(axis=0) for k in range(K)])
    if name == "bernoulli":
        a, b = sums + alpha, n_k[:, None] - sums + alpha
        mean = a / (a + b)
        out["theta"] = (mean, np.sqrt(mean * (1 - mean) / (a + b + 1)))
    elif name == "multinomial":
        out["theta"] = _dirichlet_moments(sums + alpha)
    elif name == "poisson":
        a, b = sums + alpha, n_k[:, None] + hyper["beta"]
        out["rate"] = (a / b, np.sqrt(a) / b)
    elif name == "exponential":
        a, b = n_k[:, None] + alpha, sums + hyper["beta"]
        out["rate"] = (a / b, np.sqrt(a) / b)
    else:
        width = max(N_CATEGORIES)
        mean, sd = np.zeros((2, K, len(N_CATEGORIES), width))
        for j, c in enumerate(N_CATEGORIES):
            codes = X[:, j].astype(int)
            counts = np.array([np.bincount(codes[y == k], minlength=c) for k in range(K)])
            mean[:, j, :c], sd[:, j, :c] = _dirichlet_moments(counts + alpha[j])
        out["theta"] = (mean, sd)
    return out


def _dirichlet_moments(conc: np.ndarray):
    total = conc.sum(axis=-1, keepdims=True)
    mean = conc / total
    return mean, np.sqrt(mean * (1 - mean) / (total + 1))


# ------------------------------------------------------- 1. model_ vs scipy
@pytest.mark.parametrize("name", NAMES)
def test_model_logp_matches_scipy(fits, name):
    est, X, y, _ = fits(name, "map")
    model = est.build_model(X, y)
    logp = model.compile_logp(jacobian=False)
    rng = np.random.default_rng(11)
    for _ in range(3):
        values = random_values(name, X, rng)
        expected = scipy_logp(name, X, y, values)
        assert logp(value_point(model, values)) == pytest.approx(expected, rel=1e-9, abs=1e-8)


@pytest.mark.parametrize("name", NAMES)
def test_model_variables_and_dims(fits, name):
    est, X, y, _ = fits(name, "map")
    model = est.build_model(X, y)
    param = PARAM[name]
    dims = model.named_vars_to_dims
    assert dims["x"] == ("obs", "feature")
    assert dims[param] == est._family.param_dims[param]
    shape = tuple(model.dim_lengths[dim].eval() for dim in dims[param])
    assert shape == np.shape(est._params[param])
    np.testing.assert_array_equal(model.rvs_to_values[model["x"]].eval(), X)
    if name == "categorical":
        assert model.coords["category"] == tuple(range(max(N_CATEGORIES)))
        assert {v.name for v in model.free_RVs} == {"pi", "theta_c3", "theta_c5"}
        assert dims["theta_c3"] == ("class", "feature_c3", "category_c3")
        assert model.coords["feature_c3"] == (0, 2)
        assert model.coords["feature_c5"] == (1,)
        assert model.coords["category_c5"] == tuple(range(5))


# --------------------------------------- 2. statistics model vs model_
@pytest.mark.parametrize("name", NAMES)
def test_stats_model_differs_from_model_by_the_dropped_constant(fits, name):
    est, X, y, _ = fits(name, "map")
    model = est.build_model(X, y)
    full = model.compile_logp(jacobian=False)
    reduced = build_stats_model(est).compile_logp(jacobian=False)
    rng = np.random.default_rng(5)
    diffs = []
    for _ in range(4):
        point = value_point(model, random_values(name, X, rng))
        diffs.append(full(point) - reduced(point))
    # the statistics log-likelihoods drop exactly the terms free of the parameters
    if name == "multinomial":
        const = (gammaln(X.sum(axis=1) + 1) - gammaln(X + 1).sum(axis=1)).sum()
    elif name == "poisson":
        const = -gammaln(X + 1).sum()
    else:
        const = 0.0
    np.testing.assert_allclose(diffs, const, rtol=1e-10, atol=1e-8)


@pytest.mark.parametrize("name", NAMES)
def test_stats_model_weights_equal_duplicated_rows(name):
    X, y = make_data(name, n_per_class=8, seed=1)
    weights = np.where(np.arange(y.size) % 3 == 0, 2.0, 1.0)
    Xd, yd = np.repeat(X, weights.astype(int), axis=0), np.repeat(y, weights.astype(int))
    weighted = make_estimator(name).fit(X, y, sample_weight=weights)
    duplicated = make_estimator(name).fit(Xd, yd)
    rng = np.random.default_rng(2)
    model_w, model_d = build_stats_model(weighted), build_stats_model(duplicated)
    logp_w = model_w.compile_logp(jacobian=False)
    logp_d = model_d.compile_logp(jacobian=False)
    for _ in range(2):
        point = value_point(model_w, random_values(name, X, rng))
        assert logp_w(point) == pytest.approx(logp_d(point), rel=1e-10)


# -------------------------------------------------- 3. prior predictive
@pytest.mark.parametrize("name", NAMES)
def test_prior_predictive_has_the_prior_moments(fits, name):
    est, X, y, _ = fits(name, "map")
    draws = 2000
    idata = est.sample_prior_predictive(draws=draws, random_state=0, X=X, y=y)
    prior, pp = idata.prior, idata.prior_predictive
    assert pp["x"].shape == (1, draws, *X.shape)
    assert pp["y"].shape == (1, draws, X.shape[0])

    def check_mean(sample, mean, sd, z=4.5):
        err = np.abs(np.asarray(sample).mean(axis=0) - mean)
        bound = z * sd / np.sqrt(draws)
        assert np.all(err < bound), (err, bound)

    check_mean(prior["pi"].values[0], *_dirichlet_moments(np.full(K, CLASS_ALPHA)))
    # y_rep: class frequencies per draw have mean E[pi] = 1/K
    freq = np.stack([(pp["y"].values[0] == k).mean(axis=1) for k in range(K)], axis=1)
    check_mean(freq, np.full(K, 1.0 / K), np.full(K, 0.3))
    hyper = prior_hyper(name, X)
    alpha = hyper["alpha"]
    param = prior[PARAM[name]].values[0]
    x_rep = pp["x"].values[0]  # (draws, n, d)
    if name == "bernoulli":
        mean = np.broadcast_to(0.5, (K, X.shape[1]))
        check_mean(param, mean, np.sqrt(0.25 / (2 * alpha + 1)))
        check_mean(x_rep.mean(axis=1), 0.5, 0.5)  # x_nj ~ Bernoulli(1/2) marginally
    elif name == "multinomial":
        mean, sd = _dirichlet_moments(alpha)
        check_mean(param, mean, sd)
        totals = np.broadcast_to(X.sum(axis=1), (draws, X.shape[0]))
        np.testing.assert_array_equal(x_rep.sum(axis=2), totals)  # row totals are given
    elif name == "poisson":
        mean, sd = alpha / hyper["beta"], np.sqrt(alpha) / hyper["beta"]
        check_mean(param, mean, sd)
        # E[x] = E[rate]; Var of a draw's mean over rows <= Var[rate] + E[rate]
        check_mean(x_rep.mean(axis=1), mean, np.sqrt(sd**2 + mean))
    elif name == "exponential":
        mean, sd = alpha / hyper["beta"], np.sqrt(alpha) / hyper["beta"]
        check_mean(param, mean, sd)
        assert np.all(x_rep >= 0)
        # x = E / rate, 1 / rate ~ InvGamma(alpha, beta): E[x] = beta / (alpha - 1) and a
        # draw's mean over rows has Var <= Var[1/rate] + E[1/rate^2] (alpha = 3 > 2)
        beta = hyper["beta"]
        inv_mean = beta / (alpha - 1.0)
        inv_sq = beta**2 / ((alpha - 1.0) * (alpha - 2.0))
        check_mean(x_rep.mean(axis=1), inv_mean, np.sqrt(2.0 * inv_sq - inv_mean**2))
    else:
        for j, c in enumerate(N_CATEGORIES):
            mean, sd = _dirichlet_moments(np.full(c, alpha[j]))
            check_mean(param[:, :, j, :c], mean, sd)
            assert np.all(param[:, :, j, c:] == 0)
            assert x_rep[..., j].max() < c and x_rep[..., j].min() >= 0
            freq = np.stack([(x_rep[..., j] == code).mean(axis=1) for code in range(c)], axis=1)
            check_mean(freq, np.full(c, 1.0 / c), np.full(c, 0.5))


# ------------------------------------------ 4. MCMC vs conjugate posterior
@pytest.mark.parametrize("name", NAMES)
def test_mcmc_converges_without_divergences(fits, name):
    est, _, _, runtime = fits(name, "mcmc")
    assert not [m for m in runtime if "converged" in m]
    assert mcmc.convergence_report(est.idata_, est._var_names()) == []


@pytest.mark.parametrize("name", NAMES)
def test_mcmc_posterior_matches_conjugate(fits, name):
    est, X, y, _ = fits(name, "mcmc")
    conj = fits(name, "conjugate")[0]
    exact = exact_posterior(name, X, y)
    post, conj_post = est.idata_.posterior, conj.idata_.posterior
    for var, (mean, sd) in exact.items():
        draws = post[var]
        active = sd > 0  # CategoricalNB's padding is exactly 0 in both
        assert np.all(draws.values[..., ~active] == 0)
        mcse_mean = az.mcse(post[[var]], method="mean")[var].values[active]
        got_mean = draws.mean(("chain", "draw")).values[active]
        got_sd = draws.std(("chain", "draw")).values[active]
        np.testing.assert_array_less(np.abs(got_mean - mean[active]), 4.5 * mcse_mean)
        # Monte Carlo error of an sd: about sd / sqrt(2 ESS) (ESS of the squared deviations)
        ess_sd = az.ess(post[[var]], method="sd")[var].values[active]
        np.testing.assert_array_less(
            np.abs(got_sd - sd[active]), 4.5 * sd[active] / np.sqrt(2 * ess_sd)
        )
        # and the conjugate fit's own draws, within both Monte Carlo errors
        conj_mean = conj_post[var].mean(("chain", "draw")).values[active]
        conj_mcse = sd[active] / np.sqrt(CHAINS * DRAWS)
        np.testing.assert_array_less(
            np.abs(got_mean - conj_mean), 4.5 * np.sqrt(mcse_mean**2 + conj_mcse**2)
        )


@pytest.mark.parametrize("name", NAMES)
def test_mcmc_predict_proba_matches_conjugate(fits, name):
    est, X, _, _ = fits(name, "mcmc")
    conj = fits(name, "conjugate")[0]
    log_joint = exact_predictive_log_joint(conj, X)
    exact = np.exp(log_joint - np.logaddexp.reduce(log_joint, axis=1, keepdims=True))
    np.testing.assert_allclose(est.predict_proba(X), exact, atol=0.03)
    np.testing.assert_allclose(est.predict_proba(X), conj.predict_proba(X), atol=0.03)


# ------------------------------------------------------- 5. idata layout
@pytest.mark.parametrize("name", NAMES)
def test_mcmc_idata_has_the_conjugate_layout(fits, name):
    est, X, _, _ = fits(name, "mcmc")
    conj = fits(name, "conjugate")[0]
    post, conj_post = est.idata_.posterior, conj.idata_.posterior
    assert set(post.data_vars) == set(conj_post.data_vars) == {"pi", PARAM[name]}
    for var in post.data_vars:
        assert post[var].dims == conj_post[var].dims
        assert post[var].shape == conj_post[var].shape
        for dim in post[var].dims:
            np.testing.assert_array_equal(post[dim].values, conj_post[dim].values)
    assert set(conj.idata_.groups()) <= set(est.idata_.groups())
    assert "diverging" in est.idata_.sample_stats
    assert est.idata_.sample_stats["diverging"].shape == (CHAINS, DRAWS)
    loo = az.loo(est.idata_)
    assert np.isfinite(loo.elpd_loo)
    conj_loo = az.loo(conj.idata_)
    assert loo.elpd_loo == pytest.approx(conj_loo.elpd_loo, abs=1.0)  # Monte Carlo error only
    rep = est.sample_posterior_predictive(random_state=0).posterior_predictive
    assert rep["x"].shape == (CHAINS, DRAWS, *X.shape)


# ------------------------------------------------------- hooks and errors
@pytest.mark.parametrize("name", NAMES)
def test_hooks_honour_prefix_and_dims(fits, name):
    est, X, y, _ = fits(name, "map")
    family = est._family
    pre = f"{name}1_"
    dims = {k: tuple(d if d == "class" else pre + d for d in v)
            for k, v in family.param_dims.items()}
    coords = {"class": list(range(K)), f"{pre}feature": list(range(X.shape[1])),
              "obs": list(range(X.shape[0]))}
    with pm.Model(coords=coords) as model:
        params = family.pymc_params(est._prior, prefix=pre, dims=dims)
        family.pymc_observed(params, X, pt.as_tensor(y), prefix=pre, dims=dims)
        pm.Potential("stats", family.pymc_stats_loglik(params, est._stats))
    param = PARAM[name]
    assert set(params) == {param}
    assert model.named_vars_to_dims[pre + param] == dims[param]
    assert model.named_vars_to_dims[pre + "x"] == ("obs", f"{pre}feature")
    unprefixed = [v for v in model.named_vars if v != "stats" and not v.startswith(pre)]
    assert unprefixed == []
    if name == "categorical":  # category coordinates are added when the caller lacks them
        assert len(model.coords[f"{pre}category"]) == max(N_CATEGORIES)
        assert family.coords(dims)[f"{pre}category_c5"] == list(range(5))
        assert model.named_vars_to_dims[f"{pre}theta_c3"] == (
            "class", f"{pre}feature_c3", f"{pre}category_c3"
        )
    assert np.isfinite(model.compile_logp()(model.initial_point()))


def test_poisson_alpha_one_has_no_pymc_model():
    X, y = make_data("poisson", n_per_class=10)
    est = bg.PoissonNB(alpha=1.0).fit(X, y)
    with pytest.raises(ValueError, match=r"improper.*alpha > 1"):
        est.build_model(X, y)
    with pytest.raises(ValueError, match=r"improper.*alpha > 1"):
        bg.PoissonNB(alpha=1.0, method="mcmc", progressbar=False).fit(X, y)


@pytest.mark.parametrize("cls", [bg.MultinomialNB, bg.PoissonNB])
def test_model_needs_whole_number_counts(cls):
    X, y = make_data("poisson", n_per_class=10)
    est = cls(method="map").fit(X * 0.37, y)  # term weights: fine for point methods
    with pytest.raises(ValueError, match="whole-number counts"):
        est.build_model(X * 0.37, y)
