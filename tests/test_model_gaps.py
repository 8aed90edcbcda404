"""``model_`` of naive Bayes fits with missing entries (NaN) in the training X (issue 14).

The model observes the entries that are observed and integrates the missing ones out
(:mod:`bayesgen.families.pymc_gaps`): its log-density at a point equals the scipy.stats
log-densities of the priors, of y and of the OBSERVED entries only; summing the
complete-data model over the values of the missing entries gives the same number.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import stats
from scipy.special import logsumexp

import bayesgen as bg
from bayesgen.inference import scoring
from bayesgen.inference.model import build_model, build_stats_model

N, D, K = 40, 3, 2


def _gappy(X: np.ndarray, rng: np.random.Generator, rate: float = 0.25) -> np.ndarray:
    X = X.astype(np.float64)
    X[rng.random(X.shape) < rate] = np.nan
    return X


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    y = rng.integers(0, K, N)
    return {
        "y": y,
        "bernoulli": _gappy(rng.integers(0, 2, (N, D)), rng),
        "poisson": _gappy(rng.poisson(2.0 + 2.0 * y[:, None], (N, D)), rng),
        "gaussian": _gappy(rng.normal(y[:, None], 1.0, (N, D)), rng),
        # feature 0 has 2 categories, 1 and 2 have 3 (padded theta)
        "codes": _gappy(np.column_stack([rng.integers(0, 2, N), rng.integers(0, 3, (N, 2))]), rng),
        "exponential": _gappy(rng.exponential(1.0 + 2.0 * y[:, None], (N, D)), rng),
    }


def _values(codes: np.ndarray) -> np.ndarray:
    """Category values that are not codes: {2, 5, 8}."""
    return codes * 3.0 + 2.0


ESTIMATORS = {
    "bernoulli": lambda: bg.BernoulliNB(alpha=1.5, class_alpha=2.0),
    "poisson": lambda: bg.PoissonNB(class_alpha=2.0),
    "gaussian": lambda: bg.GaussianNB(class_alpha=2.0),
    "codes": lambda: bg.CategoricalNB(alpha=1.5, class_alpha=2.0),
    "values": lambda: bg.CategoricalNB(alpha=1.5, class_alpha=2.0),
    "exponential": lambda: bg.ExponentialNB(class_alpha=2.0),
}


def _X(data, kind):
    return _values(data["codes"]) if kind == "values" else data[kind]


def _fit(data, kind, **kw):
    est = ESTIMATORS[kind]().set_params(**kw).fit(_X(data, kind), data["y"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no cast of NaN, no ImputationWarning
        model = est.build_model(_X(data, kind), data["y"])
    return est, model


def _value_point(model, natural: dict) -> dict:
    """The model's value-space point of natural-space values of its free variables."""
    point = {}
    for rv in model.free_RVs:
        value = np.asarray(natural[rv.name], dtype=np.float64)
        transform = model.rvs_to_transforms[rv]
        if transform is not None:
            value = transform.forward(value, *rv.owner.inputs).eval()
        point[model.rvs_to_values[rv].name] = value
    return point


def _random_natural(est, model, rng) -> dict:
    """Random values of pi and the family's prior variables (natural space)."""
    out = {"pi": rng.dirichlet(np.ones(K))}
    for rv in model.free_RVs:
        if rv.name == "pi":
            continue
        shape = tuple(rv.shape.eval())
        if rv.name.startswith("theta_c"):
            out[rv.name] = rng.dirichlet(np.ones(shape[-1]), size=shape[:-1])
        elif rv.name == "theta":
            out[rv.name] = rng.uniform(0.1, 0.9, shape)
        elif rv.name in ("rate", "var"):
            out[rv.name] = rng.uniform(0.5, 4.0, shape)
        else:
            out[rv.name] = rng.normal(0.0, 1.0, shape)
    return out


def _theta_padded(est, natural: dict) -> np.ndarray:
    theta = np.zeros((K, D, int(est.n_categories_.max())))
    for c in np.unique(est.n_categories_):
        for i, j in enumerate(np.flatnonzero(est.n_categories_ == c)):
            theta[:, j, :c] = natural[f"theta_c{c}"][:, i]
    return theta


