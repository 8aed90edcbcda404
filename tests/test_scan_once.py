"""One pass per array for the checks of a fit or a prediction
(:func:`bayesgen.data.missing.scan_scope`), the frame's order statistics
(:func:`bayesgen.data.frame._order_stats`): the same values as NumPy's weighted quantiles,
and no stale answer once the call is over; the estimators' ``n_jobs`` threads."""

import numpy as np
import pytest

import bayesgen as bg
from bayesgen.data import frame, missing

_QUARTILES = [0.25, 0.5, 0.75]


def _reference_order_stats(V, w):
    """(q1, median, q3, min, max) per column over the finite entries, column by column
    with NumPy's weighted inverted-CDF quantiles (the definition the frame follows)."""
    out = np.full((5, V.shape[1]), np.nan)
    for j in range(V.shape[1]):
        keep = np.isfinite(V[:, j])
        v = V[keep, j]
        if v.size:
            out[:3, j] = np.quantile(v, _QUARTILES, method="inverted_cdf", weights=w[keep])
            out[3, j], out[4, j] = v.min(), v.max()
    return out


@pytest.mark.parametrize("seed", range(40))
def test_order_stats_equal_numpys_weighted_quantiles(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 400)), int(rng.integers(1, 6))
    X = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-8, 9, size=d)
    X += rng.choice([0.0, 1.7e9, -3e4], size=d)  # offsets like timestamps
    if seed % 3 == 0:
        X = np.round(X)  # ties
    if seed % 5 == 0:
        X[:, 0] = 7.0  # a constant column
    if seed % 4 == 1:
        X = np.asfortranarray(X)
    ones = np.ones(n)
    expected = _reference_order_stats(X, ones)
    np.testing.assert_array_equal(frame._order_stats(X, ones), expected)
    np.testing.assert_array_equal(frame._order_stats(X, None), expected)
    np.testing.assert_array_equal(frame._order_stats(X, np.full(n, 3.0)), expected)
    w = rng.integers(1, 4, size=n).astype(float)  # integer weights: repeated rows
    np.testing.assert_array_equal(frame._order_stats(X, w), _reference_order_stats(X, w))
    np.testing.assert_array_equal(frame._order_stats(X, w),
                                  frame._order_stats(np.repeat(X, w.astype(int), axis=0), None))


def test_order_stats_with_nan_skip_it_column_by_column():
    X = np.arange(20.0).reshape(10, 2)
    X[3, 1] = np.nan
    X[:, 0] = np.where(np.arange(10) < 9, np.nan, X[:, 0])  # one observed value
    out = frame._order_stats(X, np.ones(10))
    np.testing.assert_array_equal(out, _reference_order_stats(X, np.ones(10)))
    assert np.all(out[:, 0] == 18.0)
    assert np.all(np.isnan(frame._order_stats(np.full((4, 1), np.nan), None)))


def test_order_stats_of_huge_values_warn_nothing():
    """The values near the float limit (no sum of the sample is formed)."""
    import warnings

    X = np.array([[1.7e308], [-1.7e308], [1.6e308], [1.5e308]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = frame._order_stats(X, np.ones(4))
    np.testing.assert_array_equal(out, _reference_order_stats(X, np.ones(4)))


def test_scope_answers_from_the_first_scan_only_inside_it():
    X = np.ones((5, 3))
    with missing.scan_scope():
        assert not missing.has_missing(X)  # scanned and recorded complete
        X[0, 0] = np.nan  # (bayesgen's own code never does this inside a scope)
        assert not missing.has_missing(X)  # the recorded answer, no second pass
        Y = X.copy()
        assert missing.has_missing(Y)  # another object: scanned
    assert missing.has_missing(X)  # outside the scope: scanned again
    missing.extremes(np.ones(3))  # no scope: nothing recorded, nothing kept
    assert missing._SCANNED.get() is None


def test_within_reports_the_extent_of_the_observed_entries():
    Z = np.array([[1.0, -3.0], [2.0, 0.5]])
    assert frame.within(Z) == 3.0
    Z[1, 1] = np.nan
    assert frame.within(Z) == 3.0
    Z[0, 1] = np.nan
    assert frame.within(Z) == 2.0
    assert frame.within(np.full((2, 2), np.nan)) == 0.0
    assert frame.within(np.zeros((0, 3))) == 0.0


@pytest.mark.parametrize("Estimator", [bg.LDA, bg.QDA, bg.GaussianNB])
def test_nan_written_in_place_after_fit_is_seen_at_predict(Estimator):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3)) + 1e9  # a frame with an offset
    y = np.repeat([0, 1], 100)
    X[y == 1] += 1.0
    clf = Estimator(method="map").fit(X, y)
    first = clf.predict_proba(X)
    X[0, 1] = np.nan  # the user's own array, edited in place between calls
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba, clf.predict_proba(X.copy()), rtol=0, atol=0)
    assert not np.allclose(proba[0], first[0], rtol=1e-12, atol=0)  # integrated out
    np.testing.assert_allclose(proba[1:], first[1:], rtol=1e-12, atol=1e-15)  # other path


