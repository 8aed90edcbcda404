"""Posterior predictive checks (bayesgen.diagnostics) on well- and misspecified models."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import bayesgen as bg
from bayesgen import diagnostics as dg

N_PER_CLASS = 150
FAST = {"method": "conjugate", "chains": 2, "draws": 300, "random_state": 0}


def gaussian_data(seed=1, rho=0.0):
    """Three Gaussian classes in 3-D; within-class correlation rho between x0 and x1."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], N_PER_CLASS)
    cov = np.eye(3)
    cov[0, 1] = cov[1, 0] = rho
    z = rng.multivariate_normal(np.zeros(3), cov, size=y.size)
    return z + 3.0 * y[:, None], y


@pytest.fixture(scope="module")
def gaussian_fit():
    X, y = gaussian_data()
    return bg.GaussianNB(**FAST).fit(X, y)


@pytest.fixture(scope="module")
def correlated():
    X, y = gaussian_data(seed=2, rho=0.9)
    return X, y


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_manual_pvalue_matches_definition(gaussian_fit):
    """One row recomputed by hand from the replicated data with numpy's own std/max."""
    table = dg.ppc_pvalues(gaussian_fit, random_state=1)
    pp = gaussian_fit.idata_.posterior_predictive
    x_rep = pp["x"].values.reshape(-1, 3 * N_PER_CLASS, 3)
    y_rep = pp["y"].values.reshape(-1, 3 * N_PER_CLASS)
    X, y = gaussian_data()
    for stat, fn in (("sd", lambda v: np.std(v, ddof=1)), ("max", np.max)):
        t_rep = np.array([fn(x_rep[s, y_rep[s] == 1, 2]) for s in range(y_rep.shape[0])])
        t_obs = fn(X[y == 1, 2])
        expected = np.mean(t_rep > t_obs) + 0.5 * np.mean(t_rep == t_obs)
        row = table[(table["class"] == 1) & (table.feature == "x2") & (table.statistic == stat)]
        assert row["p_value"].item() == pytest.approx(expected)
        assert row["observed"].item() == pytest.approx(t_obs)
        assert row["replicated_mean"].item() == pytest.approx(t_rep.mean())


def test_well_specified_model_is_not_flagged(gaussian_fit):
    table = dg.ppc_pvalues(gaussian_fit, random_state=1)
    assert list(table.columns[:7]) == [
        "class", "feature", "statistic", "observed", "replicated_mean", "p_value", "flagged",
    ]
    # 3 classes x (frequency + 4 statistics x 3 features); no correlation for GaussianNB
    assert len(table) == 3 * (1 + 4 * 3)
    assert table["p_value"].between(0, 1).all()
    assert table["flagged"].sum() <= 2  # min/max p-values are ~uniform: a few by chance
    # mean and sd are fitted directly: their p-values sit near 1/2
    fitted = table[table.statistic.isin(["mean", "sd"])]
    assert fitted["p_value"].between(0.2, 0.8).all()


def test_class_frequency_rows(gaussian_fit):
    table = dg.ppc_pvalues(gaussian_fit, random_state=1)
    freq = table[table.statistic == "frequency"]
    assert list(freq["class"]) == list(gaussian_fit.classes_)
    assert (freq["feature"] == "-").all()
    assert (freq["observed"] == N_PER_CLASS).all()
    assert not freq["flagged"].any()
    ds = dg.class_frequency_ppc(gaussian_fit)
    np.testing.assert_allclose(ds["observed"].values, 1 / 3)
    assert ds["replicated"].dims == ("chain", "draw", "class")
    np.testing.assert_allclose(ds["replicated"].sum("class"), 1.0)
    # replicated proportions centre on the posterior mean of pi
    np.testing.assert_allclose(
        ds["replicated"].mean(("chain", "draw")), gaussian_fit.class_prior_, atol=0.01
    )


