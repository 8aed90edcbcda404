"""How ``idata_`` and ``model_`` read to a PyMC/ArviZ user.

- ``idata_``: the per-class layout (``x_class_<label>``, dims ``obs_class_<label>,
  feature``) in ``observed_data`` and the predictive groups, the posterior predictive
  (on request, every posterior draw), so ``az.plot_ppc(idata_)`` works per class and
  feature with plain ArviZ arguments (:mod:`bayesgen.inference.class_layout`).
- ``model_``: every dim named and no ``CustomDist_*`` in the graph, for all ten
  estimators.
"""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import pytest
from scipy import sparse

import bayesgen as bg
from bayesgen.inference import class_layout

FAST = dict(method="conjugate", chains=2, draws=300, random_state=0)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def iris_like(seed: int = 0, n: int = 40):
    """Three well separated Gaussian classes with string labels (one with a slash)."""
    rng = np.random.default_rng(seed)
    labels = np.array(["setosa", "versi color", "a/b"])
    y = labels[np.repeat([0, 1, 2], n)]
    centres = np.array([[0.0, 0.0, 0.0], [5.0, 1.0, -2.0], [-4.0, 6.0, 3.0]])
    X = centres[np.repeat([0, 1, 2], n)] + rng.normal(size=(3 * n, 3))
    return X, y


def _plot(idata, group: str = "posterior", **kwargs):
    """``az.plot_ppc`` of at most 100 replicates (one density each)."""
    sizes = idata[f"{group}_predictive"].sizes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # matplotlib's slow-legend notice
        return az.plot_ppc(idata, group=group, **kwargs,
                           num_pp_samples=min(100, sizes["chain"] * sizes["draw"]))


def _with_replicates(clf, X, y):
    """``clf`` fitted, with its posterior predictive (every draw; on request)."""
    clf.fit(X, y)
    assert "posterior_predictive" not in clf.idata_.groups()
    clf.sample_posterior_predictive(random_state=0)
    return clf


# ------------------------------------------------------------------ names
def test_safe_labels_are_valid_and_unique():
    assert class_layout.safe_labels(["setosa", "a/b", "a b", 3, -1.5]) == [
        "setosa", "a_b_1", "a_b_2", "3", "_1_5"]
    names = class_layout.names(["x", "~y"])
    assert names == [("x_class_x", "obs_class_x"), ("x_class__y", "obs_class__y")]


# ------------------------------------------------------------------ observed layout
def test_observed_per_class_rows_match_the_training_rows():
    X, y = iris_like()
    clf = bg.QDA(**FAST).fit(X, y)
    obs = clf.idata_.observed_data
    assert {"x", "y"} <= set(obs.data_vars)  # the contract's variables stay
    for k, label in enumerate(clf.classes_):
        var, dim = class_layout.names(clf.classes_)[k]
        rows = np.flatnonzero(y == label)
        assert obs[var].dims == (dim, "feature")
        np.testing.assert_array_equal(obs[var].values, X[rows])
        np.testing.assert_array_equal(obs[dim].values, rows)  # positions in obs
    assert "x_class_a_b" in obs and "x_class_versi_color" in obs


def test_posterior_predictive_has_every_draw_and_is_conditional_on_the_class():
    X, y = iris_like(n=60)
    clf = _with_replicates(bg.QDA(**FAST), X, y)
    pp = clf.idata_.posterior_predictive
    assert pp.sizes["chain"] == 2 and pp.sizes["draw"] == 300  # the posterior's draws
    np.testing.assert_array_equal(pp["draw"].values, clf.idata_.posterior["draw"].values)
    assert pp["y"].dtype == np.int64 and clf.idata_.observed_data["y"].dtype == np.int64
    for k, (var, dim) in enumerate(class_layout.names(clf.classes_)):
        rep = pp[var]
        assert rep.dims == ("chain", "draw", dim, "feature")
        assert rep.sizes[dim] == np.sum(y == clf.classes_[k])
        # x ~ p(x | y = k, theta_s): the replicates' mean is the class mean
        np.testing.assert_allclose(rep.mean(("chain", "draw", dim)).values,
                                   clf.means_[k], atol=0.15)


def test_replicates_are_reproducible():
    X, y = iris_like()
    a = _with_replicates(bg.QDA(**FAST), X, y)
    b = _with_replicates(bg.QDA(**FAST), X, y)
    np.testing.assert_array_equal(a.idata_.posterior_predictive["x_class_setosa"].values,
                                  b.idata_.posterior_predictive["x_class_setosa"].values)


