"""bayesgen.plots: every helper runs on real fitted models and draws the expected artists;
the numbers behind the pictures are checked against independent references (ArviZ HDI,
scikit-learn's calibration_curve, chi-square quantiles, count ratios)."""

import arviz as az
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import LineCollection, PathCollection, QuadMesh
from scipy import stats
from sklearn.calibration import calibration_curve
from sklearn.datasets import load_digits, load_iris

import bayesgen as bg
from bayesgen import plots

POST = {"method": "conjugate", "chains": 2, "draws": 200, "random_state": 0}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def iris2():
    X, y = load_iris(return_X_y=True)
    return X[:, :2], y


@pytest.fixture(scope="module")
def gaussian_fits(iris2):
    X, y = iris2
    return {
        "qda_post": bg.QDA(**POST).fit(X, y),
        "lda_post": bg.LDA(**POST).fit(X, y),
        "gnb_post": bg.GaussianNB(**POST).fit(X, y),
        "qda_mle": bg.QDA(method="mle").fit(X, y),
        "qda_map": bg.QDA(method="map").fit(X, y),
        "lda_map": bg.LDA(method="map").fit(X, y),
        "gnb_map": bg.GaussianNB(method="map").fit(X, y),
    }


@pytest.fixture(scope="module")
def bernoulli_fits():
    X, y = load_digits(return_X_y=True)
    X, y = (X[:200] > 7).astype(float), y[:200]
    fits = {
        "MLE": bg.BernoulliNB(method="mle").fit(X, y),
        "MAP": bg.BernoulliNB(method="map").fit(X, y),
        "posterior": bg.BernoulliNB(**POST).fit(X, y),
    }
    return X, y, fits


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


# ----------------------------------------------------------------- decision regions
def test_hdi_width_matches_arviz():
    rng = np.random.default_rng(1)
    samples = rng.gamma(2.0, size=(400, 7))
    ref = az.hdi(samples[None], hdi_prob=0.94)  # (7, 2), chain dim first
    np.testing.assert_allclose(plots._hdi_width(samples, 0.94), ref[:, 1] - ref[:, 0])


def test_uncertainty_is_hdi_width_of_predicted_class(gaussian_fits, iris2):
    clf = gaussian_fits["qda_post"]
    pts = iris2[0][::15]
    idx, width = plots._uncertainty(clf, pts)
    np.testing.assert_array_equal(idx, clf.predict_proba(pts).argmax(1))
    interval = clf.predict_proba_interval(pts, hdi_prob=0.94).values  # az.hdi path
    picked = interval[np.arange(len(pts)), idx]
    np.testing.assert_allclose(width, picked[:, 1] - picked[:, 0], atol=1e-12)


@pytest.mark.parametrize("name", ["qda_post", "lda_post", "qda_map"])
def test_decision_regions_artists(gaussian_fits, iris2, name):
    X, y = iris2
    clf = gaussian_fits[name]
    compare = [gaussian_fits["qda_mle"], gaussian_fits["qda_map"]]
    ax = plots.decision_regions(clf, X, y, resolution=40, compare=compare)
    assert any(isinstance(c, QuadMesh) for c in ax.collections)  # class regions
    assert sum(isinstance(c, PathCollection) for c in ax.collections) == 3  # points per class
    assert len(ax.figure.axes) == 2  # colour bar of the uncertainty overlay
    assert ax.get_title() and ax.get_xlabel() == "x0" and ax.get_ylabel() == "x1"
    texts = legend_texts(ax)
    assert [f"class {k}" for k in range(3)] == texts[:3]
    assert sum("boundary" in t and "mle" in t for t in texts) == 1
    assert sum("boundary" in t and "map" in t for t in texts) == 1


def test_decision_regions_compare_dict_labels(gaussian_fits, iris2):
    X, y = iris2
    ax = plots.decision_regions(gaussian_fits["gnb_map"], X, y, resolution=30,
                                compare={"MLE fit": gaussian_fits["qda_mle"]})
    assert "boundary: MLE fit" in legend_texts(ax)


def test_decision_regions_rejects_wrong_feature_count(gaussian_fits, iris2):
    X, y = iris2
    X3 = np.column_stack([X, X[:, 0]])
    with pytest.raises(ValueError, match="2 features"):
        plots.decision_regions(gaussian_fits["qda_map"], X3, y)
    X4, y4 = load_iris(return_X_y=True)
    wide = bg.QDA(method="map").fit(X4, y4)
    with pytest.raises(ValueError, match="2 features"):
        plots.decision_regions(wide, X4[:, :2], y4)
    with pytest.raises(ValueError, match="y must have shape"):
        plots.decision_regions(gaussian_fits["qda_map"], X, y[:-1])


