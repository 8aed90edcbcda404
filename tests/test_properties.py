"""Property-based tests (Hypothesis): what every classifier must satisfy on any data set.

Run::

    python -m pytest tests/test_properties*.py                          # "ci" profile
    HYPOTHESIS_PROFILE=long python -m pytest tests/test_properties*.py  # ~10x, random

The properties are in three files, so that pytest-xdist (``--dist loadfile``) runs them
on different workers: this one (invariances), ``test_properties_predictions.py``
(probabilities, decisions, scores) and ``test_properties_save_load.py`` (object labels,
save/load); their shared helpers and tolerances are in ``tests/property_checks.py``.

The profiles are registered in ``tests/conftest.py``: "ci" (the default) is
derandomised, so every run tests the same 12 examples per test (3 for the tests that
write files), takes about 2 minutes on 2 cores and reports a failing example as found;
"long" draws ten times as many fresh examples, shrinks failures to minimal examples and
keeps them in ``.hypothesis/`` to replay. A failure prints the data set (its structure:
classes, rows per class, labels, the offset ``b`` and scale ``a`` of every real column,
the numpy seed of the values) and a ``@reproduce_failure`` blob.

Every property runs for the nine estimators and the methods "mle", "map" and
"conjugate" (a 2 x 50 posterior with a fixed seed; KernelNB has no conjugate prior);
"mcmc" is too slow for property tests. Data sets are drawn by :mod:`tests.strategies`:
2-4 classes, a few rows per class (at least what the method needs), 1-5 features,
real columns ``a z + b`` with ``a`` in 1e-6..1e6 and ``b`` up to 1e9, labels that are
ints, strings or floats, in a numpy array, list, object array or pandas Series.

Tolerances are on log-probabilities (relative on probabilities). Where real columns
have an offset, float64 cannot represent their class means closer than
``2**-52 |b|`` in the user's units, so the tolerance adds ``AMPLIFICATION`` times the
data's resolution ``2**-52 max |b| / a`` (see :mod:`tests.strategies`); without offsets
the tolerances are the bare ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tests.property_checks import (
    _cases,
    _points,
    _tolerance,
    _values,
    assert_log_close,
    assert_tree_close,
)
from tests.strategies import as_container, data_sets, label_sets

# an MLE zero for every class: documented fallback to the class prior, with this warning
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*zero likelihood under every class:bayesgen.DataWarning"
)


# ------------------------------------------------------------------ invariance
REAL_ESTIMATORS = ("LDA", "QDA", "GaussianNB", "KernelNB", "MixedNB")


@pytest.mark.parametrize("case", _cases(only=REAL_ESTIMATORS))
@given(data=st.data())
def test_affine_invariance(case, data):
    """x -> a x + b per real column leaves p(y | x) unchanged (1e-8 relative)."""
    ds = data.draw(data_sets(*case), label="data set")
    assume(any(c.kind == "real" for c in ds.columns))
    unit = ds.fit(ds.unit).predict_log_proba(_points(ds, unit=True))
    user = ds.fit(ds.X).predict_log_proba(_points(ds))
    assert_log_close(user, unit, _tolerance(ds, 1e-8), "user units vs standardised")


@pytest.mark.parametrize("case", _cases())
@given(data=st.data())
def test_relabeling_permutes_columns(case, data):
    """A bijection of the label values that changes their sorted order permutes the
    columns of predict_proba (and maps predict) accordingly."""
    ds = data.draw(data_sets(*case), label="data set")
    new = data.draw(label_sets(len(ds.labels)), label="new labels")
    assume(new != sorted(new))  # new[i] replaces the i-th class in sorted order
    base = ds.fit()
    mapping = dict(zip(base.classes_.tolist(), new, strict=True))
    relabeled = ds.fit(y=as_container([mapping[v] for v in _values(ds)], ds.container))
    assert relabeled.classes_.tolist() == sorted(new)
    cols = [relabeled.classes_.tolist().index(mapping[c]) for c in base.classes_.tolist()]
    X = _points(ds)
    assert_log_close(relabeled.predict_log_proba(X)[:, cols], base.predict_log_proba(X),
                     _tolerance(ds, 1e-10), "relabeled vs original")
    proba = base.predict_proba(X)
    top = np.sort(proba, axis=1)
    clear = top[:, -1] - top[:, -2] > 1e-6  # no near-tie for the most probable class
    expected = [mapping[v] for v in base.predict(X)[clear].tolist()]
    assert relabeled.predict(X)[clear].tolist() == expected


@pytest.mark.parametrize("case", _cases())
@given(data=st.data())
def test_row_order_does_not_matter(case, data):
    """Shuffling the training rows changes nothing (1e-10; conjugate: the posterior
    hyper-parameters and the closed-form predictive, same seed)."""
    ds = data.draw(data_sets(*case), label="data set")
    perm = np.array(data.draw(st.permutations(range(ds.X.shape[0])), label="row order"))
    base = ds.fit()
    y = as_container([_values(ds)[i] for i in perm], ds.container)
    shuffled = ds.fit(ds.X[perm], y)
    tol = _tolerance(ds, 1e-10)
    X = _points(ds)
    assert_log_close(shuffled.predict_log_proba(X), base.predict_log_proba(X), tol,
                     "shuffled rows vs original")
    if ds.method == "conjugate":
        assert_tree_close(shuffled._posterior, base._posterior, tol)


@pytest.mark.parametrize("case", _cases())
@given(data=st.data())
def test_integer_weights_equal_duplicated_rows(case, data):
    """sample_weight=w (integers) equals repeating row i w_i times (1e-10)."""
    ds = data.draw(data_sets(*case), label="data set")
    n = ds.X.shape[0]
    w = np.array(data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n),
                           label="sample_weight"))
    weighted = ds.fit(sample_weight=w)
    y = as_container(np.repeat(np.array(_values(ds), dtype=object), w).tolist(), ds.container)
    duplicated = ds.fit(np.repeat(ds.X, w, axis=0), y)
    tol = _tolerance(ds, 1e-10)
    X = _points(ds)
    assert_log_close(weighted.predict_log_proba(X), duplicated.predict_log_proba(X), tol,
                     "weighted vs duplicated rows")
    if ds.method == "conjugate":
        assert_tree_close(weighted._posterior, duplicated._posterior, tol)
