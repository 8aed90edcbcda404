"""Labels of every dtype, overflowing sample weights and loss matrices."""

import numpy as np
import pandas as pd
import pytest

import bayesgen as bg
from bayesgen.data.validation import WEIGHT_TOTAL_MAX, encode_labels
from tests.conftest import CLASSIFIERS, make_data


@pytest.fixture(scope="module")
def real():
    return make_data("real", n_per_class=15)


def _same_fit(X, y_codes, labels):
    """Fit on integer codes and on ``labels[y_codes]``: same probabilities, labels mapped."""
    ref = bg.GaussianNB().fit(X, y_codes)
    clf = bg.GaussianNB().fit(X, labels[y_codes])
    order = np.argsort(labels)  # classes_ are sorted: column k is labels[order[k]]
    np.testing.assert_array_equal(clf.classes_, labels[order])
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X)[:, order], rtol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), labels[ref.predict(X)])
    return clf


@pytest.mark.parametrize(
    "labels",
    [
        np.array([2**63, 2**63 + 1, 2**63 + 7], dtype=np.uint64),  # short range: counted
        np.array([2**63, 2**64 - 2, 2**64 - 1], dtype=np.uint64),  # long range: sorted
        np.array([0, 2**63, 2**64 - 1], dtype=np.uint64),
        np.array([-128, 0, 127], dtype=np.int8),  # offsets up to 255 overflow int8
        np.array([-(2**63), -(2**63) + 1, 2**63 - 1], dtype=np.int64),
        np.array([2**63 - 3, 2**63 - 2, 2**63 - 1], dtype=np.int64),
        np.array([0.0, 1.0, 2.0]),
        np.array([-3.0, 5.0, 9.0]),
        np.array(["a", "b", "c"]),
        np.array(["a", "b", "c"], dtype=object),
        np.array([3, 1, 2], dtype=object),
        np.array([3.0, 1, 2], dtype=object),
    ],
    ids=lambda a: f"{a.dtype}:{a.tolist()}",
)
def test_labels_of_every_dtype(real, labels):
    X, y = real
    _same_fit(X, y, labels)


def test_bool_labels(real):
    X, y = real
    y2 = y >= 1
    clf = bg.GaussianNB().fit(X, y2)
    np.testing.assert_array_equal(clf.classes_, [False, True])
    assert clf.predict(X).dtype == bool


def test_encode_labels_round_trips():
    rng = np.random.default_rng(0)
    for y in (
        rng.integers(2**63, 2**63 + 50, size=200, dtype=np.uint64),
        rng.integers(-128, 128, size=500).astype(np.int8),
        rng.choice(np.array([-(2**63), 2**63 - 1]), size=20),
    ):
        classes, index = encode_labels(y)
        np.testing.assert_array_equal(classes[index], y)
        np.testing.assert_array_equal(classes, np.unique(y))
        assert classes.dtype == y.dtype


@pytest.mark.parametrize(
    "y",
    [
        np.array(["a", 1, "a", 1], dtype=object),
        np.array([1.5, "b", 1.5, "b"], dtype=object),
        pd.Series(["x", 2, 2, "x"]),
    ],
    ids=["str-int", "float-str", "pandas"],
)
def test_mixed_string_and_number_labels(y):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match="y mixes strings and numbers"):
        bg.GaussianNB().fit(X, y)


def test_bytes_labels_are_refused_with_a_value_error(real):
    X, y = real
    with pytest.raises(ValueError, match="bytes"):
        bg.GaussianNB().fit(X, np.array([b"x", b"y", b"z"])[y])


def test_continuous_labels_are_refused_as_in_scikit_learn(real):
    X, y = real
    with pytest.raises(ValueError, match="Unknown label type"):
        bg.GaussianNB().fit(X, y + 0.5 * (y == 2))


