"""One pass per array for the NaN checks of a fit or a prediction
(:func:`bayesgen.data.missing.scan_scope`), and the frame's order statistics computed for
all columns at once (:func:`bayesgen.data.frame._unit_order_stats`): the same results as
the column-by-column path, and no stale answer once the call is over."""

import numpy as np
import pytest

import bayesgen as bg
from bayesgen.data import frame, missing


def _frame_both_ways(X, real, w):
    fast = frame.choose(X, real, w)
    original = frame._unit_order_stats
    frame._unit_order_stats = lambda V, w: None
    try:
        slow = frame.choose(X, real, w)
    finally:
        frame._unit_order_stats = original
    return fast, slow


@pytest.mark.parametrize("seed", range(40))
def test_all_columns_at_once_choose_the_same_frame(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 400)), int(rng.integers(1, 6))
    X = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-8, 9, size=d)
    X += rng.choice([0.0, 1.7e9, -3e4], size=d)  # offsets like timestamps
    if seed % 3 == 0:
        X = np.round(X)  # ties
    if seed % 5 == 0:
        X[:, 0] = 7.0  # a constant column
    real = rng.random(d) < 0.8
    fast, slow = _frame_both_ways(X, real, np.ones(n))
    np.testing.assert_array_equal(fast.loc, slow.loc)
    np.testing.assert_array_equal(fast.scale, slow.scale)


def test_order_stats_fall_back_with_nan_or_weights():
    X = np.arange(20.0).reshape(10, 2)
    assert frame._unit_order_stats(X, np.ones(10)) is not None
    X[3, 1] = np.nan
    assert frame._unit_order_stats(X, np.ones(10)) is None  # column by column, NaN skipped
    assert frame._unit_order_stats(X[:, :1], np.full(10, 2.0)) is None  # weighted quantiles
    fast, slow = _frame_both_ways(X, np.ones(2, bool), np.ones(10))
    np.testing.assert_array_equal(fast.loc, slow.loc)
    np.testing.assert_array_equal(fast.scale, slow.scale)


def test_scope_answers_from_the_first_scan_only_inside_it():
    X = np.ones((5, 3))
    with missing.scan_scope():
        assert not missing.has_missing(X)  # scanned and recorded complete
        X[0, 0] = np.nan  # (bayesgen's own code never does this inside a scope)
        assert not missing.has_missing(X)  # the recorded answer, no second pass
        Y = X.copy()
        assert missing.has_missing(Y)  # another object: scanned
    assert missing.has_missing(X)  # outside the scope: scanned again
    missing.note_scan(X, True)  # no scope: nothing recorded
    assert missing.has_missing(X)


def test_scan_reports_nan_and_extent():
    Z = np.array([[1.0, -3.0], [2.0, 0.5]])
    assert frame.scan(Z) == (3.0, True)
    Z[1, 1] = np.nan
    assert frame.scan(Z) == (3.0, False)
    assert frame.scan(np.full((2, 2), np.nan)) == (0.0, False)


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


def test_a_forked_child_fits_after_the_parent_used_the_pool():
    """bayesgen's thread pool does not survive ``fork``: a child process (e.g. of
    ``multiprocessing`` with the fork start method) gets a new one instead of waiting
    for threads that do not exist."""
    import multiprocessing

    from bayesgen.utils import threads

    rng = np.random.default_rng(5)
    X = rng.standard_normal((120_000, 20))  # large enough for the parallel passes
    y = rng.integers(0, 3, size=X.shape[0])
    if threads.workers() < 2:
        pytest.skip("one core: no pool")
    parent = bg.LDA().fit(X, y).predict_proba(X[:5])
    assert threads._POOL is not None
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        child = pool.apply_async(_fit_and_predict, (X, y)).get(timeout=120)
    np.testing.assert_array_equal(child, parent)


def _fit_and_predict(X, y):
    return bg.LDA().fit(X, y).predict_proba(X[:5])


