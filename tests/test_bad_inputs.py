"""Regression tests for the last bad inputs found by fuzzing: each case gets a clear
``ValueError`` (or works) instead of a raw NumPy error, a MemoryError or a NaN."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bayesgen as bg


@pytest.mark.parametrize("m", [10**9, 10**12, 10**18, 1e18, 10**19, 1e300, [5, 10**12]])
def test_huge_min_categories_is_refused_before_allocating(m):
    X = np.random.default_rng(0).integers(0, 3, (20, 2))
    y = np.repeat([0, 1], 10)
    with pytest.raises(ValueError, match=r"min_categories=.* would need category tables of "
                                         r"about .* GiB .* more than this machine's"):
        bg.CategoricalNB(min_categories=m).fit(X, y)


def test_moderate_min_categories_still_fit():
    X = np.random.default_rng(0).integers(0, 3, (20, 2))
    y = np.repeat([0, 1], 10)
    clf = bg.CategoricalNB(min_categories=[4, 1000]).fit(X, y)
    np.testing.assert_array_equal(clf.n_categories_, [4, 1000])
    assert np.allclose(clf.predict_proba(X).sum(axis=1), 1.0)


# --- huge scales (issue 26, items 1-2) ----------------------------------------------------
GAUSSIAN = [bg.LDA, bg.QDA, bg.GaussianNB]
POINT_AND_CONJUGATE = ["mle", "map", "conjugate"]


def _iris():
    from sklearn.datasets import load_iris

    return load_iris(return_X_y=True)


def _fit(cls, method, X, y, **kw):
    """Fit, allowing only the DataWarning that a fitted attribute overflows in X's units
    (a covariance of values at 1e300 is 1e600: not representable, though every
    probability is)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", ".*the fitted attribute", bg.DataWarning)
        return cls(method=method, random_state=0).fit(X, y, **kw)


@pytest.mark.parametrize("method", POINT_AND_CONJUGATE)
@pytest.mark.parametrize("cls", GAUSSIAN, ids=lambda c: c.__name__)
@pytest.mark.parametrize("scale", [1e300, -1e300, 1e-300])
def test_huge_and_tiny_scales_give_the_unit_probabilities(cls, method, scale):
    X, y = _iris()
    ref = _fit(cls, method, X, y).predict_proba(X)
    clf = _fit(cls, method, X * scale, y)
    np.testing.assert_allclose(clf.predict_proba(X * scale), ref, atol=1e-9)
    assert np.isfinite(clf.decision_function(X * scale)).all()


@pytest.mark.parametrize("method", POINT_AND_CONJUGATE)
@pytest.mark.parametrize("cls", GAUSSIAN, ids=lambda c: c.__name__)
def test_a_column_near_the_float64_limit_has_finite_means(cls, method):
    X, y = _iris()
    Xs = X.copy()
    Xs[:, 1] *= 1e307
    ref, clf = _fit(cls, method, X, y), _fit(cls, method, Xs, y)
    name = "theta_" if cls is bg.GaussianNB else "means_"
    means = getattr(clf, name)
    assert np.isfinite(means).all()
    np.testing.assert_allclose(means[:, 1], getattr(ref, name)[:, 1] * 1e307, rtol=1e-9)
    np.testing.assert_allclose(clf.predict_proba(Xs), ref.predict_proba(X), atol=1e-9)


@pytest.mark.parametrize("method", POINT_AND_CONJUGATE)
@pytest.mark.parametrize("cls", GAUSSIAN, ids=lambda c: c.__name__)
def test_one_value_at_the_float64_limit_is_a_clear_error(cls, method):
    X, y = _iris()
    X[5, 2] = 1.5e308
    with pytest.raises(ValueError, match=rf"^{cls.__name__}: feature\(s\) \[2\] have training "
                                         r"values more than 1e120 robust spreads"):
        cls(method=method).fit(X, y)