# --------------------------------------------------------------- sample weights
HUGE = 1e307  # 120 rows: the total overflows float64


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_mle_ignores_a_common_factor_even_beyond_float64(name):
    factory, kind = CLASSIFIERS[name]
    X, y = make_data(kind)
    w = np.full(len(y), HUGE)
    with np.errstate(over="ignore"):
        assert not np.isfinite(w.sum())
    clf = factory(method="mle").fit(X, y, sample_weight=w)
    ref = factory(method="mle").fit(X, y, sample_weight=np.full(len(y), 3.0))
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(clf.class_prior_, ref.class_prior_, rtol=1e-12)
    if name != "KernelNB":  # its leave-one-out leaves one unit of weight out
        np.testing.assert_allclose(proba, ref.predict_proba(X), rtol=1e-9, atol=1e-12)
    # the rescaled total weight is between n/2 and n
    assert len(y) / 2 < clf.class_count_.sum() <= len(y)


def test_mle_rescales_unequal_huge_weights_exactly():
    X, y = make_data("real")
    w = np.where(np.arange(len(y)) % 2, 3.0, 1.0)
    clf = bg.GaussianNB(method="mle").fit(X, y, sample_weight=w * 2.0**1000)
    ref = bg.GaussianNB(method="mle").fit(X, y, sample_weight=w)
    np.testing.assert_allclose(clf.var_, ref.var_, rtol=1e-12)
    np.testing.assert_allclose(clf.theta_, ref.theta_, rtol=1e-12)


def test_mle_keeps_ordinary_weights():
    X, y = make_data("real")
    w = np.full(len(y), 2.0)
    clf = bg.GaussianNB(method="mle").fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(clf.class_count_, [80.0, 80.0, 80.0])
    assert WEIGHT_TOTAL_MAX > 1e30


@pytest.mark.parametrize("method", ["map", "conjugate"])
def test_overflowing_total_weight_is_an_error_for_other_methods(method):
    X, y = make_data("real")
    with pytest.raises(ValueError, match="sample_weight sums to more than the float64 range"):
        bg.GaussianNB(method=method).fit(X, y, sample_weight=np.full(len(y), HUGE))


def test_huge_weights_on_large_features_do_not_overflow():
    # the Gaussian statistics live in the internal (standardised) frame, so weights
    # of 1e300 on features of size 1e5 stay finite; with the prior swamped, MAP is the MLE
    X, y = make_data("real")
    w = np.full(len(y), 1e300)
    clf = bg.GaussianNB(method="map").fit(X * 1e5, y, sample_weight=w)
    ref = bg.GaussianNB(method="mle").fit(X * 1e5, y)
    np.testing.assert_allclose(clf.theta_, ref.theta_, rtol=1e-10)
    np.testing.assert_allclose(clf.var_, ref.var_, rtol=1e-10)


def test_overflowing_statistics_are_an_error():
    X, y = make_data("count")
    w = np.full(len(y), 1e300)  # total finite, weighted counts overflow
    message = "overflow"
    with np.errstate(over="ignore", invalid="ignore"), pytest.raises(ValueError, match=message):
        bg.PoissonNB(method="map").fit(X * 1e10, y, sample_weight=w)


def test_non_numeric_sample_weight_is_named():
    X, y = make_data("real")
    with pytest.raises(ValueError, match="sample_weight must be numbers"):
        bg.GaussianNB().fit(X, y, sample_weight=["a"] * len(y))


# ----------------------------------------------------------------------- loss
@pytest.mark.parametrize(
    ("loss", "message"),
    [
        ([[0, 1, 1], [1, 0, -1], [1, 1, 0]], r"loss must be non-negative.*loss\[1, 2\] = -1"),
        ([[0, 1, 1], [1, 0, np.nan], [1, 1, 0]], "loss contains NaN or infinity"),
        ([[0, 1], [1, 0]], "loss must be a 3 x 3 matrix"),
        ([["a"] * 3] * 3, "loss must be a K x K matrix of numbers"),
    ],
)
def test_bad_loss(loss, message):
    X, y = make_data("real")
    with pytest.raises(ValueError, match=message):
        bg.GaussianNB(loss=loss).fit(X, y)


def test_zero_loss_row_shift_keeps_decisions():
    X, y = make_data("real")
    loss = np.array([[0, 1, 1], [5, 0, 5], [1, 1, 0]], dtype=float)
    a = bg.GaussianNB(loss=loss).fit(X, y).predict(X)
    b = bg.GaussianNB(loss=loss + np.array([[2.0], [0.0], [7.0]])).fit(X, y).predict(X)
    np.testing.assert_array_equal(a, b)