@pytest.mark.parametrize("Estimator", [bg.LDA, bg.QDA, bg.GaussianNB, bg.KernelNB])
def test_infinity_is_a_named_error_at_fit_and_predict(Estimator):
    X = np.random.default_rng(1).standard_normal((40, 2))
    y = np.repeat([0, 1], 20)
    bad = X.copy()
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match=f"infinity; {Estimator.__name__}"):
        Estimator().fit(bad, y)
    clf = Estimator().fit(X, y)
    with pytest.raises(ValueError, match=f"infinity; {Estimator.__name__}"):
        clf.predict_proba(bad)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("Estimator", [bg.LDA, bg.QDA, bg.GaussianNB, bg.KernelNB])
def test_fit_and_predict_leave_the_users_array_untouched(order, Estimator):
    """The frame's order statistics partition a copy, whatever the memory layout of X
    (a Fortran-ordered X transposes to a C-contiguous view, which must not be reused)."""
    rng = np.random.default_rng(2)
    X = np.asarray(rng.standard_normal((300, 3)) * [1.0, 50.0, 1e-3] + [0.0, 1e6, 5.0],
                   order=order)
    y = np.repeat([0, 1, 2], 100)
    before = X.copy()
    clf = Estimator(method="map").fit(X, y)
    np.testing.assert_array_equal(X, before)
    clf.predict_proba(X)
    np.testing.assert_array_equal(X, before)
    reference = Estimator(method="map").fit(np.ascontiguousarray(before), y)
    np.testing.assert_allclose(clf.predict_proba(X), reference.predict_proba(before),
                               rtol=1e-12, atol=1e-15)


def test_normalised_proba_keeps_its_input_unless_told():
    from bayesgen.utils.logspace import normalised_proba

    scores = np.random.default_rng(4).normal(size=(50_000, 3)) * 20
    before = scores.copy()
    prior = np.log(np.full(3, 1 / 3))
    kept = normalised_proba(scores, prior, "T")
    np.testing.assert_array_equal(scores, before)
    reused = normalised_proba(scores, prior, "T", overwrite=True)
    assert reused is scores
    np.testing.assert_array_equal(reused, kept)  # row blocks: the same arithmetic


# the test forks on purpose; Python warns because other tests of the run imported JAX
@pytest.mark.filterwarnings("ignore:os.fork\\(\\) was called:RuntimeWarning")
def test_a_forked_child_fits_after_the_parent_used_threads():
    """No thread of bayesgen outlives a call (each parallel pass has its own pool), so
    a child process forked after the parent's parallel fit (e.g. by
    ``multiprocessing`` with the fork start method) fits on threads of its own instead
    of waiting for threads that do not exist in it."""
    import multiprocessing
    import threading

    rng = np.random.default_rng(5)
    X = rng.standard_normal((120_000, 20))  # above the parallel size (2**21 entries)
    y = rng.integers(0, 3, size=X.shape[0])
    before = threading.active_count()
    parent = bg.LDA(n_jobs=2).fit(X, y).predict_proba(X[:5])
    assert threading.active_count() == before  # the pass's threads are gone
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        child = pool.apply_async(_fit_and_predict, (X, y)).get(timeout=120)
    np.testing.assert_array_equal(child, parent)