# ------------------------------------------------------------------------- ellipses
def mahalanobis2(points, mean, cov):
    diff = points - mean
    return np.einsum("ni,ij,nj->n", diff, np.linalg.inv(cov), diff)


@pytest.mark.parametrize("name", ["qda_post", "lda_post", "gnb_post", "qda_map", "gnb_map"])
def test_ellipses_lie_on_the_chi2_quantile(gaussian_fits, name):
    clf = gaussian_fits[name]
    ax = plots.probability_ellipses(clf, level=0.9, n_draws=12)
    posterior = name.endswith("post")
    clouds = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(clouds) == (3 if posterior else 0)
    if posterior:
        assert all(len(c.get_segments()) == 12 for c in clouds)
    curves = [line for line in ax.lines if line.get_label().startswith("class")]
    assert len(curves) == 3
    q = stats.chi2.ppf(0.9, df=2)
    for k, line in enumerate(curves):
        pts = np.asarray(line.get_xydata())
        if hasattr(clf, "covariance_"):
            cov = np.asarray(clf.covariance_[k] if name.startswith("qda") else clf.covariance_)
            mean = clf.means_[k]
        else:
            cov, mean = np.diag(clf.var_[k]), clf.theta_[k]
        np.testing.assert_allclose(mahalanobis2(pts, mean, cov), q, rtol=1e-9)
    assert ax.get_title() and ax.get_legend() is not None


def test_ellipses_draw_cloud_uses_posterior_draws(gaussian_fits):
    clf = gaussian_fits["qda_post"]
    ax = plots.probability_ellipses(clf, features=(1, 0), level=0.5, n_draws=5)
    cloud = [c for c in ax.collections if isinstance(c, LineCollection)][2]  # class 2
    post = clf.idata_.posterior.stack(sample=("chain", "draw")).transpose("sample", ...)
    first = 0  # the evenly spaced picks start with the first draw
    mu = post["mu"].values[first, 2][[1, 0]]
    cov = post["cov"].values[first, 2][np.ix_([1, 0], [1, 0])]
    seg = cloud.get_segments()[0]
    np.testing.assert_allclose(mahalanobis2(seg, mu, cov), stats.chi2.ppf(0.5, 2), rtol=1e-9)
    assert ax.get_xlabel() == "x1" and ax.get_ylabel() == "x0"


def test_ellipses_errors(gaussian_fits, bernoulli_fits):
    with pytest.raises(ValueError, match="Gaussian classifier"):
        plots.probability_ellipses(bernoulli_fits[2]["MAP"])
    with pytest.raises(ValueError, match="distinct"):
        plots.probability_ellipses(gaussian_fits["qda_map"], features=(0, 0))
    with pytest.raises(ValueError, match="distinct"):
        plots.probability_ellipses(gaussian_fits["qda_map"], features=(0, 5))
    with pytest.raises(ValueError, match="level"):
        plots.probability_ellipses(gaussian_fits["qda_map"], level=1.0)


# ---------------------------------------------------------------------- reliability
def test_calibration_table_matches_sklearn(gaussian_fits, iris2):
    X, y = iris2
    proba = gaussian_fits["gnb_map"].predict_proba(X)
    tab = plots.calibration_table(y, proba, n_bins=7)
    onehot = (y[:, None] == np.arange(3)).ravel()
    prob_true, prob_pred = calibration_curve(onehot, proba.ravel(), n_bins=7)
    np.testing.assert_allclose(tab["prob_true"], prob_true)
    np.testing.assert_allclose(tab["prob_pred"], prob_pred)
    assert tab["count"].sum() == proba.size


def test_ece_closed_form():
    y = np.array([0] * 7 + [1] * 3)
    calibrated = np.tile([0.7, 0.3], (10, 1))
    assert plots.calibration_table(y, calibrated)["ece"] == pytest.approx(0.0, abs=1e-12)
    over = np.tile([0.9, 0.1], (10, 1))  # 0.9 forecast, 0.7 observed; 0.1 vs 0.3
    assert plots.calibration_table(y, over)["ece"] == pytest.approx(0.2)


def test_reliability_diagram_compares_methods(gaussian_fits, iris2):
    X, y = iris2
    proba = {n: gaussian_fits[n].predict_proba(X) for n in ["qda_mle", "gnb_map"]}
    ax = plots.reliability_diagram(y, proba, n_bins=5)
    texts = legend_texts(ax)
    assert texts[0] == "perfect calibration"
    assert any(t.startswith("qda_mle (ECE = ") for t in texts)
    assert any(t.startswith("gnb_map (ECE = ") for t in texts)
    assert len(ax.lines) == 3 and ax.get_title()
    twin = next(a for a in ax.figure.axes if a is not ax)
    assert len(twin.patches) == 2  # bin-count steps


