"""DataFrames as they come (issue 13 item 2): pandas dtypes (numpy, nullable,
pyarrow-backed, object, string, category, bool) and polars DataFrames for fit and
predict, against the same data given as a NumPy array; CategoricalNB on text,
categorical and boolean columns; errors naming the column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest

import bayesgen as bg
from bayesgen.data import tables
from tests.conftest import CLASSIFIERS, make_data

#: pandas dtypes that hold the values of each kind of data exactly
PANDAS_DTYPES = {
    "real": ["float64", "Float64", "float64[pyarrow]", "object"],
    "positive": ["float64", "Float64", "float64[pyarrow]", "object"],
    "count": ["int64", "Int64", "int32[pyarrow]", "UInt16", "float64"],
    "binary": ["bool", "boolean", "bool[pyarrow]", "Int8"],
    "categorical": ["int64", "Int64", "int64[pyarrow]", "Float64"],
}
POLARS_DTYPES = {
    "real": [pl.Float64, pl.Float32],  # Float32 only for values exact in float32
    "positive": [pl.Float64, pl.Float32],
    "count": [pl.Int64, pl.UInt32, pl.Int16, pl.Float64],
    "binary": [pl.Boolean, pl.Int8],
    "categorical": [pl.Int64, pl.UInt8],
}
#: MixedNB's columns (conftest: real, real, binary, binary, count, count)
MIXED_KINDS = ["real", "real", "binary", "binary", "count", "count"]


def _kinds(kind: str, d: int) -> list[str]:
    return MIXED_KINDS if kind == "mixed" else [kind] * d


def _cast(values: np.ndarray, kind: str, dtype: str):
    if kind == "binary" and dtype in ("bool", "boolean", "bool[pyarrow]"):
        values = values.astype(bool)
    elif kind in ("count", "binary", "categorical") and dtype != "float64":
        values = values.astype(np.int64)
    if dtype == "object":
        return pd.Series(values.tolist(), dtype=object)
    return pd.Series(values).astype(dtype)


def pandas_frame(X: np.ndarray, kind: str, shift: int = 0) -> pd.DataFrame:
    """X as a DataFrame whose columns cycle through the dtypes of their kind."""
    kinds = _kinds(kind, X.shape[1])
    return pd.DataFrame({
        f"f{j}": _cast(X[:, j], k, PANDAS_DTYPES[k][(j + shift) % len(PANDAS_DTYPES[k])])
        for j, k in enumerate(kinds)
    })


def polars_frame(X: np.ndarray, kind: str) -> pl.DataFrame:
    kinds = _kinds(kind, X.shape[1])
    cols = {}
    for j, k in enumerate(kinds):
        dtype = POLARS_DTYPES[k][j % len(POLARS_DTYPES[k])]
        values = X[:, j]
        if dtype == pl.Float32:
            values = values.astype(np.float32).astype(np.float64)  # exact in float32
        cols[f"f{j}"] = pl.Series(values).cast(dtype)
    return pl.DataFrame(cols)


def _exact(X: np.ndarray, kind: str) -> np.ndarray:
    """The values polars_frame stores (real columns rounded to float32 where cast)."""
    X = X.copy()
    for j, k in enumerate(_kinds(kind, X.shape[1])):
        if k in ("real", "positive") and POLARS_DTYPES[k][j % 2] == pl.Float32:
            X[:, j] = X[:, j].astype(np.float32)
    return X


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_numeric_frames_equal_arrays(name, library):
    """Every estimator: a DataFrame of numbers of every dtype fits and predicts exactly
    as the same numbers in a float64 array, and keeps feature_names_in_."""
    factory, kind = CLASSIFIERS[name]
    X, y = make_data(kind)
    if library == "pandas":
        df, X = pandas_frame(X, kind), X
    else:
        df, X = polars_frame(X, kind), _exact(X, kind)
    ours = factory(method="map").fit(df, y)
    ref = factory(method="map").fit(X, y)
    assert list(ours.feature_names_in_) == [f"f{j}" for j in range(X.shape[1])]
    np.testing.assert_allclose(ours.predict_proba(df), ref.predict_proba(X), rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_array_equal(ours.predict(df), ref.predict(X))
    # predict on frames of other dtypes and of the other library
    others = [pandas_frame(X, kind, shift=1),
              pl.DataFrame({f"f{j}": X[:, j] for j in range(X.shape[1])})]
    for other in others:
        np.testing.assert_allclose(ours.predict_proba(other), ref.predict_proba(X),
                                   rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("method", ["mle", "conjugate"])
def test_frames_equal_arrays_other_methods(method):
    X, y = make_data("mixed")
    df = pandas_frame(X, "mixed")
    kw = {"method": method, "draws": 50, "chains": 2, "random_state": 0}
    ours = bg.MixedNB(families=[("gaussian", ["f0", "f1"]), ("bernoulli", ["f2", "f3"]),
                                ("poisson", ["f4", "f5"])], **kw).fit(df, y)
    ref = CLASSIFIERS["MixedNB"][0](**kw).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(df), ref.predict_proba(X), rtol=1e-12)


# ----------------------------------------------------------- text columns
def _text_data(n_per_class: int = 30, seed: int = 1):
    """Columns of text, categories and booleans, and their ordinal codes."""
    rng = np.random.default_rng(seed)
    y = np.repeat(["no", "yes", "maybe"], n_per_class)
    k = np.repeat(np.arange(3), n_per_class)
    n = y.size
    colour = (rng.integers(0, 3, n) + k) % 4  # 4 levels
    size = (rng.integers(0, 2, n) + k) % 3
    flag = (rng.uniform(size=n) < 0.2 + 0.3 * k).astype(np.int64)
    words = np.array(["blue", "green", "red", "white"])  # sorted: codes = order
    sizes = np.array(["L", "M", "S"])
    codes = np.column_stack([colour, size, flag]).astype(float)
    return words[colour], sizes[size], flag.astype(bool), codes, y


TEXT_COLUMNS = {
    "object": lambda v: pd.Series(v.tolist(), dtype=object),
    "string": lambda v: pd.Series(v, dtype="string"),
    "string[pyarrow]": lambda v: pd.Series(v, dtype="string[pyarrow]"),
    "category": lambda v: pd.Series(pd.Categorical(v, categories=sorted(set(v))[::-1])),
    "pyarrow-dictionary": lambda v: pd.Series(v, dtype="string[pyarrow]").astype(
        pd.ArrowDtype(__import__("pyarrow").dictionary(
            __import__("pyarrow").int32(), __import__("pyarrow").string()))),
}
BOOL_COLUMNS = {
    "bool": lambda v: pd.Series(v),
    "boolean": lambda v: pd.Series(v, dtype="boolean"),
    "bool[pyarrow]": lambda v: pd.Series(v, dtype="bool[pyarrow]"),
    "object": lambda v: pd.Series(v.tolist(), dtype=object),
}


@pytest.mark.parametrize("text", sorted(TEXT_COLUMNS))
@pytest.mark.parametrize("flag", sorted(BOOL_COLUMNS))
@pytest.mark.parametrize("method", ["map", "conjugate"])
def test_categorical_nb_text_columns(text, flag, method):
    """CategoricalNB on text/categorical/boolean columns equals the fit on their
    ordinal codes; categories_ are the observed values."""
    colour, size, flags, codes, y = _text_data()
    df = pd.DataFrame({"colour": TEXT_COLUMNS[text](colour), "size": TEXT_COLUMNS[text](size),
                       "flag": BOOL_COLUMNS[flag](flags)})
    kw = {"method": method, "draws": 40, "chains": 2, "random_state": 0}
    ours = bg.CategoricalNB(**kw).fit(df, y)
    ref = bg.CategoricalNB(**kw).fit(codes, y)
    np.testing.assert_allclose(ours.predict_proba(df), ref.predict_proba(codes), rtol=1e-12)
    np.testing.assert_allclose(ours.feature_log_prob_[0], ref.feature_log_prob_[0])
    assert ours.categories_[0].tolist() == ["blue", "green", "red", "white"]
    assert ours.categories_[1].tolist() == ["L", "M", "S"]
    assert ours.categories_[2].tolist() == [False, True]
    assert ours.categories_[2].dtype == bool
    np.testing.assert_array_equal(ours.n_categories_, ref.n_categories_)
    # predict on a subset of rows whose values are a subset of the levels
    rows = df.iloc[[0, 5, 40]]
    np.testing.assert_allclose(ours.predict_proba(rows), ref.predict_proba(codes[[0, 5, 40]]))


def test_categorical_nb_polars_text_columns():
    colour, size, flags, codes, y = _text_data()
    df = pl.DataFrame({
        "colour": pl.Series(colour),
        "size": pl.Series(size).cast(pl.Categorical),
        "flag": pl.Series(flags),
    })
    enum = pl.DataFrame({
        "colour": pl.Series(colour).cast(pl.Enum(["white", "red", "green", "blue"])),
        "size": pl.Series(size),
        "flag": pl.Series(flags),
    })
    ref = bg.CategoricalNB().fit(codes, y)
    for frame in (df, enum):
        ours = bg.CategoricalNB().fit(frame, y)
        np.testing.assert_allclose(ours.predict_proba(frame), ref.predict_proba(codes),
                                   rtol=1e-12)
        assert ours.categories_[0].tolist() == ["blue", "green", "red", "white"]
        assert list(ours.feature_names_in_) == ["colour", "size", "flag"]
    # fitted on polars, predicts a pandas frame with the same values
    pdf = pd.DataFrame({"colour": colour, "size": size, "flag": flags})
    np.testing.assert_allclose(ours.predict_proba(pdf), ref.predict_proba(codes), rtol=1e-12)


def test_categorical_nb_object_array_and_mixed_numeric_columns():
    """An object array of strings works like a DataFrame; integer columns next to text
    columns keep their numeric categories (and min_categories applies to them only)."""
    colour, size, flags, codes, y = _text_data()
    X = np.column_stack([colour, size]).astype(object)
    ours = bg.CategoricalNB().fit(X, y)
    ref = bg.CategoricalNB().fit(codes[:, :2], y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(codes[:, :2]))
    df = pd.DataFrame({"colour": colour, "n": codes[:, 1].astype(int)})
    clf = bg.CategoricalNB(min_categories=5).fit(df, y)
    assert clf.categories_[0].tolist() == ["blue", "green", "red", "white"]
    assert clf.categories_[1].tolist() == [0, 1, 2, 3, 4]


def test_unseen_category_raises_naming_the_column():
    colour, size, flags, _, y = _text_data()
    df = pd.DataFrame({"colour": colour, "size": pd.Categorical(size)})
    clf = bg.CategoricalNB().fit(df, y)
    new = df.iloc[:3].copy()
    new["colour"] = ["blue", "purple", "red"]
    with pytest.raises(ValueError, match=r"column 'colour' has the value 'purple'.*4 categories"):
        clf.predict(new)
    # a level declared by the dtype but never observed is not a category either
    declared = pd.DataFrame({"colour": colour,
                             "size": pd.Categorical(size, categories=["XL", "L", "M", "S"])})
    assert bg.CategoricalNB().fit(declared, y).categories_[1].tolist() == ["L", "M", "S"]
    unused = pd.DataFrame({"colour": colour[:3],
                           "size": pd.Categorical(["XL"] * 3, categories=["L", "M", "S", "XL"])})
    with pytest.raises(ValueError, match="column 'size' has the value 'XL'"):
        clf.predict(unused)


def test_levels_grow_in_later_training_batches():
    """A later training batch (grow=True, as partial_fit reads it) appends new values
    to a column's levels; the codes of the earlier ones do not change."""
    clf = bg.CategoricalNB().fit(pd.DataFrame({"c": ["b", "a", "b"]}), [0, 1, 0])
    assert clf.categories_[0].tolist() == ["a", "b"]
    fit = clf.fitted_
    read = {"family": fit.family, "who": fit.who, "reset": False}
    out, grown = tables.to_numeric(pd.DataFrame({"c": ["c", "a", "b", "c"]}),
                                   table=fit.columns, grow=True, **read)
    np.testing.assert_array_equal(out["c"].to_numpy(), [2.0, 0.0, 1.0, 2.0])
    assert grown.levels["0"].tolist() == ["a", "b", "c"]
    # the fit is a value: reading a batch returns a new record and leaves the fit's
    # record and family as they were (partial_fit refits with the grown levels)
    assert fit.columns.levels["0"].tolist() == ["a", "b"]
    assert clf.fitted_.family.levels[0].tolist() == ["a", "b"]
    with pytest.raises(ValueError, match="has the value 'd'"):
        tables.to_numeric(pd.DataFrame({"c": ["d"]}), table=fit.columns, **read)
    # codes are internal: a numeric array is not read as them
    with pytest.raises(ValueError, match=r"fitted with text, boolean or category columns \(c\)"):
        clf.predict(np.array([[0.0]]))
    with pytest.warns(UserWarning, match="feature names"):  # scikit-learn's: no names
        labels = clf.predict(np.array([["a"], ["b"]], dtype=object))
    np.testing.assert_array_equal(labels, [1, 0])