@pytest.mark.parametrize("method", POINT_AND_CONJUGATE)
@pytest.mark.parametrize("cls", GAUSSIAN, ids=lambda c: c.__name__)
def test_whole_data_at_1e307_fits_or_names_the_problem(cls, method):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 3))
    X = X / np.abs(X).max() * 1e307
    y = np.arange(30) % 3
    clf = _fit(cls, method, X, y)
    np.testing.assert_allclose(clf.predict_proba(X), _fit(cls, method, X / 1e307, y)
                               .predict_proba(X / 1e307), atol=1e-9)


# --- extreme sample weights (issue 26, item 3) --------------------------------------------
def _mixed_weights(n: int, pattern: str) -> np.ndarray:
    w = np.ones(n)
    if pattern == "alternating":
        w[::2], w[1::2] = 1e300, 1e-300
    else:  # 1e300 on every 7th row, 1 elsewhere
        w[::7] = 1e300
    return w


@pytest.mark.parametrize("method", ["map", "conjugate"])
@pytest.mark.parametrize("cls", GAUSSIAN, ids=lambda c: c.__name__)
def test_mixed_extreme_weights_give_the_heavy_rows_mle(cls, method):
    """Weights 1e300 against 1e-300 are 1e300 replicated copies of the heavy rows: the
    prior's pull vanishes and the posterior concentrates on the MLE of those rows."""
    X, y = _iris()
    w = _mixed_weights(len(y), "alternating")
    clf = cls(method=method, random_state=0).fit(X, y, sample_weight=w)
    ref = cls(method="mle").fit(X[::2], y[::2])
    for f in ("predict_proba", "decision_function", "predict_log_proba"):
        got, want = getattr(clf, f)(X), getattr(ref, f)(X)
        assert np.isfinite(got).all(), f
        if f == "decision_function":  # defined up to terms equal across classes
            got, want = got - got.mean(axis=1)[:, None], want - want.mean(axis=1)[:, None]
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(clf.score_samples(X), ref.score_samples(X), rtol=1e-9)
    zero = cls(method=method, random_state=0).fit(X, y, sample_weight=np.where(w > 1, w, 0))
    np.testing.assert_allclose(clf.predict_proba(X), zero.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize("method", ["map", "conjugate"])
@pytest.mark.parametrize("cls", GAUSSIAN, ids=lambda c: c.__name__)
def test_weights_1e300_on_every_seventh_row(cls, method):
    X, y = _iris()
    w = _mixed_weights(len(y), "every7")
    clf = cls(method=method, random_state=0).fit(X, y, sample_weight=w)
    heavy = w > 1
    ref = cls(method="mle").fit(X[heavy], y[heavy])
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X), atol=1e-9)


def test_a_class_of_tiny_weight_keeps_a_finite_log_prior():
    """pi_1 = 3e-300 / 3e300 underflows float64; its log (-1381.6) does not."""
    rng = np.random.default_rng(16)
    X, y = rng.normal(size=(6, 2)), np.arange(6) % 2
    w = np.where(y == 0, 1e300, 1e-300)
    clf = bg.LDA(method="map").fit(X, y, sample_weight=w)
    np.testing.assert_allclose(clf.class_log_prior_, [0.0, -600 * np.log(10)], atol=1e-9)
    assert np.isfinite(clf.decision_function(X)).all()