def test_reliability_diagram_errors(iris2):
    _, y = iris2
    with pytest.raises(ValueError, match="shape"):
        plots.reliability_diagram(y, np.full((len(y), 2), 0.5))
    with pytest.raises(ValueError, match="not in classes"):
        plots.reliability_diagram(y, np.full((len(y), 3), 1 / 3), classes=[5, 6, 7])
    with pytest.raises(ValueError, match="probabilities"):
        plots.reliability_diagram(y, np.full((len(y), 3), 1.5))


# ----------------------------------------------------------------------- forest
def test_probability_forest_intervals_match_hdi(gaussian_fits, iris2):
    clf = gaussian_fits["qda_post"]
    pts = iris2[0][[0, 60, 130]]
    ax = plots.probability_forest(clf, pts, hdi_prob=0.8)
    bars = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(bars) == 3  # one per class
    ref = clf.predict_proba_interval(pts, hdi_prob=0.8).values  # (obs, class, hdi)
    for k, bar in enumerate(bars):
        seg = np.array(bar.get_segments())  # (points, 2 ends, xy)
        np.testing.assert_allclose(seg[:, :, 0], ref[:, k, :], atol=1e-12)
    means = clf.predict_proba_draws(pts).mean(("chain", "draw")).values
    dots = [line for line in ax.lines if line.get_marker() == "o"]
    np.testing.assert_allclose(np.concatenate([d.get_xdata() for d in dots]), means.T.ravel())
    assert len(ax.get_yticklabels()) == 3 and ax.get_title() and ax.get_legend()


def test_probability_forest_needs_posterior(gaussian_fits, iris2):
    with pytest.raises(ValueError, match="needs a posterior"):
        plots.probability_forest(gaussian_fits["qda_map"], iris2[0][:2])
    with pytest.raises(ValueError, match="hdi_prob"):
        plots.probability_forest(gaussian_fits["qda_post"], iris2[0][:2], hdi_prob=1.2)


# ---------------------------------------------------------------------- shrinkage
def test_shrinkage_points(bernoulli_fits):
    X, y, fits = bernoulli_fits
    cols = [10, 20, 30]
    ax = plots.shrinkage(fits, feature_indices=cols)
    scatters = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(scatters) == 2
    classes = np.unique(y)
    counts = np.stack([X[y == k][:, cols].sum(0) for k in classes])
    n_k = np.array([(y == k).sum() for k in classes])[:, None]
    mle, laplace = counts / n_k, (counts + 1) / (n_k + 2)  # Beta(2, 2) mode
    offsets = scatters[0].get_offsets()  # MAP vs MLE
    np.testing.assert_allclose(offsets[:, 0], mle.ravel(), atol=1e-10)
    np.testing.assert_allclose(offsets[:, 1], laplace.ravel(), atol=1e-10)
    texts = legend_texts(ax)
    assert texts[:2] == ["MAP", "posterior"] and "identity" in texts[2]
    assert ax.get_title() and ax.get_xlabel()


def test_shrinkage_errors(bernoulli_fits, gaussian_fits):
    fits = bernoulli_fits[2]
    with pytest.raises(ValueError, match="method='mle'"):
        plots.shrinkage({"a": fits["MAP"], "b": fits["posterior"]})
    with pytest.raises(ValueError, match="feature_log_prob_"):
        plots.shrinkage({"mle": fits["MLE"], "g": gaussian_fits["gnb_map"]})
    with pytest.raises(ValueError, match="dict"):
        plots.shrinkage([fits["MLE"], fits["MAP"]])


# -------------------------------------------------------------------- trace / rank
def test_trace_and_rank_default_variables(gaussian_fits):
    clf = gaussian_fits["lda_post"]
    axes = plots.trace(clf)
    assert axes.shape == (3, 2)  # pi, mu, cov
    assert [a.get_title() for a in axes[:, 0]] == ["pi", "mu", "cov"]
    ranks = np.ravel(plots.rank(clf, var_names=["pi"]))
    assert len(ranks) == 3 and all(a.patches for a in ranks)


def test_trace_needs_posterior(gaussian_fits):
    with pytest.raises(ValueError, match="needs a posterior"):
        plots.trace(gaussian_fits["qda_map"])
    with pytest.raises(ValueError, match="needs a posterior"):
        plots.rank(gaussian_fits["qda_map"])