def test_sample_returns_the_values_and_round_trips(tmp_path):
    colour, size, flags, _, y = _text_data()
    df = pd.DataFrame({"colour": colour, "size": pd.Categorical(size), "flag": flags})
    clf = bg.CategoricalNB(method="conjugate", draws=50, chains=2, random_state=0).fit(df, y)
    X_new, y_new = clf.sample(20, random_state=1)
    assert isinstance(X_new, pd.DataFrame) and list(X_new.columns) == ["colour", "size", "flag"]
    assert set(X_new["colour"]) <= set(colour) and set(X_new["flag"]) <= {False, True}
    assert clf.predict_proba(X_new).shape == (20, 3)
    clf.save(tmp_path / "m.nc")
    loaded = bg.load(tmp_path / "m.nc")
    np.testing.assert_array_equal(loaded.predict_proba(df), clf.predict_proba(df))
    assert loaded.categories_[0].tolist() == clf.categories_[0].tolist()
    # model_ and idata_ hold the codes (positions in categories_)
    assert clf.idata_.observed_data["x"].values.max() == 3


# ----------------------------------------------------------------- errors
def test_text_in_a_numeric_column_names_the_column():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "colour": ["r", "g", "r", "g"]})
    y = [0, 0, 1, 1]
    for clf in (bg.GaussianNB(), bg.LDA(), bg.PoissonNB()):
        with pytest.raises(ValueError, match=r"column 'colour' holds text.*e\.g\. 'r'"):
            clf.fit(df, y)
    with pytest.raises(ValueError, match=r"column 'colour' holds text.*gaussian family"):
        bg.MixedNB(families=[("gaussian", ["a", "colour"])]).fit(df, y)
    with pytest.raises(ValueError, match=r"column 'colour' holds text.*gaussian family"):
        bg.MixedNB(families="auto", overrides={"colour": "gaussian"}).fit(df, y)
    # at predict: a column fitted as numbers given as text
    clf = bg.GaussianNB().fit(df[["a"]], y)
    with pytest.raises(ValueError, match="column 'a' holds text"):
        clf.predict(pd.DataFrame({"a": ["x", "y"]}))