def _reference(est, kind: str, X: np.ndarray, y: np.ndarray, natural: dict) -> float:
    """scipy.stats: priors + log pi[y] + sum over the OBSERVED entries of log p(x | y)."""
    prior = scoring.user_prior(est)
    pi = natural["pi"]
    total = stats.dirichlet.logpdf(pi, [2.0] * K) + np.sum(np.log(pi[y]))
    obs = ~np.isnan(X)
    rows, cols = np.nonzero(obs)
    x = X[obs]
    if kind == "bernoulli":
        theta = natural["theta"]
        total += np.sum(stats.beta.logpdf(theta, prior["alpha"], prior["alpha"]))
        return total + np.sum(stats.bernoulli.logpmf(x, theta[y[rows], cols]))
    if kind == "poisson":
        rate = natural["rate"]
        total += np.sum(stats.gamma.logpdf(rate, prior["alpha"], scale=1.0 / prior["beta"]))
        return total + np.sum(stats.poisson.logpmf(x, rate[y[rows], cols]))
    if kind == "exponential":
        rate = natural["rate"]
        total += np.sum(stats.gamma.logpdf(rate, prior["alpha"], scale=1.0 / prior["beta"]))
        return total + np.sum(stats.expon.logpdf(x, scale=1.0 / rate[y[rows], cols]))
    if kind == "gaussian":
        mu, var = natural["mu"], natural["var"]
        total += np.sum(stats.invgamma.logpdf(var, prior["a0"], scale=prior["b0"]))
        total += np.sum(stats.norm.logpdf(mu, prior["m0"], np.sqrt(var / prior["kappa0"])))
        return total + np.sum(stats.norm.logpdf(x, mu[y[rows], cols],
                                                np.sqrt(var[y[rows], cols])))
    theta = _theta_padded(est, natural)
    for c in np.unique(est.n_categories_):
        block = natural[f"theta_c{c}"]
        total += sum(stats.dirichlet.logpdf(block[k, i], [1.5] * c)
                     for k in range(K) for i in range(block.shape[1]))
    codes = np.array([np.searchsorted(est.categories_[j], v) for j, v in zip(cols, x, strict=True)])
    return total + np.sum(np.log(theta[y[rows], cols, codes]))


@pytest.mark.parametrize("kind", list(ESTIMATORS))
def test_logp_is_scipy_over_observed_entries(data, kind):
    """model_'s log-density (no Jacobian) at random points equals the scipy.stats
    reference with the missing entries dropped, and differs from the statistics
    model's (what NUTS samples) by a constant; its gradient is finite."""
    est, model = _fit(data, kind)
    X = _X(data, kind)
    assert np.isnan(X).any()
    rng = np.random.default_rng(11)
    logp = model.compile_logp(jacobian=False)
    stats_logp = build_stats_model(est).compile_logp(jacobian=False)
    dlogp = model.compile_dlogp()
    diffs = []
    for _ in range(3):
        natural = _random_natural(est, model, rng)
        point = _value_point(model, natural)
        expected = _reference(est, kind, X, data["y"], natural)
        assert logp(point) == pytest.approx(expected, rel=1e-10)
        diffs.append(logp(point) - stats_logp(point))
        assert np.all(np.isfinite(dlogp(point)))
    np.testing.assert_allclose(diffs, diffs[0], rtol=1e-9, atol=1e-8)


def _tiny(kind: str):
    """4 rows, 2 features, 2 missing entries (one for Poisson)."""
    y = np.array([0, 1, 0, 1])
    if kind == "bernoulli":
        X = np.array([[1, np.nan], [0, 1], [np.nan, 0], [1, 1]])
    elif kind == "codes":
        X = np.array([[2, np.nan], [0, 1], [np.nan, 0], [1, 2]])
    else:
        X = np.array([[3, np.nan], [0, 1], [2, 0], [1, 4]])
    return X, y


@pytest.mark.parametrize("kind", ["bernoulli", "codes", "poisson"])
def test_logp_is_the_sum_over_the_missing_values(kind):
    """Brute force: log sum over every completion of the missing entries of the
    complete-data model_ (PyMC's own Bernoulli/Poisson, or the codes path) equals the
    gappy model_'s log-density. Poisson: one missing entry, summed over 0..80."""
    X, y = _tiny(kind)
    est = ESTIMATORS[kind]().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = est.build_model(X, y)
    rng = np.random.default_rng(5)
    natural = _random_natural(est, model, rng)
    gappy = model.compile_logp(jacobian=False)(_value_point(model, natural))
    support = {"bernoulli": range(2), "codes": range(3), "poisson": range(81)}[kind]
    holes = list(zip(*np.nonzero(np.isnan(X)), strict=True))
    complete = np.nan_to_num(X, nan=0.0)
    full = build_model(est, complete, y)  # the complete-data path
    assert full["x"].dtype == "int64"
    x_in = pt.lmatrix("x_in")  # the complete-data logp, compiled once, as a function of x
    const = full.rvs_to_values[full["x"]]
    graph = pytensor.clone_replace(full.logp(jacobian=False), {const: x_in})
    fn = pytensor.function([*full.value_vars, x_in], graph)
    point = _value_point(full, natural)
    args = [point[v.name] for v in full.value_vars]
    terms = []
    for fill in itertools.product(support, repeat=len(holes)):
        for (i, j), v in zip(holes, fill, strict=True):
            complete[i, j] = v
        terms.append(fn(*args, complete.astype(np.int64)))
    assert logsumexp(terms) == pytest.approx(gappy, rel=1e-10)


