"""Levels of text, boolean and category columns that differ between pieces.

partial_fit batches, Dask partitions and estimators merged with ``bg.merge`` each see
some of the values of a text column; their statistics are re-coded to the sorted union
of the levels (:mod:`bayesgen.scale.piece_levels`), so the result equals one fit on all the
rows (to 1e-10; the same ``categories_``). Pieces that read a column as different
dtypes (text in one, numbers in another) are a ValueError naming the column.
"""

import copy

import numpy as np
import pandas as pd
import pytest

import bayesgen as bg
from tests.streaming_helpers import assert_same_model

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

CLASSES = [0, 1, 2]
#: three row ranges whose text column "c" holds different values (see ``frame``)
CUTS = (slice(0, 30), slice(30, 60), slice(60, 90))


def frame():
    """90 rows: text column ``c`` whose values are grouped so that the three cuts see
    {b, c}, {a, c, d} and {d, e}; a second text column ``k``, a boolean ``b`` (one cut
    sees only False), a category column ``g`` with an unused category, and a real
    column ``x`` far from 0 (so batches choose different frames)."""
    rng = np.random.default_rng(0)
    n = 90
    c = rng.choice(list("abcde"), n)
    order = np.argsort(pd.Series(c).map({"b": 0, "c": 1, "a": 2, "d": 3, "e": 4}).values,
                       kind="stable")
    b = rng.random(n) < 0.4
    b[:30] = False
    g = pd.Categorical(rng.choice(["lo", "hi"], n), categories=["lo", "mid", "hi"])
    X = pd.DataFrame({"c": c[order], "k": rng.choice(["u", "v"], n), "b": b,
                      "g": g[order], "x": rng.normal(size=n) * 1e-3 + 1e6})
    y = rng.integers(0, 3, n)
    y[:3] = CLASSES  # every class in every cut
    y[30:33] = y[60:63] = CLASSES
    return X, y


def make(name: str):
    if name == "CategoricalNB":
        return bg.CategoricalNB(method="conjugate", draws=20, random_state=0,
                                progressbar=False)
    return bg.MixedNB(families="auto", method="map")


def columns(name: str, X: pd.DataFrame) -> pd.DataFrame:
    return X.drop(columns="x") if name == "CategoricalNB" else X


@pytest.fixture(scope="module")
def data():
    return frame()


@pytest.fixture(scope="module", params=["CategoricalNB", "MixedNB"])
def case(request, data):
    X, y = data
    X = columns(request.param, X)
    return request.param, X, y, make(request.param).fit(X, y)


def test_the_cuts_see_different_levels(data):
    X, _ = data
    seen = [sorted(set(X["c"].iloc[s])) for s in CUTS]
    assert seen == [["b", "c"], ["a", "c", "d"], ["d", "e"]]


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 0, 1), (1, 2, 0)])
def test_partial_fit_equals_one_fit(case, order):
    name, X, y, ref = case
    est = make(name)
    for i in order:
        est.partial_fit(X.iloc[CUTS[i]], y[CUTS[i]], classes=CLASSES)
    assert_same_model(est, ref, X)
    assert est._columns.levels.keys() == ref._columns.levels.keys()
    for key, level in ref._columns.levels.items():
        np.testing.assert_array_equal(est._columns.levels[key], level)
    if name == "CategoricalNB":
        assert est.categories_[0].tolist() == list("abcde")
        assert est.categories_[3].tolist() == ["hi", "lo"]  # used categories, sorted


def test_merge_equals_one_fit(case):
    name, X, y, ref = case
    shards = [make(name).fit(X.iloc[CUTS[i]], y[CUTS[i]]) for i in (2, 0, 1)]
    before = [copy.deepcopy(s._columns) for s in shards]
    merged = bg.merge(*shards)
    assert_same_model(merged, ref, X)
    for shard, record in zip(shards, before, strict=True):  # inputs unchanged
        assert shard._columns.levels.keys() == record.levels.keys()
        for key in record.levels:
            np.testing.assert_array_equal(shard._columns.levels[key], record.levels[key])


def _dask_xy(X: pd.DataFrame, y: np.ndarray, npartitions: int = 3):
    return (dd.from_pandas(X, npartitions=npartitions, sort=False),
            dd.from_pandas(pd.Series(y), npartitions=npartitions, sort=False))


def test_dask_partitions_equal_one_fit(case):
    name, X, y, ref = case
    Xd, yd = _dask_xy(X, y)
    assert Xd.npartitions == 3
    with dask.config.set(scheduler="threads"):
        est = make(name).fit(Xd, yd)
        assert_same_model(est, ref, X)
        np.testing.assert_allclose(est.predict_proba(Xd).compute(), ref.predict_proba(X),
                                   rtol=1e-10, atol=1e-12)
        # a Dask partial_fit after a first NumPy batch: the chunks extend the levels
        streamed = make(name).partial_fit(X.iloc[CUTS[2]], y[CUTS[2]], classes=CLASSES)
        streamed.partial_fit(*_dask_xy(X.iloc[:60], y[:60]))
        assert_same_model(streamed, ref, X)


