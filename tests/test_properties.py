"""Property-based tests (Hypothesis): what every classifier must satisfy on any data set.

Run::

    python -m pytest tests/test_properties.py                           # "ci" profile
    HYPOTHESIS_PROFILE=long python -m pytest tests/test_properties.py   # ~10x, random

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

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

import bayesgen as bg
from tests.strategies import CASES, DataSet, as_container, data_sets, label_sets

# an MLE zero for every class: documented fallback to the class prior, with this warning
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*zero likelihood under every class:bayesgen.DataWarning"
)

#: what a rounding of the inputs at the data's resolution may do to a log-probability
#: (class means shifted by the resolution, test points up to ~20 sd away, 5 features)
AMPLIFICATION = 1e3
#: examples of the tests that write files (a quarter of the profile's)
SLOW_EXAMPLES = max(2, settings.default.max_examples // 4)
LOG_FLOOR = np.log(1e-300)  # probabilities below this may underflow differently


def _case_id(case: tuple[str, str]) -> str:
    return "-".join(case)


def _cases(only=None, methods=None) -> list:
    """The (estimator, method) cases as pytest params; ``only``/``methods`` restrict the
    estimators/methods."""
    return [pytest.param(case, id=_case_id(case)) for case in CASES
            if (only is None or case[0] in only) and (not methods or case[1] in methods)]


def _points(ds: DataSet, unit: bool = False) -> np.ndarray:
    """Rows to predict: fresh test rows (one an outlier) and the training rows."""
    return np.vstack([ds.unit_test, ds.unit] if unit else [ds.X_test, ds.X])


def _values(ds: DataSet) -> list:
    """The training labels as a plain list, row by row."""
    return [ds.labels[i] for i in ds.y_index]


def assert_log_close(lp: np.ndarray, ref: np.ndarray, tol: float, what: str) -> None:
    """|log p - log ref| <= tol max(1, |log ref|): relative error ``tol`` on probabilities
    that matter, relative error ``tol`` on the log of the improbable ones (p = 1e-80 is
    the difference of scores of size ~200, each rounded). Where both probabilities are
    below 1e-300 (underflow territory) they only need to stay there; -inf must match."""
    lp, ref = np.asarray(lp, dtype=float), np.asarray(ref, dtype=float)
    assert lp.shape == ref.shape, f"{what}: shapes {lp.shape} and {ref.shape}"
    tiny = (lp < LOG_FLOOR) & (ref < LOG_FLOOR)
    with np.errstate(invalid="ignore"):
        diff = np.where(tiny, 0.0, np.abs(lp - ref))
        allowed = tol * np.maximum(1.0, np.abs(ref))
        excess = np.nan_to_num(diff / allowed, nan=np.inf)
    if not np.all(excess <= 1.0):
        worst = np.unravel_index(np.argmax(excess), diff.shape)
        raise AssertionError(
            f"{what}: |log p - log p_ref| = {diff[worst]:.3g} > {allowed[worst]:.3g} at "
            f"(row, class) {tuple(int(i) for i in worst)} (log p = {lp[worst]!r}, "
            f"log p_ref = {ref[worst]!r}); tolerance {tol:.3g} x max(1, |log p_ref|)"
        )


def assert_tree_close(a, b, rtol: float, where: str = "_posterior") -> None:
    """Nested dicts/lists of arrays equal to relative ``rtol`` (elementwise)."""
    if isinstance(a, dict):
        assert set(a) == set(b), f"{where}: keys {sorted(a)} != {sorted(b)}"
        for key in a:
            assert_tree_close(a[key], b[key], rtol, f"{where}[{key!r}]")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_tree_close(x, y, rtol, f"{where}[{i}]")
    elif isinstance(a, str) or a is None:
        assert a == b, where
    else:
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        assert x.shape == y.shape, f"{where}: shapes {x.shape} and {y.shape}"
        np.testing.assert_allclose(x, y, rtol=rtol, atol=1e-300, err_msg=where)


_counter = itertools.count()


@pytest.fixture(scope="module")
def save_dir(tmp_path_factory) -> Path:
    """One directory for the module (a function-scoped tmp_path would be shared by all
    examples of a property test, which Hypothesis rejects)."""
    return tmp_path_factory.mktemp("save_load")


def _round_trip(clf, directory: Path):
    """``bg.load`` of ``clf.save`` to a fresh file (removed afterwards)."""
    path = directory / f"model{next(_counter)}.nc"
    try:
        clf.save(path)
        return bg.load(path)
    finally:
        path.unlink(missing_ok=True)


def _tolerance(ds: DataSet, base: float) -> float:
    return base + AMPLIFICATION * ds.resolution


def _discrete_mle(ds: DataSet) -> bool:
    """MLE with a discrete part: a zero probability (log -inf) is the right answer."""
    return ds.method == "mle" and any(c.kind != "real" for c in ds.columns)


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


# ----------------------------------------------------------------- predictions
@pytest.mark.parametrize("case", _cases())
@given(data=st.data())
def test_probabilities_are_well_formed(case, data):
    """classes_ sorted; probabilities finite, in [0, 1], rows sum to 1 (1e-12);
    predict_log_proba is their log and finite (-inf only for an MLE zero)."""
    ds = data.draw(data_sets(*case), label="data set")
    clf = ds.fit()
    assert clf.classes_.tolist() == sorted(ds.labels)
    X = _points(ds)
    proba, log_proba = clf.predict_proba(X), clf.predict_log_proba(X)
    assert proba.shape == log_proba.shape == (X.shape[0], len(ds.labels))
    assert np.all(np.isfinite(proba)) and np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert not np.any(np.isnan(log_proba)) and np.all(log_proba <= 0)
    if not _discrete_mle(ds):
        assert np.all(np.isfinite(log_proba)), "predict_log_proba has -inf"
    np.testing.assert_allclose(np.exp(log_proba), proba, rtol=1e-12, atol=0)


@st.composite
def loss_matrices(draw, n: int) -> np.ndarray:
    """K x K costs >= 0 with a zero diagonal (integers, so ties happen too)."""
    values = draw(st.lists(st.integers(0, 9), min_size=n * n, max_size=n * n))
    loss = np.array(values, dtype=float).reshape(n, n)
    np.fill_diagonal(loss, 0.0)
    return loss


@pytest.mark.parametrize("case", _cases())
@given(data=st.data())
def test_predict_is_the_bayes_decision(case, data):
    """predict = classes_[argmax predict_proba]; with loss, classes_[argmin proba @ loss]."""
    ds = data.draw(data_sets(*case), label="data set")
    X = _points(ds)
    clf = ds.fit()
    assert clf.predict(X).tolist() == clf.classes_[np.argmax(clf.predict_proba(X), 1)].tolist()
    loss = data.draw(loss_matrices(len(ds.labels)), label="loss")
    costly = ds.estimator(loss=loss).fit(ds.X, ds.y)
    expected = costly.classes_[np.argmin(costly.predict_proba(X) @ loss, axis=1)]
    assert costly.predict(X).tolist() == expected.tolist()


def _normalised(scores: np.ndarray) -> np.ndarray:
    return scores - logsumexp(scores, axis=1, keepdims=True)


@pytest.mark.parametrize("case", _cases())
@given(data=st.data())
def test_scores_are_consistent(case, data):
    """predict_joint_log_proba and decision_function normalise (log-sum-exp) to
    predict_log_proba (1e-10 relative to the size of the scores); for two classes
    decision_function = log p1 - log p0. A row impossible under every class (an MLE
    zero) gets the class prior, and no score is NaN."""
    ds = data.draw(data_sets(*case), label="data set")
    clf = ds.fit()
    X = _points(ds)
    log_proba = clf.predict_log_proba(X)
    joint = clf.predict_joint_log_proba(X)
    decision = clf.decision_function(X)
    assert joint.shape == log_proba.shape
    assert not np.any(np.isnan(joint)), "predict_joint_log_proba has NaN"
    assert not np.any(np.isnan(decision)), "decision_function has NaN"
    possible = ~np.all(np.isneginf(joint), axis=1)
    prior = np.log(clf.class_prior_) - logsumexp(np.log(clf.class_prior_))
    np.testing.assert_allclose(log_proba[~possible], np.broadcast_to(prior, log_proba.shape)[
        ~possible], rtol=1e-12, err_msg="rows impossible under every class")
    size = np.abs(np.where(np.isfinite(joint), joint, 0.0)).max(axis=1, keepdims=True)
    tol = 1e-10 * max(1.0, size.max())  # rounding of the scores, not of log p
    assert_log_close(_normalised(joint[possible]), log_proba[possible], tol, "normalised joint")
    # LDA's documented discriminant x' P mu_k - mu_k' P mu_k / 2 + log pi_k in user units
    # carries a term equal across classes that grows with the offset of X (as
    # scikit-learn's X @ coef_.T + intercept_): its rounding is relative to its own size
    finite = np.abs(np.where(np.isfinite(decision), decision, 0.0))
    tol_decision = 1e-10 * max(1.0, size.max(), finite.max(initial=0.0))
    if len(ds.labels) == 2:
        assert decision.shape == (X.shape[0],)
        ok = np.all(np.isfinite(log_proba), axis=1)
        np.testing.assert_allclose(decision[ok], (log_proba[:, 1] - log_proba[:, 0])[ok],
                                   rtol=1e-10, atol=tol, err_msg="decision_function")
    else:
        assert decision.shape == log_proba.shape
        assert_log_close(_normalised(decision[possible]), log_proba[possible], tol_decision,
                         "normalised decision_function")


# ---------------------------------------------------------------------- labels
@st.composite
def object_label_sets(draw, n: int) -> tuple[list, str]:
    """Labels users also have that numpy does not type: numbers in an object array or
    object Series, or a mix of ints and strings (in a list, object array or Series)."""
    kind = draw(st.sampled_from(["int", "float", "mixed"]))
    if kind == "mixed":
        ints = st.integers(-(10**6), 10**6)
        strings = st.text(alphabet=st.characters(categories=("L", "N")), min_size=1, max_size=4)
        values = draw(st.lists(st.one_of(ints, strings), min_size=n, max_size=n, unique=True))
        assume(len({type(v) for v in values}) == 2)
        return values, draw(st.sampled_from(["object", "series", "list"]))
    element = st.integers(-(10**6), 10**6)
    values = draw(st.lists(element, min_size=n, max_size=n, unique=True))
    if kind == "float":
        values = [float(v) for v in values]
    return values, draw(st.sampled_from(["object", "series"]))


def _as_objects(values: list, container: str):
    if container == "list":
        return list(values)
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return pd.Series(array, dtype=object) if container == "series" else array


@pytest.mark.parametrize("case", _cases(methods=("map",)))
@settings(max_examples=SLOW_EXAMPLES)
@given(data=st.data())
def test_object_and_mixed_labels(case, data, save_dir):
    """Labels held in object arrays work like any others: predictions equal those of a
    bijective relabeling to ints, predict returns the user's own label values (not
    their strings), and save/load keeps them. Labels mixing strings and numbers (in a
    list, object array or Series) have no common order: a ValueError naming both (as
    scikit-learn, which rejects them too), never a silent conversion to strings."""
    ds = data.draw(data_sets(*case), label="data set")
    new, container = data.draw(object_label_sets(len(ds.labels)), label="labels, container")
    base = ds.fit()
    mapping = dict(zip(base.classes_.tolist(), new, strict=True))
    labels = _as_objects([mapping[v] for v in _values(ds)], container)
    if len({isinstance(v, str) for v in new}) == 2:
        with pytest.raises(ValueError, match="mixes strings and numbers"):
            ds.fit(y=labels)
        return
    clf = ds.fit(y=labels)
    found = clf.classes_.tolist()
    assert len(found) == len(new) and all(any(v == f and type(v) is type(f) for f in found)
                                          for v in new), f"classes_ {found!r} != labels {new!r}"
    cols = [found.index(mapping[c]) for c in base.classes_.tolist()]
    X = _points(ds)
    assert_log_close(clf.predict_log_proba(X)[:, cols], base.predict_log_proba(X),
                     _tolerance(ds, 1e-10), "object labels vs original")
    assert clf.predict(X).tolist() == [mapping[v] for v in base.predict(X).tolist()]
    loaded = _round_trip(clf, save_dir)
    assert loaded.predict(X).tolist() == clf.predict(X).tolist()


# ------------------------------------------------------------------ save/load


@pytest.mark.parametrize("case", _cases())
@settings(max_examples=SLOW_EXAMPLES)
@given(data=st.data())
def test_save_load_round_trip(case, data, save_dir):
    """bg.load(save(model)) predicts identically (bit for bit)."""
    ds = data.draw(data_sets(*case), label="data set")
    clf = ds.fit()
    loaded = _round_trip(clf, save_dir)
    assert type(loaded) is type(clf)
    np.testing.assert_array_equal(loaded.classes_, clf.classes_)
    assert loaded.classes_.dtype == clf.classes_.dtype
    X = _points(ds)
    assert loaded.predict(X).tolist() == clf.predict(X).tolist()
    for method in ("predict_proba", "predict_log_proba", "predict_joint_log_proba",
                   "decision_function"):
        np.testing.assert_array_equal(getattr(loaded, method)(X), getattr(clf, method)(X),
                                      err_msg=method)
    if ds.method == "conjugate":
        np.testing.assert_array_equal(loaded.predict_proba_draws(X).values,
                                      clf.predict_proba_draws(X).values)
