"""``idata_`` groups that ArviZ can combine, and one rule for keeping the training rows.

- ``posterior_predictive`` (on request) and ``log_likelihood`` have the posterior's
  chains and draws, so ``az.loo_pit``, ``az.plot_loo_pit``, ``az.plot_ppc``, ``az.loo``,
  ``az.compare`` and ``az.summary`` work on every posterior method's ``idata_``;
- a posterior fit by ``fit(X, y)`` keeps its rows at every n; the ``log_likelihood``
  group is computed at fit up to ``AT_FIT_MAX_VALUES`` values and otherwise left out
  with a warning that names ``add_log_likelihood()`` (checked at n = 900 and 1,100,
  either side of the bound for 4,000 draws).
"""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import pytest

import bayesgen as bg
from bayesgen.inference import loglik
from tests.conftest import CLASSIFIERS, make_data

CONJUGATE = [name for name in CLASSIFIERS if name != "KernelNB"]  # KernelNB: NUTS only


def _same_draws(idata) -> None:
    """posterior, posterior_predictive and log_likelihood share chain and draw."""
    post = idata.posterior
    for group in ("posterior_predictive", "log_likelihood"):
        ds = getattr(idata, group)
        np.testing.assert_array_equal(ds["chain"].values, post["chain"].values)
        np.testing.assert_array_equal(ds["draw"].values, post["draw"].values)


def _arviz_functions(est) -> None:
    """Every ArviZ function of the issue on ``est.idata_`` (posterior predictive added)."""
    idata = est.sample_posterior_predictive(random_state=0)
    _same_draws(idata)
    n = idata.observed_data.sizes["obs"]
    with warnings.catch_warnings():
        # PSIS's Pareto-k notice on few draws, matplotlib's deprecation inside ArviZ
        warnings.simplefilter("ignore")
        pit = az.loo_pit(idata, y="y")
        assert pit.shape == (n,) and np.all((pit >= 0) & (pit <= 1))
        az.plot_loo_pit(idata, y="y")
        az.plot_ppc(idata, var_names=["y", "x"], num_pp_samples=20)
        loo = az.loo(idata, pointwise=True)
        assert np.isfinite(loo.elpd_loo) and loo.loo_i.size == n
        table = az.summary(idata, var_names=["pi"])
        assert list(table.index) == [f"pi[{c}]" for c in est.classes_]
    plt.close("all")


@pytest.mark.parametrize("name", CONJUGATE)
def test_arviz_functions_on_conjugate_idata(name):
    factory, kind = CLASSIFIERS[name]
    X, y = make_data(kind)
    est = factory(method="conjugate", draws=100, chains=2, random_state=0).fit(X, y)
    assert "posterior_predictive" not in est.idata_.groups()  # on request, as in PyMC
    _arviz_functions(est)


@pytest.fixture(scope="module")
def nuts_pair():
    """Two short NUTS fits of GaussianNB on one data shape (one compiled program,
    reused by the second fit and by test_compare_adds_the_missing_log_likelihood), at
    two class priors."""
    X, y = make_data("real")
    kw = {"method": "mcmc", "draws": 60, "tune": 60, "chains": 2, "random_state": 0,
          "progressbar": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)  # a short run
        return (bg.GaussianNB(**kw).fit(X, y), bg.GaussianNB(class_alpha=3.0, **kw).fit(X, y))


def test_arviz_functions_on_mcmc_idata(nuts_pair):
    flat, strong = nuts_pair
    assert "sample_stats" in flat.idata_.groups()
    _arviz_functions(flat)
    _arviz_functions(strong)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = az.compare({"flat": flat.idata_, "strong": strong.idata_})
    assert set(table.index) == {"flat", "strong"}
    assert table["weight"].sum() == pytest.approx(1.0)


