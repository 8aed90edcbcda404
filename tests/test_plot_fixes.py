"""Issue 18 part 3: legible figures. Legends name every series, colour bars stay in
[0, 1], plot_ppc selects and limits its features with clean labels, saved figures keep
their tick labels inside the picture, the demo's reliability diagram labels bin counts."""

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris

import bayesgen as bg
from bayesgen import plots
from bayesgen.cli import figures
from bayesgen.plots.regions import _probability_levels

POST = {"method": "conjugate", "chains": 2, "draws": 100, "random_state": 0}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def iris2():
    X, y = load_iris(return_X_y=True)
    return X[:, :2], y


@pytest.fixture(scope="module")
def fits(iris2):
    X, y = iris2
    return {"qda_post": bg.QDA(**POST).fit(X, y), "qda_map": bg.QDA(method="map").fit(X, y),
            "lda_post": bg.LDA(**POST).fit(X, y), "gnb_post": bg.GaussianNB(**POST).fit(X, y)}


@pytest.fixture(scope="module")
def wide():
    """8 named features (a DataFrame), 2 classes, an exact posterior."""
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 40)
    X = pd.DataFrame(rng.normal(y[:, None], 1.0, size=(80, 8)),
                     columns=[f"f{j}" for j in range(8)])
    return bg.GaussianNB(**POST).fit(X, y)


def inside_figure(fig, artists):
    """True when every artist's drawn box lies within the figure (as saved)."""
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    return all(
        a.get_window_extent(renderer).x0 >= box.x0 - 0.5
        and a.get_window_extent(renderer).x1 <= box.x1 + 0.5
        and a.get_window_extent(renderer).y0 >= box.y0 - 0.5
        for a in artists if a.get_text()
    )


# ------------------------------------------------------------- decision regions
@pytest.mark.parametrize("name", ["qda_post", "qda_map"])
def test_decision_regions_colour_bar_within_0_1(fits, iris2, name):
    X, y = iris2
    ax = plots.decision_regions(fits[name], X, y, resolution=40)
    cbar_ax = next(a for a in ax.figure.axes if a is not ax)
    lo, hi = cbar_ax.get_ylim()
    assert 0.0 <= lo < hi <= 1.0
    ticks = [t for t in cbar_ax.get_yticks() if lo <= t <= hi]
    assert ticks and max(ticks) <= 1.0


