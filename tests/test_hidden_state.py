"""No hidden state: a fit holds its parameters and statistics (not X), predictions follow
the fitted ``method_`` (not the constructor's), and MCMC leaves JAX as it found it."""

from __future__ import annotations

import ast
import json
import os
import pickle
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

import bayesgen as bg
from bayesgen.inference import loglik
from bayesgen.inference.rows import kept as kept_rows
from tests.conftest import CLASSIFIERS, make_data

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ data
def _large(kind: str, n: int = 100_000, d: int = 20, seed: int = 0):
    """n x d rows of a family's support, two classes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    if kind == "real":
        X = rng.normal(size=(n, d)) + y[:, None]
    elif kind == "binary":
        X = (rng.uniform(size=(n, d)) < np.where(y[:, None] == 1, 0.6, 0.3)).astype(float)
    elif kind == "positive":
        X = rng.exponential(np.where(y[:, None] == 1, 2.0, 1.0), size=(n, d))
    elif kind == "count":
        X = rng.poisson(np.where(y[:, None] == 1, 3.0, 1.5), size=(n, d)).astype(float)
    elif kind == "categorical":
        X = rng.integers(0, 4, size=(n, d)).astype(float) + (y[:, None] * (rng.uniform(
            size=(n, d)) < 0.3))
    elif kind == "mixed":  # as MIXED_FAMILIES: gaussian, bernoulli, poisson column pairs
        X = np.column_stack([
            rng.normal(size=(n, 2)) + y[:, None],
            (rng.uniform(size=(n, 2)) < 0.4).astype(float),
            rng.poisson(2.0, size=(n, 2)).astype(float),
        ])
    else:
        raise ValueError(f"no test data for support {kind!r}")
    return X, y


POINT_NAMES = [name for name in CLASSIFIERS if name != "KernelNB"]  # its points are its fit


@pytest.mark.parametrize("name", POINT_NAMES)
def test_map_fit_pickles_and_saves_small(name, tmp_path):
    factory, kind = CLASSIFIERS[name]
    X, y = _large(kind)
    est = factory(method="map").fit(X, y)
    size = len(pickle.dumps(est))
    assert size < 100_000, f"{name}: the MAP fit pickles to {size} bytes"
    path = est.save(tmp_path / "model.nc")
    assert path.stat().st_size < 200_000, f"{name}: save() wrote {path.stat().st_size} bytes"
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict_proba(X[:50]), est.predict_proba(X[:50]))
    np.testing.assert_array_equal(bg.load(path).predict_proba(X[:50]),
                                  est.predict_proba(X[:50]))


@pytest.mark.parametrize(("name", "method"), [
    (name, method) for name in CLASSIFIERS for method in ("mle", "map", "conjugate")
    if not (name == "KernelNB" and method == "conjugate")])
def test_no_attribute_holds_the_rows(name, method):
    """No fitted attribute has the training rows' length, except KernelNB's kernel
    centres (its statistics) and a posterior fit's idata_ (observed_data)."""
    factory, kind = CLASSIFIERS[name]
    X, y = make_data(kind, n_per_class=37)
    est = factory(method=method, draws=20, chains=2, random_state=0).fit(X, y)
    allowed = {"idata_", "_stats", "_family", "_params", "_posterior"} if name == "KernelNB" \
        else {"idata_"}
    for key, value in vars(est).items():
        if key in allowed:
            continue
        assert not (isinstance(value, np.ndarray | sparse.spmatrix | sparse.sparray)
                    and value.shape[:1] == (y.size,)), f"{name}.{key} holds the rows"
    assert "_train" not in vars(est) and "_train_weights" not in vars(est)


# ------------------------------------------------------------ method_
METHOD_PAIRS = [(a, b) for a in ("mle", "map", "conjugate") for b in ("mle", "map", "conjugate")
                if a != b]


def _predictions(est, X):
    return est.predict_proba(X), est.predict(X), est.score_samples(X)