def test_az_compare_on_conjugate_idata():
    X, y = make_data("real")
    kw = {"method": "conjugate", "draws": 100, "chains": 2, "random_state": 0}
    fits = {"qda": bg.QDA(**kw).fit(X, y), "gnb": bg.GaussianNB(**kw).fit(X, y)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = az.compare({k: est.idata_ for k, est in fits.items()})
        loo = {k: az.loo(est.idata_).elpd_loo for k, est in fits.items()}
    for k in fits:
        assert table.loc[k, "elpd_loo"] == pytest.approx(loo[k], rel=1e-12)


def test_sample_posterior_predictive_replaces_the_group_with_every_draw():
    X, y = make_data("real")
    est = bg.GaussianNB(method="conjugate", draws=30, chains=3, random_state=0).fit(X, y)
    first = est.sample_posterior_predictive(random_state=1).posterior_predictive["x"].values
    assert first.shape == (3, 30, *X.shape)
    again = est.sample_posterior_predictive(random_state=1).posterior_predictive["x"].values
    np.testing.assert_array_equal(first, again)
    _same_draws(est.idata_)


# ------------------------------------------------------ the row-keeping rule
def _fit_n(n: int):
    """GaussianNB with 1 chain of 4,000 draws on n rows: 4,000 n values of the pointwise
    log-likelihood, below AT_FIT_MAX_VALUES at n = 900, above at n = 1,100."""
    rng = np.random.default_rng(n)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 2)) + y[:, None]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = bg.GaussianNB(method="conjugate", draws=4000, chains=1, random_state=0).fit(X, y)
    return est, X, y, [w for w in caught if issubclass(w.category, bg.DataWarning)]


def test_rows_are_kept_the_same_way_either_side_of_the_bound():
    assert 4000 * 900 <= loglik.AT_FIT_MAX_VALUES < 4000 * 1100
    small, X_small, _, small_warnings = _fit_n(900)
    large, X_large, y_large, large_warnings = _fit_n(1100)
    for est, X in [(small, X_small), (large, X_large)]:  # the rows: kept at both n
        assert "observed_data" in est.idata_.groups()
        np.testing.assert_array_equal(est.idata_.observed_data["x"].values, X)
        assert hasattr(est, "model_")
    assert "log_likelihood" in small.idata_.groups() and not small_warnings
    assert "log_likelihood" not in large.idata_.groups()  # left out, and said so
    assert len(large_warnings) == 1
    message = str(large_warnings[0].message)
    assert "add_log_likelihood()" in message and "1 x 4000 x 1100" in message
    assert large_warnings[0].filename == __file__  # at the user's line
    large.add_log_likelihood()  # from the kept rows: no argument needed
    assert large.idata_.log_likelihood["xy"].shape == (1, 4000, 1100)
    ref = bg.GaussianNB(method="conjugate", draws=4000, chains=1, random_state=0)
    with pytest.MonkeyPatch.context() as mp:  # the same fit with the group at fit
        mp.setattr(loglik, "AT_FIT_MAX_VALUES", 10**9)
        ref.fit(X_large, y_large)
    np.testing.assert_allclose(large.idata_.log_likelihood["xy"].values,
                               ref.idata_.log_likelihood["xy"].values, rtol=1e-12)


def test_compare_adds_the_missing_log_likelihood():
    """bg.compare on NUTS fits (PSIS-LOO from the log_likelihood group) whose fit left
    the group out adds it, from the kept rows, and equals the fit that stored it."""
    X, y = make_data("real")
    kw = {"method": "mcmc", "draws": 60, "tune": 60, "chains": 2, "random_state": 0,
          "progressbar": False}
    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as mp:
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        with_group = bg.GaussianNB(**kw).fit(X, y)
        mp.setattr(loglik, "AT_FIT_MAX_VALUES", 0)
        with pytest.warns(bg.DataWarning, match=r"add_log_likelihood\(\)"):
            without = bg.GaussianNB(**kw).fit(X, y)
    assert "log_likelihood" not in without.idata_.groups()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = bg.compare({"without": without, "with": with_group})
    assert "log_likelihood" in without.idata_.groups()
    assert table.loc["without", "elpd_loo"] == pytest.approx(
        table.loc["with", "elpd_loo"], rel=1e-9)