# ------------------------------------------------------------------ ArviZ's plot
def test_plot_ppc_without_arguments_and_per_class_conjugate():
    X, y = iris_like()
    clf = _with_replicates(bg.QDA(**FAST), X, y)
    axes = _plot(clf.idata_)
    assert axes.size >= 5  # y, x and one per class
    axes = _plot(clf.idata_, var_names=["x_class_setosa"], flatten=["obs_class_setosa"])
    assert axes.size == 3  # one panel per feature of the class
    names = class_layout.names(clf.classes_)
    axes = _plot(clf.idata_, var_names=[v for v, _ in names], flatten=[d for _, d in names])
    assert axes.size == 9


def test_plot_ppc_mcmc():
    X, y = iris_like(n=25)
    clf = bg.GaussianNB(method="mcmc", chains=1, draws=60, tune=100, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        _with_replicates(clf, X, y)
    assert clf.idata_.posterior_predictive.sizes["draw"] == 60
    axes = _plot(clf.idata_, var_names=["x_class_setosa"], flatten=["obs_class_setosa"])
    assert axes.size == 3


def test_counts_are_integers_so_arviz_draws_histograms():
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 30)
    X = rng.poisson(np.where(y[:, None] == 0, 2.0, 6.0), size=(60, 2)).astype(float)
    clf = _with_replicates(bg.PoissonNB(**FAST), X, y)
    pp, obs = clf.idata_.posterior_predictive, clf.idata_.observed_data
    assert pp["x_class_1"].dtype == np.int64 and obs["x_class_1"].dtype == np.int64
    np.testing.assert_allclose(pp["x_class_1"].mean(("chain", "draw", "obs_class_1")),
                               X[y == 1].mean(0), rtol=0.15)
    _plot(clf.idata_, var_names=["x_class_0"], flatten=["obs_class_0"])


def test_prior_predictive_has_the_layout_for_a_point_fit():
    X, y = iris_like()
    clf = bg.GaussianNB().fit(X, y)
    idata = clf.sample_prior_predictive(draws=30, X=X, y=y, random_state=0)
    assert idata.prior_predictive["x_class_setosa"].sizes["draw"] == 30
    _plot(idata, group="prior")  # every observed variable has its prior replicate


# ------------------------------------------------------------------ other data
def test_missing_entries_stay_missing_in_the_class_replicates():
    X, y = iris_like()
    X[[1, 5], [0, 2]] = np.nan
    clf = _with_replicates(bg.GaussianNB(**FAST), X, y)
    obs = clf.idata_.observed_data["x_class_setosa"].values
    rep = clf.idata_.posterior_predictive["x_class_setosa"].values
    np.testing.assert_array_equal(np.isnan(rep), np.broadcast_to(np.isnan(obs), rep.shape))
    assert not np.isnan(clf.idata_.posterior_predictive["x"].values).any()  # as before
    _plot(clf.idata_, var_names=["x_class_setosa"], flatten=["obs_class_setosa"])


def test_sparse_and_wide_data_have_x_and_y_only(monkeypatch):
    rng = np.random.default_rng(2)
    y = np.repeat([0, 1], 20)
    X = sparse.csr_array(rng.poisson(1.0, size=(40, 5)).astype(float))
    clf = _with_replicates(bg.MultinomialNB(**FAST), X, y)
    assert set(clf.idata_.observed_data.data_vars) == {"x", "y"}
    assert set(clf.idata_.posterior_predictive.data_vars) == {"x", "y"}
    _plot(clf.idata_)
    monkeypatch.setattr(class_layout, "MAX_FEATURES", 4)
    wide = bg.MultinomialNB(**FAST).fit(X.toarray(), y)
    assert set(wide.idata_.observed_data.data_vars) == {"x", "y"}


@pytest.mark.parametrize("name", ["CategoricalNB", "MixedNB"])
def test_discrete_and_mixed_families(name):
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 30)
    codes = rng.integers(0, 3, size=(60, 2)).astype(float)
    if name == "CategoricalNB":
        clf, X = bg.CategoricalNB(**FAST), codes
    else:
        X = np.column_stack([rng.normal(size=60) + 3 * y, codes[:, 0]])
        clf = bg.MixedNB(families=[("gaussian", [0]), ("categorical", [1])], **FAST)
    _with_replicates(clf, X, y)
    rep = clf.idata_.posterior_predictive["x_class_1"]
    assert rep.dtype == (np.int64 if name == "CategoricalNB" else np.float64)
    codes_rep = rep.values[..., -1]
    assert set(np.unique(codes_rep)) <= {0, 1, 2}
    _plot(clf.idata_, var_names=["x_class_1"], flatten=["obs_class_1"])