@pytest.mark.parametrize("name", ["GaussianNB", "QDA", "MultinomialNB", "MixedNB"])
@pytest.mark.parametrize(("fitted", "other"), METHOD_PAIRS)
def test_set_params_method_changes_the_next_fit_only(name, fitted, other):
    factory, kind = CLASSIFIERS[name]
    X, y = make_data(kind)
    est = factory(method=fitted, draws=30, chains=2, random_state=0).fit(X, y)
    before = _predictions(est, X)
    est.set_params(method=other)
    assert est.method_ == fitted and est.method == other
    for a, b in zip(before, _predictions(est, X), strict=True):
        np.testing.assert_array_equal(a, b)
    if fitted == "conjugate":  # posterior-only paths follow method_ too
        assert est.predict_proba_draws(X[:3]).shape == (2, 30, 3, 3)
        est.set_params(draws=7)  # nor does the posterior's size change
        assert est.predict_proba_draws(X[:3]).shape == (2, 30, 3, 3)
    else:
        with pytest.raises(ValueError, match=f"method={fitted!r}"):
            est.predict_proba_draws(X[:3])
    est.fit(X, y)
    assert est.method_ == other


@pytest.mark.slow
def test_set_params_after_mcmc_fit():
    X, y = make_data("real")
    est = bg.GaussianNB(method="mcmc", draws=20, tune=20, chains=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        est.fit(X, y)
    before = _predictions(est, X)
    est.set_params(method="map")
    assert est.method_ == "mcmc"
    for a, b in zip(before, _predictions(est, X), strict=True):
        np.testing.assert_array_equal(a, b)
    point = bg.GaussianNB(method="map").fit(X, y)
    expected = _predictions(point, X)
    point.set_params(method="mcmc")
    for a, b in zip(expected, _predictions(point, X), strict=True):
        np.testing.assert_array_equal(a, b)


def test_method_round_trips_through_save(tmp_path):
    X, y = make_data("real")
    est = bg.QDA(method="map").fit(X, y)
    est.set_params(method="conjugate")
    loaded = bg.load(est.save(tmp_path / "m.nc"))
    assert loaded.method_ == "map" and loaded.method == "conjugate"
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    est.set_params(method="map")
    del est.__dict__["method_"], est.__dict__["chain_method"]  # a file of an earlier version
    old = bg.load(est.save(tmp_path / "old.nc"))
    assert old.method_ == "map" and old.get_params()["chain_method"] == "sequential"


def test_every_fit_sets_method(tmp_path):
    X, y = make_data("count")
    classes = np.unique(y)
    stream = bg.MultinomialNB(method="conjugate", draws=10, chains=2, random_state=0)
    stream.partial_fit(X[:60], y[:60], classes=classes)
    assert stream.method_ == "conjugate"
    other = bg.MultinomialNB(method="conjugate", draws=10, chains=2, random_state=0)
    other.fit(X[60:], y[60:])
    merged = bg.merge(stream, other)
    assert merged.method_ == "conjugate"
    expected = merged.predict_proba(X)
    merged.set_params(method="map")
    np.testing.assert_array_equal(merged.predict_proba(X), expected)
    assert bg.load(merged.save(tmp_path / "m.nc")).method_ == "conjugate"


# ----------------------------------------------------------- rows given
def _posterior(keep: bool, name: str = "GaussianNB", method: str = "conjugate", **fit_kw):
    """A posterior fit that keeps its rows (``fit``) or not (from statistics alone:
    ``partial_fit`` of the same rows in one batch)."""
    factory, kind = CLASSIFIERS[name]
    X, y = make_data(kind)
    est = factory(method=method, draws=25, chains=2, random_state=0)
    if keep:
        est.fit(X, y, **fit_kw)
    else:
        est.partial_fit(X, y, classes=np.unique(y), **fit_kw)
    return est, X, y


def test_rows_are_kept_at_every_n_and_the_log_likelihood_on_request(monkeypatch):
    """One rule at every n: a posterior fit by fit(X, y) keeps its rows; above the bound
    the log_likelihood group is left out with a warning naming add_log_likelihood(),
    which then adds it from the kept rows (the same values as at fit)."""
    small, X, y = _posterior(keep=True)
    assert {"observed_data", "log_likelihood"} <= set(small.idata_.groups())
    np.testing.assert_array_equal(kept_rows(small).X, X)
    monkeypatch.setattr(loglik, "AT_FIT_MAX_VALUES", 0)
    with pytest.warns(bg.DataWarning, match=r"add_log_likelihood\(\)"):
        large, _, _ = _posterior(keep=True)
    monkeypatch.undo()
    assert "observed_data" in large.idata_.groups()
    assert "log_likelihood" not in large.idata_.groups()
    np.testing.assert_array_equal(kept_rows(large).X, X)
    assert hasattr(large, "model_")
    large.add_log_likelihood()
    np.testing.assert_allclose(large.idata_.log_likelihood["xy"].values,
                               small.idata_.log_likelihood["xy"].values, rtol=1e-12)
    streamed, _, _ = _posterior(keep=False)  # from statistics: no rows
    assert not {"observed_data", "log_likelihood"} & set(streamed.idata_.groups())
    assert kept_rows(streamed) is None


def test_log_likelihood_from_given_rows():
    small, X, y = _posterior(keep=True)
    large, _, _ = _posterior(keep=False)
    with pytest.raises(ValueError, match=r"add_log_likelihood\(X, y\)"):
        large.add_log_likelihood()
    with pytest.raises(ValueError, match="not those the model was fitted on"):
        large.add_log_likelihood(X[:-3], y[:-3])
    large.add_log_likelihood(X, y)
    np.testing.assert_allclose(large.idata_.log_likelihood["xy"].values,
                               small.idata_.log_likelihood["xy"].values, rtol=1e-12)
    assert "observed_data" not in large.idata_.groups()  # the rows are still not kept


def test_predictive_and_model_from_given_rows():
    small, X, y = _posterior(keep=True)
    large, _, _ = _posterior(keep=False)
    with pytest.raises(ValueError, match=r"sample_posterior_predictive\(X=X, y=y\)"):
        large.sample_posterior_predictive(random_state=0)
    with pytest.raises(AttributeError, match=r"build_model\(X, y\)"):
        large.model_
    assert not hasattr(large, "model_") and getattr(large, "model_", None) is None
    a = small.sample_posterior_predictive(random_state=1).posterior_predictive
    b = large.sample_posterior_predictive(random_state=1, X=X, y=y).posterior_predictive
    np.testing.assert_array_equal(a["x"].values, b["x"].values)
    assert "observed_data" in large.idata_.groups()  # given rows kept for ArviZ's checks
    model = large.build_model(X, y)
    logp_small = small.model_.compile_logp()(small.model_.initial_point())
    logp_given = model.compile_logp()(model.initial_point())
    assert logp_given == pytest.approx(logp_small, rel=1e-12)


def test_point_fit_model_and_prior_predictive_take_rows():
    X, y = make_data("real")
    est = bg.QDA(method="map").fit(X, y)
    with pytest.raises(AttributeError, match=r"build_model\(X, y\)"):
        est.model_
    assert not hasattr(est, "model_") and getattr(est, "model_", None) is None
    with pytest.raises(ValueError, match=r"sample_prior_predictive\(X=X, y=y\)"):
        est.sample_prior_predictive(draws=5, random_state=0)
    assert est.build_model(X, y)["y"].eval().shape == (y.size,)
    idata = est.sample_prior_predictive(draws=5, random_state=0, X=X, y=y)
    assert idata.prior_predictive["x"].shape == (1, 5, *X.shape)
    assert kept_rows(est) is None  # a point fit keeps no rows for its other capabilities


def test_exact_loo_and_compare_from_given_rows():
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=120)
    small, X, y = _posterior(keep=True, sample_weight=w)
    assert "constant_data" in small.idata_.groups()  # the weights of the kept rows
    large, _, _ = _posterior(keep=False, sample_weight=w)
    other, _, _ = _posterior(keep=False, name="QDA", sample_weight=w)
    with pytest.raises(ValueError, match=r"model 'a'.*bg\.compare"):
        bg.compare({"a": large, "b": other})
    with pytest.raises(ValueError, match="not those the model was fitted on"):
        bg.compare({"a": large, "b": other}, X=X, y=y)  # weights left out
    table = bg.compare({"a": large, "b": other}, X=X, y=y, sample_weight=w)
    kept_table = bg.compare({"a": small, "b": other}, X=X, y=y, sample_weight=w)
    assert table.loc["a", "elpd_loo"] == pytest.approx(kept_table.loc["a", "elpd_loo"],
                                                      rel=1e-12)