# --- idata_ built as ArviZ's from_dict builds it ----------------------------------------
def _from_dict(*, log_pi, params, param_dims, chains, draws, coords, log_lik, X, y,
               sample_stats=None, attrs=None):
    """The reference: the same groups through ``az.from_dict`` (one DataArray per
    variable, merged), which ``posterior.build_idata`` builds as one Dataset per group."""
    from bayesgen.data.sparse import observed_x
    from bayesgen.inference import class_layout
    from bayesgen.inference.posterior import LOG_LIK_VAR, reshape_draws

    post = {"pi": reshape_draws(np.exp(log_pi), chains, draws)}
    dims = {"pi": ["class"]}
    for name, var_dims in param_dims.items():
        post[name] = reshape_draws(params[name], chains, draws)
        dims[name] = list(var_dims)
    coords = {k: np.asarray(v) for k, v in coords.items()}
    observed, x_dims = None, {}
    if X is not None:
        coords["obs"] = np.arange(X.shape[0])
        x_vars, x_dims = observed_x(X)
        per_class, class_dims, class_coords = class_layout.observed(X, y, coords["class"])
        observed = {"y": y.astype(np.int64), **x_vars, **per_class}
        dims = {**dims, "y": ["obs"], LOG_LIK_VAR: ["obs"], **class_dims}
        coords.update(class_coords)
    return az.from_dict(
        posterior=post, observed_data=observed, sample_stats=sample_stats, coords=coords,
        log_likelihood=(None if log_lik is None
                        else {LOG_LIK_VAR: reshape_draws(log_lik, chains, draws)}),
        dims={**dims, **x_dims}, attrs=dict(attrs or {}))


def _identical(new, old) -> None:
    import xarray as xr

    assert new.groups() == old.groups()
    assert new.attrs == old.attrs
    for group in old.groups():
        a, b = new[group], old[group]
        assert a.attrs.keys() == b.attrs.keys()
        a, b = a.assign_attrs(created_at=""), b.assign_attrs(created_at="")
        xr.testing.assert_identical(a, b)
        assert (list(a.coords), list(a.data_vars), list(a.dims)) == (
            list(b.coords), list(b.data_vars), list(b.dims))
        for name in a.variables:
            assert (a[name].dtype, a[name].dims) == (b[name].dtype, b[name].dims)
            assert type(a.indexes.get(name)) is type(b.indexes.get(name))
        assert repr(a) == repr(b)


@pytest.mark.parametrize("case", ["conjugate", "labels", "frame", "sparse", "stats_only",
                                  "more_chains", "sample_stats"])
def test_idata_groups_are_those_of_arviz_from_dict(case, monkeypatch):
    """``build_idata`` assembles each group as one xarray Dataset (several times faster
    than ArviZ's DataArray per variable, merged); every group, its coordinates, dims,
    dtypes, indexes, attributes (but the time stamp ``created_at``), its printout and
    ArviZ's warnings are those of ``az.from_dict`` on the same inputs."""
    import pandas as pd
    import scipy.sparse as sp

    from bayesgen.inference import posterior

    X, y = make_data("real")
    est = bg.QDA(method="conjugate", draws=6, chains=2)
    if case == "labels":
        y = np.array(["a", "b", "c"], dtype=object)[y]
    elif case == "frame":
        X = pd.DataFrame(X, columns=["w", "x", "y", "z"])
        est = bg.GaussianNB(method="conjugate", draws=5)
    elif case == "sparse":
        X, y = make_data("count")
        X = sp.csr_matrix(X)
        est = bg.MultinomialNB(method="conjugate", draws=5)
    elif case == "more_chains":  # ArviZ warns of more chains than draws
        est = bg.LDA(method="conjugate", draws=3, chains=4)
    calls = []
    original = posterior.build_idata

    def spy(**kw):
        calls.append(kw)
        return original(**kw)

    monkeypatch.setattr(posterior, "build_idata", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    (kw,) = calls
    if case == "stats_only":  # a fit from statistics alone: no rows, no log_likelihood
        kw = dict(kw, X=None, y=None, log_lik=None)
    elif case == "sample_stats":
        kw = dict(kw, sample_stats={"lp": np.zeros((2, 6)), "diverging": np.zeros((2, 6), bool)},
                  attrs={"sampler": "test"})
    with warnings.catch_warnings(record=True) as seen_new:
        warnings.simplefilter("always")
        new = original(**kw)
    with warnings.catch_warnings(record=True) as seen_old:
        warnings.simplefilter("always")
        old = _from_dict(**kw)
    _identical(new, old)
    assert [str(w.message) for w in seen_new] == [str(w.message) for w in seen_old]
    assert (len(seen_new) > 0) == (case == "more_chains")
