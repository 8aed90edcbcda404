"""Property-based tests (Hypothesis) of labels held in object arrays and of save/load
round trips (the examples that write files: a quarter of the profile's). See
tests/test_properties.py for the data sets, profiles and tolerances.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import bayesgen as bg
from tests.property_checks import (
    SLOW_EXAMPLES,
    _cases,
    _points,
    _tolerance,
    _values,
    assert_log_close,
)
from tests.strategies import data_sets

# an MLE zero for every class: documented fallback to the class prior, with this warning
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*zero likelihood under every class:bayesgen.DataWarning"
)

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