@pytest.mark.parametrize("name", ["MultinomialNB", "PoissonNB", "MixedNB"])
def test_evidence_of_count_features_takes_rows(name):
    small, X, y = _posterior(keep=True, name=name)
    point = CLASSIFIERS[name][0](method="map").fit(X, y)
    with pytest.raises(ValueError, match=r"log_marginal_likelihood\(X, y\)"):
        point.log_marginal_likelihood()
    assert point.log_marginal_likelihood(X, y) == pytest.approx(
        small.log_marginal_likelihood(), rel=1e-12)
    gaussian = bg.GaussianNB(method="map").fit(*make_data("real"))
    assert np.isfinite(gaussian.log_marginal_likelihood())  # no rows needed


def test_streamed_fit_takes_rows():
    X, y = make_data("real")
    est = bg.GaussianNB(method="conjugate", draws=25, chains=2, random_state=0)
    est.partial_fit(X[:50], y[:50], classes=np.unique(y))
    est.partial_fit(X[50:], y[50:])
    with pytest.raises(ValueError, match="needs the training rows"):
        est.add_log_likelihood()
    assert est.add_log_likelihood(X, y).log_likelihood["xy"].shape == (2, 25, y.size)


# --------------------------------------------------------------------- JAX
_JAX_SCRIPT = textwrap.dedent("""
    import json, os, sys, warnings
    import jax, jax.numpy as jnp
    order = sys.argv[1]
    config, flags = dict(jax.config.values), os.environ.get("XLA_FLAGS")
    def user_function():
        f = jax.jit(lambda x: x * 2.0 + 1.0)
        f(jnp.ones(3))
        return f, f._cache_size()
    if order == "jax-first":  # the user's JAX runs (and starts its backend) before the fit
        f, n_before = user_function()
    import bayesgen as bg
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = bg.GaussianNB(method="mcmc", sampler="numpyro", draws=20, tune=20, chains=2,
                            random_state=0).fit(X, y)
    changed = sorted(k for k in set(config) | set(jax.config.values)
                     if config.get(k) != jax.config.values.get(k))
    if order != "jax-first":
        f, n_before = user_function()
    f(jnp.ones(3))
    out = {"changed": changed, "env": os.environ.get("XLA_FLAGS") == flags,
           "cache": [n_before, f._cache_size()], "devices": jax.local_device_count(),
           "dtype": str(f(jnp.ones(3)).dtype),
           "draws": str(est.idata_.posterior["mu"].dtype)}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bg.GaussianNB(method="mcmc", draws=5, tune=5, chains=2,
                          chain_method="parallel").fit(X, y)
    except ValueError as err:
        out["parallel"] = str(err)
    else:
        out["parallel"] = "ran"
    print(json.dumps(out))
""")