@pytest.mark.parametrize("library", ["pandas", "polars"])
@pytest.mark.parametrize(
    "column",
    [
        [1.0, None, 3.0, 4.0],
        pd.array([1, pd.NA, 3, 4], dtype="Int64"),
        [1.0, np.nan, 3.0, 4.0],
        ["a", None, "b", "a"],
        pd.array(["a", pd.NA, "b", "a"], dtype="string"),
    ],
)
def test_missing_values_are_kept_and_empty_columns_named(library, column):
    """None / NaN / pd.NA / polars null are missing values (issue 14): fit and predict
    integrate them out; a column with no observed value is a ValueError naming it."""
    df = pd.DataFrame({"ok": [1.0, 2.0, 3.0, 4.0], "gap": column})
    filled = df.fillna({"gap": df["gap"].dropna().iloc[0]})
    empty = df.assign(gap=pd.Series([None] * 4, dtype=object))
    if library == "polars":
        df, filled, empty = pl.from_pandas(df), pl.from_pandas(filled), pl.from_pandas(empty)
    proba = bg.MixedNB(families="auto").fit(df, [0, 0, 1, 1]).predict_proba(df)
    assert np.all(np.isfinite(proba))
    fitted = bg.MixedNB(families="auto").fit(filled, [0, 0, 1, 1])
    assert np.all(np.isfinite(fitted.predict_proba(df)))
    with pytest.raises(ValueError, match=r"column 'gap' has no observed value"):
        bg.MixedNB(families="auto").fit(empty, [0, 0, 1, 1])