def _fit_and_predict(X, y):
    return bg.LDA(n_jobs=2).fit(X, y).predict_proba(X[:5])


@pytest.mark.parametrize("shape", [(7,), (1, 1), (300, 4), (5000, 30), (80_000, 30)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_extremes_equal_numpys_max_and_min(shape, order):
    """One blocked pass gives exactly X.max() / X.min(), NaN propagating (every block
    size, both memory orders)."""
    rng = np.random.default_rng(len(shape) + shape[0])
    X = np.asarray(rng.standard_normal(shape) * 1e3 + 1.7e9, order=order)
    assert missing.extremes(X) == (X.max(), X.min())
    X.flat[X.size // 2] = np.nan
    high, low = missing.extremes(X)
    assert np.isnan(high) and np.isnan(low)


def test_extremes_when_the_extreme_values_sit_in_the_last_rows():
    X = np.zeros((100_000, 30))  # many blocks
    X[-1, -1], X[-2, 0] = 5.0, -7.0
    assert missing.extremes(X) == (5.0, -7.0)
    X[-1, 3] = np.nan
    high, low = missing.extremes(X)
    assert np.isnan(high) and np.isnan(low)


def test_the_infinity_check_records_the_extremes_for_the_later_checks():
    X = np.array([[1.0, -3.0], [2.0, 0.5]])
    with missing.scan_scope():
        missing.check_infinite(X, "LDA")
        recorded, found = missing._SCANNED.get()[id(X)]
        assert recorded is X and found == (2.0, -3.0)
        assert not missing.has_missing(X)
        assert frame.within(X) == 3.0
        gaps = X.copy()
        gaps[0, 0] = np.nan
        missing.check_infinite(gaps, "LDA")  # NaN: allowed
        assert missing.has_missing(gaps)
        assert frame.within(gaps) == 3.0
        gaps[1, 1] = np.inf
        with pytest.raises(ValueError, match="infinity; QDA"):
            missing.check_infinite(gaps.copy(), "QDA")
    assert missing._SCANNED.get() is None  # outside the scope: nothing recorded


@pytest.mark.parametrize("Estimator", [bg.LDA, bg.QDA, bg.GaussianNB])
@pytest.mark.parametrize("offset", [0.0, 1e9])
def test_one_scan_per_array_in_a_fit_and_a_prediction(Estimator, offset, monkeypatch):
    """Standardised data (an identity frame, Z is X): X is read once per fit and once
    per predict_proba for infinity, missing values and far rows together; with an
    offset (Z is a new array) X and Z once each. The results equal those of the path
    without the scope."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((3000, 5)) + offset
    y = np.repeat([0, 1, 2], 1000)
    X += y[:, None] * 0.5
    reference = Estimator(method="map").fit(X, y)
    proba = reference.predict_proba(X)
    assert reference._frame.is_identity == (offset == 0.0)
    calls = []
    original = missing._max_min

    def counted(values):
        calls.append(values is X)
        return original(values)

    monkeypatch.setattr(missing, "_max_min", counted)
    clf = Estimator(method="map").fit(X, y)
    assert calls == ([True] if offset == 0.0 else [True, False])
    calls.clear()
    again = clf.predict_proba(X)
    assert calls == ([True] if offset == 0.0 else [True, False])
    np.testing.assert_array_equal(again, proba)
    with monkeypatch.context() as m:  # without the scope: more scans, the same answer
        m.setattr(missing, "scan_scope", lambda: __import__("contextlib").nullcontext())
        calls.clear()
        np.testing.assert_array_equal(Estimator(method="map").fit(X, y).predict_proba(X),
                                      proba)
        assert len(calls) > 4