@pytest.mark.parametrize("shape", [(7,), (1, 1), (300, 4), (5000, 30), (80_000, 30)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_extremes_equal_numpys_max_and_min(shape, order):
    """One blocked pass over the cores gives exactly X.max() / X.min(), NaN-propagating,
    or nanmax / nanmin with skip_nan (every block size, both memory orders)."""
    from bayesgen.utils.threads import extremes

    rng = np.random.default_rng(len(shape) + shape[0])
    X = np.asarray(rng.standard_normal(shape) * 1e3 + 1.7e9, order=order)
    assert extremes(X) == (X.max(), X.min())
    assert extremes(X, skip_nan=True) == (X.max(), X.min())
    X.flat[X.size // 2] = np.nan
    high, low = extremes(X)
    assert np.isnan(high) and np.isnan(low)
    if X.size > 1:  # (an X of only NaN: below)
        assert extremes(X, skip_nan=True) == (np.nanmax(X), np.nanmin(X))
    X.flat[X.size // 3] = -np.inf
    assert extremes(X, skip_nan=True)[1] == -np.inf
    assert extremes(np.full(shape, np.nan), skip_nan=True) == (-np.inf, np.inf)


def test_extremes_when_the_extreme_values_sit_in_the_last_rows():
    from bayesgen.utils.threads import extremes

    X = np.zeros((100_000, 30))  # above the parallel size: row chunks over the cores
    X[-1, -1], X[-2, 0] = 5.0, -7.0
    assert extremes(X) == (5.0, -7.0)
    X[-1, 3] = np.nan
    high, low = extremes(X)
    assert np.isnan(high) and np.isnan(low)


def test_infinity_check_records_the_extremes_for_the_far_row_scan():
    X = np.array([[1.0, -3.0], [2.0, 0.5]])
    with missing.scan_scope():
        missing.check_infinite(X, "LDA")
        assert missing.known_extremes(X) == (2.0, -3.0)
        assert not missing.has_missing(X)
        assert frame.scan(X, missing.known_extremes(X)) == frame.scan(X) == (3.0, True)
        gaps = X.copy()
        gaps[0, 0] = np.nan
        missing.check_infinite(gaps, "LDA")  # NaN: allowed, no extremes recorded
        assert missing.known_extremes(gaps) is None
        assert missing.has_missing(gaps)
    assert missing.known_extremes(X) is None  # outside the scope: nothing recorded


@pytest.mark.parametrize("Estimator", [bg.LDA, bg.QDA, bg.GaussianNB])
def test_an_identity_frame_is_scanned_once_per_fit_and_prediction(Estimator, monkeypatch):
    """Standardised data (an identity frame, Z is X): the infinity check's maximum and
    minimum serve the far-row scan, so a fit and a predict_proba each read X for
    them once; the results equal those of the two-scan path."""
    from bayesgen.utils import threads

    rng = np.random.default_rng(3)
    X = rng.standard_normal((3000, 5))
    y = np.repeat([0, 1, 2], 1000)
    X += y[:, None] * 0.5
    reference = Estimator(method="map").fit(X, y)
    proba = reference.predict_proba(X)
    assert reference.frame_.is_identity
    calls = []
    original = threads.extremes

    def counted(Z, **kwargs):
        calls.append(Z is X)
        return original(Z, **kwargs)

    monkeypatch.setattr(threads, "extremes", counted)
    monkeypatch.setattr(frame, "extremes", counted)
    clf = Estimator(method="map").fit(X, y)
    assert calls == [True]
    calls.clear()
    again = clf.predict_proba(X)
    assert calls == [True]
    np.testing.assert_array_equal(again, proba)
    with monkeypatch.context() as m:  # without the recorded extremes: the same answer
        m.setattr(missing, "known_extremes", lambda Z: None)
        np.testing.assert_array_equal(clf.predict_proba(X), proba)