def test_bimodal_feature_is_flagged():
    """Class 0, feature x0: a mixture of N(-4, 1) and N(4, 1), fitted by one normal."""
    X, y = gaussian_data(seed=3)
    rng = np.random.default_rng(4)
    X[y == 0, 0] = rng.choice([-4.0, 4.0], size=N_PER_CLASS) + rng.normal(size=N_PER_CLASS)
    table = dg.ppc_pvalues(bg.GaussianNB(**FAST).fit(X, y), random_state=1)
    bad = table.query("`class` == 0 and feature == 'x0' and statistic in ['sd', 'min', 'max']")
    assert bad["flagged"].any()
    # the tails of one wide normal are longer than those of the two narrow modes
    assert bad.set_index("statistic").loc["max", "p_value"] > 0.975
    assert bad.set_index("statistic").loc["min", "p_value"] < 0.025
    others = table.query("not (`class` == 0 and feature == 'x0')")
    assert others["flagged"].sum() <= 2


def test_correlation_flags_naive_bayes_not_qda(correlated):
    X, y = correlated
    nb = dg.ppc_pvalues(bg.GaussianNB(**FAST).fit(X, y), correlation=True, random_state=1)
    corr = nb[nb.statistic == "corr(x0,x1)"]
    assert len(corr) == 3 and (corr["feature"] == "x0,x1").all()
    assert corr["flagged"].all()
    assert (corr["observed"] > 0.8).all() and (corr["replicated_mean"].abs() < 0.2).all()

    qda = dg.ppc_pvalues(bg.QDA(**FAST).fit(X, y), random_state=1)  # MVN: corr by default
    pairs = {"corr(x0,x1)", "corr(x0,x2)", "corr(x1,x2)"}
    assert pairs <= set(qda.statistic)
    qcorr = qda[qda.statistic.isin(pairs)]
    assert len(qcorr) == 3 * 3
    assert not qcorr["flagged"].any()
    np.testing.assert_allclose(
        qcorr.query("statistic == 'corr(x0,x1)'")["replicated_mean"], 0.9, atol=0.05
    )
    no_corr = dg.ppc_pvalues(bg.QDA(**FAST).fit(X, y), correlation=False, random_state=1)
    assert not no_corr.statistic.str.startswith("corr").any()


def test_point_method_and_bad_arguments(gaussian_fit):
    X, y = gaussian_data()
    point = bg.GaussianNB().fit(X, y)
    for fn in (dg.ppc_pvalues, dg.class_frequency_ppc, dg.plot_ppc):
        with pytest.raises(ValueError, match="posterior"):
            fn(point)
    with pytest.raises(ValueError, match="statistics"):
        dg.ppc_pvalues(gaussian_fit, stats=("median",))
    with pytest.raises(ValueError, match="alpha"):
        dg.ppc_pvalues(gaussian_fit, alpha=1.5)
    with pytest.raises(ValueError, match="klass"):
        dg.feature_ppc_data(gaussian_fit, klass=7)


def test_missing_group_is_sampled():
    """ppc_pvalues replicates every draw when idata_ has no posterior_predictive (fit
    adds none: it is on request) or one of fewer draws than the posterior (the group
    of about 100 draws that earlier versions added at fit, in files they saved)."""
    X, y = gaussian_data()
    est = bg.GaussianNB(**FAST).fit(X, y)
    assert "posterior_predictive" not in est.idata_.groups()
    table = dg.ppc_pvalues(est, random_state=0)
    sizes = est.idata_.posterior_predictive.sizes
    assert sizes["chain"] * sizes["draw"] == 600
    assert isinstance(table, pd.DataFrame) and (table["n_draws"] == 600).all()
    thinned = est.idata_.posterior_predictive.isel(draw=slice(None, None, 6))
    del est.idata_.posterior_predictive
    est.idata_.add_groups(posterior_predictive=thinned)
    assert est.idata_.posterior_predictive.sizes["draw"] == 50
    assert (dg.ppc_pvalues(est, random_state=0)["n_draws"] == 600).all()
    assert est.idata_.posterior_predictive.sizes["draw"] == 300