@pytest.mark.parametrize("kind", list(ESTIMATORS))
def test_observed_data_keep_gaps_and_draws_are_complete(data, kind):
    """The observed x is X with its NaN (no imputation variables); pm.draw and the prior
    predictive give complete rows in the support, shaped like X."""
    est, model = _fit(data, kind)
    X = _X(data, kind)
    assert [rv.name for rv in model.observed_RVs] == ["y", "x"]
    assert not any("unobserved" in v.name for v in model.free_RVs)
    np.testing.assert_array_equal(model.rvs_to_values[model["x"]].eval(), X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        draw = pm.draw(model["x"], random_seed=1)
        idata = est.sample_prior_predictive(draws=25, random_state=0, X=X, y=data["y"])
    x_rep = idata.prior_predictive["x"].values
    assert draw.shape == X.shape and x_rep.shape == (1, 25, *X.shape)
    assert not np.isnan(draw).any() and not np.isnan(x_rep).any()
    if kind == "bernoulli":
        assert set(np.unique(x_rep)) <= {0.0, 1.0}
    elif kind == "poisson":
        assert np.all(x_rep >= 0) and np.array_equal(x_rep, np.floor(x_rep))
    elif kind == "exponential":
        assert np.all(x_rep >= 0)
    elif kind in ("codes", "values"):
        for j, cats in enumerate(est.categories_):
            assert set(np.unique(x_rep[..., j])) == set(cats)  # 25 x 40 draws hit all


def test_complete_data_model_is_unchanged(data):
    """Without gaps the discrete x stays int64 (pm.Bernoulli / the codes path)."""
    X = np.nan_to_num(data["bernoulli"], nan=1.0)
    model = bg.BernoulliNB().fit(X, data["y"]).build_model(X, data["y"])
    assert model["x"].dtype == "int64"
    assert model["x"].owner.op.__class__.__name__ == "BernoulliRV"


def test_poisson_non_integer_with_gaps_names_the_values(data):
    X = data["poisson"].copy()
    X[np.flatnonzero(~np.isnan(X[:, 0]))[0], 0] = 1.5
    est = bg.PoissonNB().fit(X, data["y"])
    with pytest.raises(ValueError, match="non-integer values"):
        est.build_model(X, data["y"])


@pytest.mark.parametrize("kind", ["bernoulli", "poisson", "values", "exponential"])
def test_predictive_checks_run_on_gappy_fits(data, kind):
    """ppc_pvalues and plot_ppc on a conjugate fit with gaps, after the prior predictive."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    est = ESTIMATORS[kind]().set_params(method="conjugate", draws=100, chains=2,
                                        random_state=0).fit(_X(data, kind), data["y"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est.sample_prior_predictive(draws=20, random_state=0)
        table = bg.ppc_pvalues(est, random_state=0)
        bg.plot_ppc(est)
    plt.close("all")
    assert np.all(np.isfinite(table["p_value"]))


def test_mixed_parts_with_gaps(data):
    """MixedNB: each part observes its columns' observed entries; the log-density
    differs from the statistics model's by a constant, and the prior predictive runs."""
    X = np.column_stack([data["gaussian"][:, 0], data["bernoulli"][:, 0],
                         _values(data["codes"])[:, 1], data["poisson"][:, 0]])
    est = bg.MixedNB(families=[("gaussian", [0]), ("bernoulli", [1]),
                               ("categorical", [2]), ("poisson", [3])]).fit(X, data["y"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = est.build_model(X, data["y"])
    assert not any("unobserved" in v.name for v in model.free_RVs)
    logp = model.compile_logp(jacobian=False)
    stats_logp = build_stats_model(est).compile_logp(jacobian=False)
    rng = np.random.default_rng(2)
    start = model.initial_point()
    diffs = []
    for _ in range(3):
        point = {k: v + rng.normal(0, 0.3, np.shape(v)) for k, v in start.items()}
        diffs.append(logp(point) - stats_logp(point))
    np.testing.assert_allclose(diffs, diffs[0], rtol=1e-9, atol=1e-8)
    x_rep = est.sample_prior_predictive(draws=10, random_state=0, X=X,
                                        y=data["y"]).prior_predictive["x"]
    assert x_rep.shape == (1, 10, *X.shape) and not np.isnan(x_rep.values).any()