def test_unsupported_dtypes_and_mixed_types_name_the_column():
    y = [0, 0, 1, 1]
    dates = pd.DataFrame({"when": pd.date_range("2020-01-01", periods=4)})
    with pytest.raises(ValueError, match="column 'when' has dtype datetime64"):
        bg.GaussianNB().fit(dates, y)
    mixed = pd.DataFrame({"m": ["a", 1, "b", 2]})
    with pytest.raises(ValueError, match="column 'm' mixes values of types"):
        bg.CategoricalNB().fit(mixed, y)


def test_feature_names_checked_at_predict():
    X, y = make_data("real")
    df = pandas_frame(X, "real")
    clf = bg.GaussianNB().fit(df, y)
    with pytest.raises(ValueError, match="feature names"):
        clf.predict(df[df.columns[::-1]])
    # an array is accepted (scikit-learn warns about the missing names)
    with pytest.warns(UserWarning, match="feature names"):
        clf.predict(X)


def test_merge_of_text_columns():
    """Fits that saw different levels of a text column merge into the fit on all rows
    (their codes are re-coded to the union of the levels, see tests/test_piece_levels.py);
    a text column merged with a numeric one is a ValueError naming it."""
    a = bg.CategoricalNB().fit(pd.DataFrame({"c": ["a", "b"]}), [0, 1])
    c = bg.CategoricalNB().fit(pd.DataFrame({"c": ["c", "a"]}), [0, 1])
    merged = bg.merge(c, a)
    assert merged.categories_[0].tolist() == ["a", "b", "c"]
    one = bg.CategoricalNB().fit(pd.DataFrame({"c": ["c", "a", "a", "b"]}), [0, 1, 0, 1])
    np.testing.assert_allclose(merged.feature_log_prob_[0], one.feature_log_prob_[0],
                               rtol=1e-12)
    numeric = bg.CategoricalNB().fit(pd.DataFrame({"c": [0, 1]}), [0, 1])
    bg.merge(numeric, numeric)
    with pytest.raises(ValueError, match="Column 'c' holds category values in one piece "
                                         "merged and numbers in the other"):
        bg.merge(a, numeric)