def test_feature_ppc_data_shapes(gaussian_fit):
    data = dg.feature_ppc_data(gaussian_fit, klass=2)
    X, y = gaussian_data()
    np.testing.assert_array_equal(data.observed_data["x"].values, X[y == 2])
    rep = data.posterior_predictive["x"]
    assert rep.sizes["feature"] == 3 and rep.sizes["chain"] == 1
    assert rep.sizes["draw"] >= 0.95 * 600 - 1
    # class-2 replicated rows come from N(6, 1): their mean and sd say so
    assert abs(float(rep.mean()) - 6.0) < 0.2 and abs(float(rep.std()) - 1.0) < 0.15


def test_plot_ppc_kde_and_cumulative(gaussian_fit):
    axes = dg.plot_ppc(gaussian_fit, num_pp_samples=20, random_state=0)
    assert axes.shape == (3, 3)
    for ax in axes.ravel():
        assert len(ax.lines) >= 20 + 1  # replicated curves + observed
    one = dg.plot_ppc(gaussian_fit, klass=1, kind="cumulative", num_pp_samples=10)
    assert one.shape == (1, 3) and all(len(ax.lines) >= 11 for ax in one.ravel())


def test_plot_ppc_discrete_family():
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1], 60)
    X = rng.poisson([[1.0, 4.0]] * 60 + [[3.0, 2.0]] * 60).astype(float)
    est = bg.PoissonNB(**FAST).fit(X, y)
    axes = dg.plot_ppc(est, num_pp_samples=10, random_state=0)  # cumulative by default
    assert axes.shape == (2, 2)
    assert all(len(ax.lines) >= 11 for ax in axes.ravel())
    table = dg.ppc_pvalues(est, random_state=0)
    assert not table["p_value"].isna().any()
    # integer maxima tie often: the mid-p convention counts ties as one half
    pp = est.idata_.posterior_predictive
    x_rep, y_rep = pp["x"].values.reshape(600, 120, 2), pp["y"].values.reshape(600, 120)
    t_rep = np.array([x_rep[s, y_rep[s] == 0, 1].max() for s in range(600)])
    t_obs = X[y == 0, 1].max()
    assert np.mean(t_rep == t_obs) > 0.05
    row = table[(table["class"] == 0) & (table.feature == "x1") & (table.statistic == "max")]
    assert row["p_value"].item() == pytest.approx(
        np.mean(t_rep > t_obs) + 0.5 * np.mean(t_rep == t_obs)
    )


def test_plot_compare(correlated):
    X, y = correlated
    models = {
        "LDA": bg.LDA(**FAST).fit(X, y),
        "QDA": bg.QDA(**FAST).fit(X, y),
        "GaussianNB": bg.GaussianNB(**FAST).fit(X, y),
    }
    ax = dg.plot_compare(models)
    labels = {t.get_text() for t in ax.get_yticklabels()}
    assert set(models) <= labels
    assert len(ax.lines) + len(ax.collections) > 0


def test_lda_flags_unequal_class_spreads_qda_does_not():
    """Class 2 has three times the spread of the others: a shared covariance misfits it."""
    X, y = gaussian_data(seed=6)
    X[y == 2] = 6.0 + 3.0 * (X[y == 2] - 6.0)
    sd_rows = {}
    for name in ("LDA", "QDA"):
        est = getattr(bg, name)(**FAST).fit(X, y)
        table = dg.ppc_pvalues(est, random_state=1)
        sd_rows[name] = table[table.statistic == "sd"]
    lda = sd_rows["LDA"].set_index(["class", "feature"])["p_value"]
    assert (lda.loc[2] < 0.025).all()  # replicated class-2 spread too small
    assert (lda.loc[0] > 0.975).all()  # replicated class-0 spread too large
    assert not sd_rows["QDA"]["flagged"].any()