@pytest.mark.parametrize("method", ["map", "conjugate"])
@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA], ids=lambda c: c.__name__)
def test_weight_on_fewer_rows_than_dimensions_is_named(cls, method):
    """Two rows of weight 1e300 per class in 3 dimensions: the posterior scale is
    Psi0 + S with S ~1e300 in one direction, singular to float64 although Psi0 keeps it
    positive definite in exact arithmetic. A clear error at fit, not at predict."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.arange(40) % 2
    w = np.ones(40)
    w[[0, 1, 2, 3]] = 1e300
    with pytest.raises(ValueError, match=r"posterior scale matrix .* singular to float64 "
                                         r"precision .* Rescale sample_weight"):
        cls(method=method).fit(X, y, sample_weight=w)


# --- the zero-likelihood warning names its real cause (issue 26, item 14) ----------------
_UNSEEN = np.array([[3, 0, 0, 0], [1, 2, 0, 0], [2, 0, 1, 0], [0, 4, 1, 0]], dtype=float)


@pytest.mark.parametrize("cls", [bg.MultinomialNB, bg.BernoulliNB, bg.CategoricalNB,
                                 bg.PoissonNB], ids=lambda c: c.__name__)
def test_map_with_alpha_1_is_told_to_raise_alpha(cls):
    """alpha=1 (what a scikit-learn user copies) is the concentration of no smoothing:
    the advice is to raise alpha, not to "use method='map'", which is in use."""
    X = _UNSEEN if cls is not bg.BernoulliNB else (_UNSEEN > 0).astype(float)
    kw = {"min_categories": 5} if cls is bg.CategoricalNB else {}  # code 1 declared, unseen
    clf = cls(method="map", alpha=1.0, **kw).fit(X, [0, 0, 1, 1])
    with pytest.warns(bg.DataWarning, match="zero likelihood under every class") as record:
        clf.predict_proba([[1, 0, 0, 1]])
    message = str(record[0].message)
    assert "raise alpha (alpha=2 is Laplace smoothing" in message
    assert "use method='map'" not in message


def test_mle_is_told_to_use_map():
    clf = bg.MultinomialNB(method="mle").fit(_UNSEEN, [0, 0, 1, 1])
    with pytest.warns(bg.DataWarning, match=r"method='mle' gives probability 0 .* use "
                                            r"method='map'"):
        clf.predict_proba([[1, 0, 0, 1]])


@pytest.mark.parametrize("kw", [{"method": "map"}, {"method": "map", "alpha": 1.5},
                                {"method": "conjugate", "alpha": 1.0}])
def test_smoothed_fits_give_no_zero_likelihood_warning(kw):
    clf = bg.MultinomialNB(random_state=0, **kw).fit(_UNSEEN, [0, 0, 1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isfinite(clf.predict_log_proba([[1, 0, 0, 1]])).all()


# --- KernelNB sample() after a fit with missing entries (issue 26, item 7) ---------------
@pytest.mark.parametrize("method", ["mle", "map"])
def test_kernel_sample_after_missing_training_entries_has_no_nan(method):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)).astype(object)
    X[:, 2] = X[:, 2] + 10.0
    y = np.arange(40) % 2
    X[3, 1] = None  # missing entries as a user's object array has them
    X[10, 0] = None
    X[11, 2] = None
    clf = bg.KernelNB(method=method).fit(X, y)
    Xs, ys = clf.sample(400, random_state=0)
    assert not np.isnan(Xs).any()
    assert np.all(np.abs(Xs.mean(axis=0) - [0.0, 0.0, 10.0]) < 0.5)
    mixed = bg.MixedNB(method=method, families=[("kernel", [0, 2]), ("gaussian", [1])])
    Xm, _ = mixed.fit(X, y).sample(400, random_state=0)
    assert not np.isnan(np.asarray(Xm, dtype=float)).any()


# --- a fuzz-like property over weights and scales (Hypothesis, the "ci" profile) ---------
@settings(deadline=None)
@given(
    exponents=st.lists(st.integers(-300, 300), min_size=24, max_size=24),
    scale_exponent=st.integers(-300, 300),
    name=st.sampled_from(["LDA", "QDA", "GaussianNB"]),
    method=st.sampled_from(["mle", "map", "conjugate"]),
    seed=st.integers(0, 2**16),
)
def test_extreme_weights_and_scales_work_or_name_the_problem(exponents, scale_exponent, name,
                                                             method, seed):
    """Weights 10^-300..10^300 and any scale 10^-300..10^300: a fit and finite,
    normalised probabilities, or a ValueError that starts with the estimator's name (no
    raw NumPy error, FloatingPointError or NaN)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(24, 3)) * 10.0**scale_exponent
    y = np.arange(24) % 3
    w = 10.0 ** np.asarray(exponents, dtype=float)
    cls = getattr(bg, name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bg.DataWarning)
            clf = cls(method=method, draws=20, chains=1, random_state=0).fit(X, y,
                                                                             sample_weight=w)
    except ValueError as err:
        assert str(err).startswith(name), str(err)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow, no fallback to the class prior
        proba = clf.predict_proba(X)
        scores = clf.decision_function(X)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    assert np.all(np.isfinite(scores))