def test_kernel_nb_mcmc_layout():
    rng = np.random.default_rng(4)
    y = np.repeat([0, 1], 15)
    X = rng.normal(size=(30, 2)) + 4 * y[:, None]
    clf = bg.KernelNB(method="mcmc", chains=1, draws=40, tune=60, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        _with_replicates(clf, X, y)
    rep = clf.idata_.posterior_predictive["x_class_1"]
    np.testing.assert_allclose(rep.mean(("chain", "draw", "obs_class_1")),
                               X[y == 1].mean(0), atol=0.6)


# ------------------------------------------------------------------ persistence
def test_save_load_keeps_the_layout(tmp_path):
    X, y = iris_like()
    clf = _with_replicates(bg.QDA(**FAST), X, y)
    clf.save(tmp_path / "qda.nc")
    back = bg.load(tmp_path / "qda.nc")
    for group in ("observed_data", "posterior_predictive"):
        for var in ("x_class_setosa", "x_class_a_b"):
            np.testing.assert_array_equal(back.idata_[group][var].values,
                                          clf.idata_[group][var].values)
    np.testing.assert_array_equal(back.idata_.observed_data["obs_class_a_b"].values,
                                  np.flatnonzero(y == "a/b"))
    _plot(back.idata_, var_names=["x_class_a_b"], flatten=["obs_class_a_b"])


# ------------------------------------------------------------------ model_
def _ten_estimators():
    rng = np.random.default_rng(5)
    n = 30
    y = np.repeat([0, 1], n // 2)
    Xg = rng.normal(size=(n, 3)) + y[:, None]
    Xc = rng.poisson(2.0, size=(n, 3)).astype(float)
    Xcat = rng.integers(0, 3, size=(n, 3)).astype(float)
    Xe = rng.exponential(size=(n, 3))
    mixed = np.column_stack([Xg[:, 0], Xc[:, 0], (Xc[:, 1] > 1).astype(float), Xcat[:, 0]])
    return y, [
        (bg.LDA(), Xg), (bg.QDA(), Xg), (bg.GaussianNB(), Xg),
        (bg.BernoulliNB(), (Xc > 1).astype(float)), (bg.MultinomialNB(), Xc),
        (bg.PoissonNB(), Xc), (bg.CategoricalNB(), Xcat), (bg.ExponentialNB(), Xe),
        (bg.KernelNB(), Xg),
        (bg.MixedNB(families=[("gaussian", [0]), ("poisson", [1]), ("bernoulli", [2]),
                              ("categorical", [3])]), mixed),
        (bg.QDA(cov_prior_form="lkj"), Xg), (bg.LDA(cov_prior_form="lkj"), Xg),
    ]


def _check_graph(model, who):
    from pymc.model_graph import ModelGraph, random_variable_symbol

    for name, var in model.named_vars.items():
        shape = tuple(int(s) for s in var.shape.eval())
        dims = model.named_vars_to_dims.get(name)
        if shape:
            assert dims is not None and None not in dims, (who, name, dims)
        if var in model.free_RVs or var in model.observed_RVs:
            assert not random_variable_symbol(var).startswith("CustomDist"), (who, name)
    for plate in ModelGraph(model).get_plates():
        assert None not in plate.dim_info.names, (who, plate.dim_info)


def test_model_dims_are_named_for_every_estimator():
    y, cases = _ten_estimators()
    for est, X in cases:
        est.fit(X, y)
        _check_graph(est.build_model(X, y), type(est).__name__)


def test_model_with_missing_entries_has_named_dims():
    y, cases = _ten_estimators()
    for est, X in cases[:10]:
        X = X.copy()
        X[[2, 7], [1, 0]] = np.nan
        est.fit(X, y)
        model = est.build_model(X, y)
        _check_graph(model, type(est).__name__ + " with gaps")
        if type(est).__name__ == "QDA":  # PyMC's imputation variables
            assert model.coords["x_missing_entry"] == ("2,x1", "7,x0")
            assert model.named_vars_to_dims["x_unobserved"] == ("x_missing_entry",)
            assert model.named_vars_to_dims["x_observed"] == ("x_observed_entry",)


def test_lkj_packed_factor_dim_names_the_feature_pairs():
    y, cases = _ten_estimators()
    est, X = cases[-2]
    model = est.fit(X, y).build_model(X, y)
    assert model.named_vars_to_dims["cov_chol_0"] == ("feature_tril",)
    assert model.coords["feature_tril"] == ("x0,x0", "x1,x0", "x1,x1", "x2,x0", "x2,x1",
                                            "x2,x2")