def _run(order: str, xla_flags: str | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    if xla_flags is not None:
        env["XLA_FLAGS"] = xla_flags
    done = subprocess.run([sys.executable, "-c", _JAX_SCRIPT, order], env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("order", ["jax-first", "fit-first"])
def test_mcmc_leaves_jax_as_it_found_it(order):
    out = _run(order)
    assert out["changed"] == []  # jax.config.values identical (x64, compile cache, ...)
    assert out["env"]  # XLA_FLAGS as it was (PyMC's import sets it)
    assert out["cache"][0] == out["cache"][1] == 1  # the user's compiled function kept
    assert out["dtype"] == "float32"  # the user's JAX still runs in 32 bits ...
    assert out["draws"] == "float64"  # ... while bayesgen's programs run in 64
    assert out["devices"] == 1  # JAX's devices: the user's setting, whatever the order
    assert "XLA_FLAGS=--xla_force_host_platform_device_count=2" in out["parallel"]


@pytest.mark.slow
def test_parallel_chains_with_the_users_devices():
    out = _run("jax-first", xla_flags="--xla_force_host_platform_device_count=2")
    assert out["devices"] == 2 and out["parallel"] == "ran" and out["changed"] == []


def test_chain_method_is_a_checked_parameter():
    X, y = make_data("real")
    assert bg.LDA().get_params()["chain_method"] == "sequential"
    for factory, _ in CLASSIFIERS.values():
        assert factory().chain_method == "sequential"
    with pytest.raises(ValueError, match="chain_method"):
        bg.GaussianNB(method="mcmc", chain_method="hybrid").fit(X, y)


def test_no_global_jax_configuration_in_the_package():
    """No call in the package writes JAX's configuration or clears its caches, except
    the one that puts back what an import changed (bayesgen.inference.jax_scope)."""
    calls = []
    for path in (ROOT / "bayesgen").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = ast.unparse(node.func)
                if name in ("jax.config.update", "jax.clear_caches", "enable_jax_cache",
                            "numpyro.set_host_device_count"):
                    calls.append((path.relative_to(ROOT).as_posix(), name))
    assert calls == [("bayesgen/inference/jax_scope.py", "jax.config.update")], calls
