"""Regression tests for the last bad inputs found by fuzzing: each case gets a clear
``ValueError`` (or works) instead of a raw NumPy error, a MemoryError or a NaN."""

import numpy as np
import pytest

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