def test_dask_on_a_local_cluster(data):
    X, y = data
    X = columns("CategoricalNB", X)
    ref = make("CategoricalNB").fit(X, y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        est = make("CategoricalNB").fit(*_dask_xy(X, y))
    assert_same_model(est, ref, X)


# ------------------------------------------------------------------ bad input
def _text_and_numbers():
    y = np.array([0, 1, 0, 1])
    text = pd.DataFrame({"c": pd.Series(list("abab"), dtype=object), "x": [1.0, 2, 3, 4]})
    numbers = pd.DataFrame({"c": pd.Series([1, 2, 1, 2], dtype=object), "x": [1.0, 2, 3, 4]})
    return text, numbers, y


@pytest.mark.parametrize("name", ["CategoricalNB", "MixedNB"])
def test_merge_of_text_and_numbers_is_an_error(name):
    text, numbers, y = _text_and_numbers()
    a, b = make(name).fit(text, y), make(name).fit(numbers, y)
    match = ("Column 'c' holds category values in one piece merged and numbers"
             if name == "CategoricalNB" else r"Column\(s\) \['c'\] are read differently")
    for pair in ((a, b), (b, a)):
        with pytest.raises(ValueError, match=match):
            bg.merge(*pair)


@pytest.mark.parametrize("name", ["CategoricalNB", "MixedNB"])
def test_partial_fit_of_numbers_after_text_is_an_error(name):
    text, numbers, y = _text_and_numbers()
    est = make(name).partial_fit(text, y, classes=[0, 1])
    state = copy.deepcopy(est.__dict__)
    with pytest.raises(ValueError, match=r"Column 'c', over the pieces merged .* mixes "
                                         r"values of types \['int', 'str'\]"):
        est.partial_fit(numbers, y)
    assert est.__dict__.keys() == state.keys()  # left unchanged
    np.testing.assert_array_equal(est._columns.levels["0"], state["_columns"].levels["0"])
    np.testing.assert_array_equal(est.class_count_, state["class_count_"])


@pytest.mark.parametrize("name", ["CategoricalNB", "MixedNB"])
def test_dask_partitions_of_other_dtypes_are_an_error(name):
    text, numbers, y = _text_and_numbers()
    both = pd.concat([numbers, text], ignore_index=True)
    match = ("holds category values in one piece merged and numbers" if name ==
             "CategoricalNB" else r"Column\(s\) \['c'\] are read differently")
    # Dask would otherwise convert the object column to strings (then it is text)
    with dask.config.set({"scheduler": "threads", "dataframe.convert-string": False}):
        Xd = dd.from_pandas(both, npartitions=2, sort=False)
        yd = dd.from_pandas(pd.Series(np.r_[y, y]), npartitions=2, sort=False)
        with pytest.raises(ValueError, match=match):
            make(name).fit(Xd, yd)


# ------------------------------------------------------- missing values in chunks
def test_dask_partition_with_a_column_all_missing():
    """A column with no observed value in one partition is fine (it has some in the
    others: the fit equals one fit); with none in any partition it is a ValueError."""
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"x": rng.normal(size=60), "z": rng.normal(size=60)})
    y = np.tile([0, 1, 2], 20)
    X.loc[:19, "x"] = np.nan
    ref = bg.GaussianNB().fit(X, y)
    with dask.config.set(scheduler="threads"):
        est = bg.GaussianNB().fit(*_dask_xy(X, y))
        assert_same_model(est, ref, X)
        X["z"] = np.nan
        with pytest.raises(ValueError, match="column 'z' has no observed value"):
            bg.GaussianNB().fit(*_dask_xy(X, y))


@pytest.mark.parametrize("dtype", ["string", "object"])
def test_dask_partition_with_a_text_column_all_missing(dtype):
    """A text column whose values in one partition are all missing (a chunk with no
    level yet; an object column of only None reads as categories, as its dtype says)
    merges with the others: the fit equals one fit."""
    X = pd.DataFrame({"c": pd.array(["a", "b", "a", "b"] + [None] * 4, dtype=dtype),
                      "x": np.arange(8.0)})
    y = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    ref = bg.MixedNB(families="auto").fit(X, y)
    with dask.config.set(scheduler="threads"):
        est = bg.MixedNB(families="auto").fit(*_dask_xy(X, y, npartitions=2))
    assert est.families_ == ref.families_
    np.testing.assert_allclose(np.asarray(est.predict_proba(X)), ref.predict_proba(X),
                               rtol=1e-10)