def test_probability_levels_are_round_and_clipped():
    np.testing.assert_allclose(_probability_levels(np.array([0.37, 1.0])),
                               [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    np.testing.assert_allclose(_probability_levels(np.array([0.02, 0.13])),
                               [0.0, 0.05, 0.1, 0.15, 0.2])
    levels = _probability_levels(np.array([1.0, 1.0]))
    assert levels[0] >= 0.0 and levels[-1] == 1.0 and len(levels) >= 2


# ---------------------------------------------------------------------- trace
def test_trace_has_coordinate_and_chain_legends(fits):
    axes = plots.trace(fits["qda_post"], var_names=["pi", "mu"])
    pi_legend = axes[0, 0].get_legend()
    assert pi_legend is not None and pi_legend.get_title().get_text() == "class"
    assert [t.get_text() for t in pi_legend.get_texts()] == ["0", "1", "2"]
    mu_texts = [t.get_text() for t in axes[1, 0].get_legend().get_texts()]
    assert len(mu_texts) == 6 and mu_texts[0] == "0, x0"
    chains = axes[0, 1].get_legend()
    assert chains.get_title().get_text() == "chain"
    assert [t.get_text() for t in chains.get_texts()] == ["0", "1"]
    assert plots.trace(fits["qda_post"], var_names=["pi"], legend=False)[0, 0].get_legend() \
        is None


# ------------------------------------------------------------------- plot_ppc
def test_plot_ppc_labels_once(fits):
    axes = bg.plot_ppc(fits["gnb_post"], num_pp_samples=5, random_state=0)
    assert axes.shape == (3, 2)
    for row, label in enumerate(fits["gnb_post"].classes_):
        assert [a.get_xlabel() for a in axes[row]] == ["x0", "x1"]  # not "x\nx0"
        assert all(a.get_title() == f"class {label}" for a in axes[row])
    with_legend = [a for a in axes.ravel() if a.get_legend() is not None]
    assert with_legend == [axes[0, 0]]


def test_plot_ppc_var_names_selects_by_name(wide):
    axes = bg.plot_ppc(wide, var_names=["f5", "f2"], num_pp_samples=5, random_state=0)
    assert axes.shape == (2, 2)
    assert [a.get_xlabel() for a in axes[0]] == ["f5", "f2"]
    one = bg.plot_ppc(wide, klass=0, var_names="f5", num_pp_samples=5, random_state=0)
    assert one.shape == (1, 1) and one[0, 0].get_xlabel() == "f5"
    # the observed density of the panel spans class 0's f5 data (and no other column)
    observed = next(line for line in one[0, 0].lines if line.get_label() == "Observed")
    data = wide.idata_.observed_data["x"].sel(feature="f5").values[
        wide.idata_.observed_data["y"].values == 0]
    np.testing.assert_allclose([np.min(observed.get_xdata()), np.max(observed.get_xdata())],
                               [data.min(), data.max()], atol=0.05)
    with pytest.raises(ValueError, match=r"var_names.*unknown.*'nope'"):
        bg.plot_ppc(wide, var_names=["f1", "nope"])


def test_plot_ppc_max_features_default_and_note(wide):
    axes = bg.plot_ppc(wide, num_pp_samples=5, random_state=0)
    assert axes.shape == (2, 6)  # the default keeps 6 of the 8 features
    assert [a.get_xlabel() for a in axes[0]] == [f"f{j}" for j in range(6)]
    note = axes[0, 0].figure.get_supxlabel()
    assert "2 more features not shown (f6, f7)" in note and "var_names" in note
    every = bg.plot_ppc(wide, max_features=None, num_pp_samples=5, random_state=0)
    assert every.shape == (2, 8) and every[0, 0].figure.get_supxlabel() == ""
    three = bg.plot_ppc(wide, var_names=["f7", "f6", "f0", "f1"], max_features=3,
                        num_pp_samples=5, random_state=0)
    assert [a.get_xlabel() for a in three[0]] == ["f7", "f6", "f0"]
    assert "(f1)" in three[0, 0].figure.get_supxlabel()
    with pytest.raises(ValueError, match="max_features"):
        bg.plot_ppc(wide, max_features=0)


def test_plot_ppc_given_axes(wide):
    _, ax = plt.subplots(1, 2)
    axes = bg.plot_ppc(wide, klass=1, var_names=["f0", "f3"], ax=ax, num_pp_samples=5)
    assert axes[0, 0] is ax[0] and ax[1].get_xlabel() == "f3"


# ---------------------------------------------------------------- plot_compare
def test_plot_compare_savefig_keeps_model_names(fits):
    models = {"LDA": fits["lda_post"], "QDA": fits["qda_post"],
              "GaussianNB (a long name)": fits["gnb_post"]}
    ax = bg.plot_compare(models)
    ax.figure.savefig(io.BytesIO(), format="png")  # default bbox, as a user saves it
    labels = ax.get_yticklabels()
    assert {t.get_text() for t in labels} >= set(models)
    assert inside_figure(ax.figure, [*labels, ax.xaxis.label, ax.yaxis.label])


# ------------------------------------------------------------------ reliability
def test_reliability_counts_labels(fits, iris2):
    X, y = iris2
    proba = {"map": fits["qda_map"].predict_proba(X), "post": fits["qda_post"].predict_proba(X)}
    ax = plots.reliability_diagram(y, proba, n_bins=5)
    texts = [t.get_text() for t in ax.texts]
    expected = [f"n={n}" for p in proba.values()
                for n in plots.calibration_table(y, p, n_bins=5)["count"]]
    assert texts == expected
    three = {**proba, "gnb": fits["gnb_post"].predict_proba(X)}
    assert len(plots.reliability_diagram(y, three, n_bins=5).texts) == 0
    assert len(plots.reliability_diagram(y, three, n_bins=5, show_counts=True).texts) > 0


# ------------------------------------------------------------------------ demo
def test_demo_log_loss_legend_names_every_method():
    table = pd.DataFrame({
        "data": ["a", "a", "b", "b", "b"],
        "classifier": ["LDA"] * 5,
        "method": ["mle", "map", "mle", "map", "mcmc"],  # mcmc only in the second panel
        "log_loss": [0.3, 0.2, 0.4, np.nan, 0.1],
        "note": ["", "", "", "MAP: failed", ""],
    })
    fig = figures.log_loss_figure(table)
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == ["mle", "map", "mcmc"]
    colours = [h.get_facecolor() for h in legend.legend_handles]
    bars_b = fig.axes[1].patches  # mle, mcmc drawn (map failed)
    assert bars_b[-1].get_facecolor() == colours[2]
    assert bars_b[0].get_facecolor() == colours[0]


def test_decision_regions_show_the_posterior_spread_of_a_gibbs_mixture(iris2):
    """MixtureDA(method="gibbs") has posterior draws: the regions are coloured by the HDI
    width of p(y = k_hat | x, theta) over them, as for the other posterior methods, not by
    the largest class probability of a point fit."""
    from bayesgen.plots.regions import _hdi_width, _uncertainty

    X, y = iris2
    est = bg.MixtureDA(method="gibbs", n_components=2, chains=1, tune=20, draws=40,
                       random_state=0).fit(X, y)
    grid = X[::15]
    idx, width = _uncertainty(est, grid)
    draws = est.predict_proba_draws(grid).values.reshape(-1, len(grid), 3)
    expected = _hdi_width(np.take_along_axis(draws, idx[None, :, None], axis=2)[..., 0], 0.94)
    np.testing.assert_allclose(width, expected, rtol=1e-12)
    assert not np.allclose(width, est.predict_proba(grid).max(axis=1))
