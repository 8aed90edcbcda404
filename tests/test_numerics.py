"""Bad input and extreme numbers for the real-valued families (issue 12).

The frame (bayesgen.data.frame), statistics that carry it and merge across frames, rows far
from the training data, values near the float64 limits, constant features, tiny data
and common weight factors.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris

import bayesgen as bg
from bayesgen.data import frame as frame_module
from bayesgen.families import gaussian_stats as gstats
from bayesgen.families import get_family

# values near the float64 limits: attributes that overflow in the units of X warn (tested
# in test_bad_inputs); here the predictions are checked
pytestmark = pytest.mark.filterwarnings("ignore:.*the fitted attribute\\(s\\):bayesgen.DataWarning")

REAL = {
    "LDA": lambda **kw: bg.LDA(**kw),
    "QDA": lambda **kw: bg.QDA(**kw),
    "GaussianNB": lambda **kw: bg.GaussianNB(**kw),
    "KernelNB": lambda **kw: bg.KernelNB(**kw),
    "MixedNB": lambda **kw: bg.MixedNB(families=[("gaussian", [0, 1]), ("kernel", [2, 3])],
                                       **kw),
}
CONJUGATE = ("LDA", "QDA", "GaussianNB")


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


# -------------------------------------------------------------------- frame
@pytest.mark.parametrize(
    "column",
    [
        np.linspace(-1.0, 1.0, 50),  # well scaled: identity
        np.linspace(1e9, 1e9 + 3.0, 50),  # offset
        np.linspace(0.0, 1e-300, 50),  # tiny
        np.linspace(-1.0, 1.0, 50) * 1.7e308,  # the whole float range
        np.full(50, 3.0e200),  # constant
        np.full(50, 0.0),  # constant zero
        np.arange(50) * 5e-324,  # subnormal
        np.r_[np.zeros(40), np.ones(10)],  # IQR 0
    ],
)
def test_frame_is_finite_positive_and_exact(column):
    fr = frame_module.choose(column[:, None], np.array([True]))
    s, c = fr.scale[0], fr.loc[0]
    assert np.isfinite(s) and s > 0 and np.isfinite(c)
    assert np.frexp(s)[0] == 0.5  # a power of two
    z = fr.internal(column[:, None])[:, 0]
    assert np.all(np.isfinite(z)) and np.abs(z).max() < 2**12
    # the back-transform returns the data (exactly for the data near c)
    np.testing.assert_allclose(fr.user(z[:, None])[:, 0], column, rtol=1e-15)


def test_frame_is_identity_for_well_scaled_data(iris):
    X, _ = iris
    fr = frame_module.choose(X, np.ones(4, dtype=bool))
    assert fr.is_identity  # ordinary data are used exactly as given
    est = bg.QDA().fit(X, iris[1])
    assert est._frame.is_identity


# ---------------------------------------------------------- merge of frames
def _own_frame_stats(family, X, y, w):
    family.frame = frame_module.choose(X, np.ones(X.shape[1], dtype=bool), w)
    return family.stats(family.frame.internal(X), y, w, 3)


@pytest.mark.parametrize("offset", [0.0, 1e9, -3e12])
@pytest.mark.parametrize("kind", ["gaussian", "qda", "lda", "kernel"])
def test_merge_across_frames_equals_stats_of_all(kind, offset):
    rng = np.random.default_rng(0)
    n = 120
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 3)) * np.array([1.0, 1e-6, 1e5]) + offset
    X[:60] = X[:60] * 1.0  # same units, different batches
    X[60:, 1] += 7e-6  # the second batch has a different spread/offset
    w = rng.uniform(0.5, 2.0, n)

    def make():
        if kind == "gaussian":
            return get_family("gaussian")()
        if kind == "kernel":
            return get_family("kernel")()
        return get_family("mvn")(tied=kind == "lda")

    fam = make()
    a = _own_frame_stats(make(), X[:60], y[:60], w[:60])
    b = _own_frame_stats(make(), X[60:], y[60:], w[60:])
    full = _own_frame_stats(make(), X, y, w)
    assert not np.array_equal(a["loc"], b["loc"]) or not np.array_equal(a["scale"], b["scale"])
    merged = fam.merge(a, b)
    if kind == "kernel":
        user_m = merged["X"] * merged["scale"] + merged["loc"]
        user_f = full["X"] * full["scale"] + full["loc"]
        order_m, order_f = np.lexsort(user_m.T), np.lexsort(user_f.T)
        np.testing.assert_allclose(user_m[order_m], user_f[order_f], rtol=1e-14)
        np.testing.assert_allclose(merged["count"], full["count"], rtol=1e-14)
        return
    merged = gstats.reframe(merged, full["loc"], full["scale"])
    np.testing.assert_allclose(merged["count"], full["count"], rtol=1e-12)
    np.testing.assert_allclose(merged["mean"], full["mean"], rtol=1e-10, atol=1e-10)
    key = "m2" if kind == "gaussian" else "scatter"
    scale = np.abs(full[key]).max()
    np.testing.assert_allclose(merged[key], full[key], rtol=1e-10, atol=1e-10 * scale)
    np.testing.assert_array_equal(merged["rows"], full["rows"])


# ---------------------------------------------------------------- far rows
def _limit_class(est, direction):
    """The class the model implies for x = t * direction, t -> infinity (point fits)."""
    if isinstance(est, bg.GaussianNB):
        return np.argmin((direction**2 / est.var_).sum(1))
    if isinstance(est, bg.KernelNB):
        return np.argmin((direction**2 / est.bandwidth_**2).sum(1))
    if isinstance(est, bg.QDA):
        return np.argmin([direction @ np.linalg.solve(c, direction) for c in est.covariance_])
    P = np.linalg.inv(est.covariance_)  # LDA: the linear term decides
    return np.argmax(est.means_ @ P @ direction)


@pytest.mark.parametrize("size", [1e154, 1e200, 1e300, 1.7e308])
@pytest.mark.parametrize("name", ["LDA", "QDA", "GaussianNB", "KernelNB"])
def test_far_rows_get_the_model_answer(iris, name, size):
    X, y = iris
    est = REAL[name](method="map").fit(X, y)
    directions = np.array([[1, 0, 0, 0], [0, -1, 0, 0], [0.3, 0.2, -1, 0.5], [-1, -1, 1, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning, no class-prior fallback
        proba = est.predict_proba(directions * size)
        joint = est.predict_joint_log_proba(directions * size)
    assert np.all(np.isfinite(proba)) and not np.any(np.isnan(joint))
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-12)
    expected = [_limit_class(est, d) for d in directions]
    np.testing.assert_array_equal(proba.argmax(1), expected)


@pytest.mark.parametrize("name", CONJUGATE)
def test_far_rows_conjugate_are_finite(iris, name):
    X, y = iris
    est = REAL[name](method="conjugate", draws=20, chains=1, random_state=0).fit(X, y)
    rows = np.array([[1e300, 0, 0, 0], [-1.7e308, 1e308, 3, 1], [1e160, 1e160, 1e160, 1e160]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        joint = est.predict_joint_log_proba(rows)
        proba = est.predict_proba(rows)
    assert np.all(np.isfinite(joint))  # Student-t tails: finite log-densities
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-12)


@pytest.mark.parametrize(("name", "method"),
                         [(n, m) for n in REAL for m in ("mle", "map", "conjugate", "draws")
                          if not (m in ("conjugate", "draws") and n not in CONJUGATE)])
def test_far_path_equals_the_direct_evaluation(iris, monkeypatch, name, method):
    """With the far threshold lowered, rows a few spreads away take the split form
    t u + z_N: it must give the same numbers as the direct evaluation. ``"draws"``: a
    conjugate fit predicting as method="mcmc" does, by the mixture over its draws."""
    X, y = iris
    est = REAL[name](method="conjugate" if method == "draws" else method, draws=20,
                     chains=1, random_state=0).fit(X, y)
    if method == "draws":
        est.method = "mcmc"
    rng = np.random.default_rng(1)
    rows = X[::7] + rng.normal(scale=3.0, size=(22, 4))
    direct = est.predict_joint_log_proba(rows), est.predict_proba(rows)
    if est._is_posterior:
        direct += (est.predict_proba_draws(rows).values,)
    monkeypatch.setattr(frame_module, "FAR", 2.0)
    far = est.predict_joint_log_proba(rows), est.predict_proba(rows)
    if est._is_posterior:
        far += (est.predict_proba_draws(rows).values,)
    assert frame_module.split(est._frame if est._frame is not None else
                              frame_module.identity(4, np.ones(4, bool)), rows,
                              rows).rows.size > 10
    np.testing.assert_allclose(far[0], direct[0], rtol=1e-10)
    for got, want in zip(far[1:], direct[1:], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-12)


# --------------------------------------------------- values near 1e308
@pytest.mark.parametrize("method", ["mle", "map", "conjugate"])
@pytest.mark.parametrize("name", list(REAL))
def test_values_near_float_max(iris, name, method):
    if method == "conjugate" and name not in CONJUGATE:
        pytest.skip("no conjugate posterior")
    X, y = iris
    Xb = X * 2e307  # values up to 1.6e308
    Xb[:, 1] = -Xb[:, 1]
    est = REAL[name](method=method, draws=20, chains=1, random_state=0)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        est.fit(Xb, y)
    ref = REAL[name](method=method, draws=20, chains=1, random_state=0).fit(X * [1, -1, 1, 1], y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        proba = est.predict_proba(Xb)
    np.testing.assert_allclose(proba, ref.predict_proba(X * [1, -1, 1, 1]), rtol=1e-8,
                               atol=1e-12)
    Xs, _ = est.sample(200, random_state=0)
    assert np.all(np.isfinite(Xs))


@pytest.mark.parametrize("factor", [1e300, 1e-300])
@pytest.mark.parametrize("name", ["QDA", "GaussianNB"])
def test_attributes_out_of_float_range_warn(iris, name, factor):
    X, y = iris
    with pytest.warns(bg.DataWarning, match="(overflow|underflow) float64 in the units of X"):
        est = REAL[name]().fit(X * factor, y)
    ref = REAL[name]().fit(X, y)
    np.testing.assert_allclose(est.predict_proba(X * factor), ref.predict_proba(X),
                               rtol=1e-8, atol=1e-14)


def test_outlier_beyond_float_statistics_names_the_column(iris):
    X, y = iris
    X = X.copy()
    X[0, 2] = 1e300  # 1e300 interquartile ranges from the rest
    with pytest.raises(ValueError, match=r"feature\(s\) \[2\]"):
        bg.QDA().fit(X, y)


@pytest.mark.parametrize("name", ["LDA", "QDA", "GaussianNB"])
def test_sample_is_finite_at_1e307(iris, name):
    X, y = iris
    Xb = X.copy()
    Xb[:, 2] = X[:, 2] * 1e307
    est = REAL[name]().fit(Xb, y)
    Xs, _ = est.sample(500, random_state=0)
    assert np.all(np.isfinite(Xs))
    assert abs(np.log10(np.abs(Xs[:, 2]).max()) - 307.8) < 0.5


# ---------------------------------------------- constant features, tiny data
@pytest.mark.parametrize("values", [[0.1, 0.7, 1.3], [1e9 + 0.1, 1e9 + 0.7, 1e9 + 1.3],
                                    [3.0, 3.0, 3.0], [1e-200, 2e-200, 3e-200]])
@pytest.mark.parametrize("method", ["map", "conjugate"])
@pytest.mark.parametrize("name", CONJUGATE)
def test_feature_constant_within_classes_needs_no_mle_advice(iris, name, method, values):
    X, y = iris
    X = X.copy()
    X[:, 1] = np.asarray(values)[y]
    est = REAL[name](method=method, draws=20, chains=1, random_state=0).fit(X, y)
    proba = est.predict_proba(X)
    assert np.all(np.isfinite(proba))
    est.sample(10, random_state=0)


@pytest.mark.parametrize("name", CONJUGATE)
def test_mle_constant_feature_message(iris, name):
    X, y = iris
    X = X.copy()
    X[:, 1] = np.array([0.1, 0.7, 1.3])[y]  # not dyadic: the class means round
    with pytest.raises(ValueError, match=r"feature 1 .*constant.*method='map'"):
        REAL[name](method="mle").fit(X, y)


@pytest.mark.parametrize("method", ["map", "conjugate"])
@pytest.mark.parametrize("d", [5, 10, 50])
def test_lda_one_row_per_class_more_features_than_rows(method, d):
    rng = np.random.default_rng(0)
    for n_classes in (2, 3):
        X = rng.normal(size=(n_classes, d))
        y = np.arange(n_classes)
        est = bg.LDA(method=method, draws=20, chains=1, random_state=0).fit(X, y)
        assert np.all(np.isfinite(est.transform(X)))
        np.testing.assert_array_equal(est.predict(X), y)


# ------------------------------------------------------- weight invariance
@pytest.mark.parametrize("factor", [1e-300, 1e300])
@pytest.mark.parametrize("name", list(REAL))
def test_common_weight_factor_leaves_the_mle_unchanged(iris, name, factor):
    X, y = iris
    w = np.random.default_rng(0).uniform(0.5, 3.0, y.size)
    ref = REAL[name](method="mle").fit(X, y, sample_weight=w)
    est = REAL[name](method="mle").fit(X, y, sample_weight=w * factor)
    attrs = [a for a in ("theta_", "var_", "means_", "covariance_", "bandwidth_",
                         "class_prior_") if hasattr(ref, a)]
    attrs += [a for a in vars(ref) if a.startswith(("gaussian0_", "kernel1_"))
              and a.endswith("_") and a.count("_") >= 2]
    for a in attrs:
        np.testing.assert_allclose(np.asarray(getattr(est, a)), np.asarray(getattr(ref, a)),
                                   rtol=1e-10, err_msg=a)
    np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), rtol=1e-9,
                               atol=1e-14)


# ---------------------------------------------------- posterior in user units
def test_idata_is_in_user_units_and_round_trips(iris, tmp_path):
    X, y = np.round(iris[0] * 10), iris[1]  # integers: the transform below is exact
    # positive scales: a negative one mirrors the draws (same distribution, other draws)
    a, b = np.array([1e-150, 3.0, 1e6, 1.0]), np.array([0.0, 1e12, 0.0, -5e9])
    ref = bg.GaussianNB(method="conjugate", draws=50, chains=2, random_state=0).fit(X, y)
    est = bg.GaussianNB(method="conjugate", draws=50, chains=2, random_state=0)
    est.fit(a * X + b, y)
    mu = est.idata_.posterior["mu"].values
    np.testing.assert_allclose(mu, a * ref.idata_.posterior["mu"].values + b, rtol=1e-9)
    var = est.idata_.posterior["var"].values
    np.testing.assert_allclose(var, a**2 * ref.idata_.posterior["var"].values, rtol=1e-9)
    np.testing.assert_allclose(est.theta_, mu.mean(axis=(0, 1)), rtol=1e-12)
    shift = -np.sum(np.log(np.abs(a)))
    np.testing.assert_allclose(est.idata_.log_likelihood["xy"].values,
                               ref.idata_.log_likelihood["xy"].values + shift, rtol=1e-11)
    path = est.save(tmp_path / "gnb.nc")
    loaded = bg.load(path)
    np.testing.assert_array_equal(loaded.predict_proba(a * X + b), est.predict_proba(a * X + b))


@pytest.mark.parametrize("name", ["QDA", "GaussianNB", "MixedNB-conjugate"])
def test_posterior_predictive_is_in_user_units(iris, name):
    X, y = iris
    a, b = np.array([1e6, 1e-6, 1.0, 3.0]), np.array([1e9, 0.0, -1e4, 0.0])
    Xt = a * X + b
    if name == "MixedNB-conjugate":
        est = bg.MixedNB(families=[("gaussian", [0, 1, 2, 3])], method="conjugate",
                         draws=30, chains=2, random_state=0)
    else:
        est = REAL[name](method="conjugate", draws=30, chains=2, random_state=0)
    est.fit(Xt, y).sample_posterior_predictive(random_state=0)
    rep = est.idata_.posterior_predictive["x"].values.reshape(-1, 4)
    z = (rep.mean(0) - Xt.mean(0)) / Xt.std(0)
    assert np.all(np.abs(z) < 0.2)
    np.testing.assert_allclose(rep.std(0) / Xt.std(0), 1.0, atol=0.2)


def test_kernel_prior_predictive_is_in_user_units(iris):
    X, y = iris
    Xt = X * 1e6 + 1e9
    est = bg.KernelNB().fit(Xt, y)
    est.sample_prior_predictive(draws=5, random_state=0, X=Xt, y=y)
    rep = est.idata_.prior_predictive["x"].values.reshape(-1, 4)
    assert np.all(np.abs(np.median(rep, 0) - np.median(Xt, 0)) < 3 * Xt.std(0))
