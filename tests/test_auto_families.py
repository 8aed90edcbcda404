"""MixedNB(families="auto"): each column's family from its dtype, overrides, and
``families_``, against the equivalent explicit ``families=``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest

import bayesgen as bg

COLUMNS = ["age", "income", "visits", "smoker", "colour", "size"]


@pytest.fixture(scope="module")
def mixed_frame():
    """float, float, int (counts), bool, string and category columns."""
    rng = np.random.default_rng(3)
    y = np.repeat(["a", "b", "c"], 40)
    k = np.repeat(np.arange(3), 40)
    n = y.size
    df = pd.DataFrame({
        "age": rng.normal(40 + 5 * k, 8),
        "income": pd.array(rng.lognormal(10 + 0.2 * k, 0.5), dtype="Float64"),
        "visits": rng.poisson(1 + 2 * k).astype(np.int64),
        "smoker": pd.array(rng.uniform(size=n) < 0.2 + 0.25 * k, dtype="boolean"),
        "colour": pd.array(np.array(["red", "green", "blue"])[(rng.integers(0, 2, n) + k) % 3],
                           dtype="string[pyarrow]"),
        "size": pd.Categorical(np.array(["S", "M", "L"])[(rng.integers(0, 2, n) + k) % 3]),
    })
    return df, y


EXPLICIT = [("gaussian", ["age", "income", "visits"]), ("bernoulli", ["smoker"]),
            ("categorical", ["colour", "size"])]
OVERRIDDEN = [("gaussian", ["age", "income"]), ("poisson", ["visits"]),
              ("bernoulli", ["smoker"]), ("categorical", ["colour", "size"])]


@pytest.mark.parametrize("method", ["mle", "map", "conjugate"])
def test_auto_equals_explicit_families(mixed_frame, method):
    df, y = mixed_frame
    kw = {"method": method, "draws": 50, "chains": 2, "random_state": 0}
    auto = bg.MixedNB(families="auto", **kw).fit(df, y)
    explicit = bg.MixedNB(families=EXPLICIT, **kw).fit(df, y)
    assert auto.families_ == EXPLICIT
    assert explicit.families_ == EXPLICIT
    np.testing.assert_allclose(auto.predict_proba(df), explicit.predict_proba(df), rtol=1e-12)
    assert auto.categorical2_categories_[0].tolist() == ["blue", "green", "red"]
    assert auto.categorical2_categories_[1].tolist() == ["L", "M", "S"]
    # families_ is a valid specification that refits the same model
    again = bg.MixedNB(families=auto.families_, **kw).fit(df, y)
    np.testing.assert_allclose(again.predict_proba(df), auto.predict_proba(df), rtol=1e-12)


def test_auto_equals_explicit_on_codes(mixed_frame):
    """The auto model on the DataFrame equals the explicit model on a float array in
    which the bool column is 0/1 and the text columns are their ordinal codes."""
    df, y = mixed_frame
    codes = np.column_stack([
        df["age"], df["income"].to_numpy(float), df["visits"], df["smoker"].to_numpy(float),
        pd.factorize(df["colour"].astype(str), sort=True)[0],
        pd.factorize(df["size"].astype(str), sort=True)[0],
    ]).astype(float)
    positions = [("gaussian", [0, 1]), ("poisson", [2]), ("bernoulli", [3]),
                 ("categorical", [4, 5])]
    auto = bg.MixedNB(families="auto", overrides={"visits": "poisson"}).fit(df, y)
    ref = bg.MixedNB(families=positions).fit(codes, y)
    assert auto.families_ == OVERRIDDEN
    np.testing.assert_allclose(auto.predict_proba(df), ref.predict_proba(codes), rtol=1e-12)
    np.testing.assert_allclose(auto.poisson1_rate_, ref.poisson1_rate_)


@pytest.mark.parametrize("overrides", [{"visits": "poisson"}, {2: "poisson"}])
def test_overrides_by_name_or_position(mixed_frame, overrides):
    df, y = mixed_frame
    auto = bg.MixedNB(families="auto", overrides=overrides).fit(df, y)
    explicit = bg.MixedNB(families=OVERRIDDEN).fit(df, y)
    assert auto.families_ == OVERRIDDEN
    np.testing.assert_allclose(auto.predict_proba(df), explicit.predict_proba(df), rtol=1e-12)


def test_overrides_kernel_and_categorical_bool(mixed_frame):
    df, y = mixed_frame
    clf = bg.MixedNB(families="auto",
                     overrides={"age": "kernel", "smoker": "categorical"}).fit(df, y)
    assert clf.families_ == [("kernel", ["age"]), ("gaussian", ["income", "visits"]),
                             ("categorical", ["smoker", "colour", "size"])]
    assert clf.categorical2_categories_[0].tolist() == [False, True]


def test_auto_on_polars(mixed_frame):
    df, y = mixed_frame
    pdf = pl.from_pandas(df)
    ours = bg.MixedNB(families="auto").fit(pdf, y)
    assert ours.families_ == EXPLICIT
    ref = bg.MixedNB(families="auto").fit(df, y)
    np.testing.assert_allclose(ours.predict_proba(pdf), ref.predict_proba(df), rtol=1e-12)


def test_auto_on_arrays():
    """Plain arrays: every column of a float or int array is Gaussian, of a bool array
    Bernoulli; columns are listed by position."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 30)
    X = rng.normal(size=(60, 3)) + y[:, None]
    auto = bg.MixedNB(families="auto").fit(X, y)
    assert auto.families_ == [("gaussian", [0, 1, 2])]
    np.testing.assert_allclose(auto.predict_proba(X), bg.GaussianNB().fit(X, y).predict_proba(X),
                               rtol=1e-12)
    B = rng.uniform(size=(60, 4)) < 0.3 + 0.3 * y[:, None]
    auto = bg.MixedNB(families="auto", overrides={3: "categorical"}).fit(B, y)
    assert auto.families_ == [("bernoulli", [0, 1, 2]), ("categorical", [3])]
    ref = bg.MixedNB(families=[("bernoulli", [0, 1, 2]), ("categorical", [3])])
    np.testing.assert_allclose(auto.predict_proba(B), ref.fit(B.astype(float), y).predict_proba(B))


def test_bad_overrides_name_the_problem(mixed_frame):
    df, y = mixed_frame
    with pytest.raises(ValueError, match=r"overrides\['visits'\]: unknown family 'poison'"):
        bg.MixedNB(families="auto", overrides={"visits": "poison"}).fit(df, y)
    with pytest.raises(ValueError, match=r"overrides\['nope'\]: unknown column 'nope'"):
        bg.MixedNB(families="auto", overrides={"nope": "poisson"}).fit(df, y)
    with pytest.raises(ValueError, match=r"overrides\[9\]: column position 9 is out of range"):
        bg.MixedNB(families="auto", overrides={9: "poisson"}).fit(df, y)
    with pytest.raises(ValueError, match="overrides is only used with families='auto'"):
        bg.MixedNB(families=EXPLICIT, overrides={"visits": "poisson"}).fit(df, y)
    with pytest.raises(ValueError, match="overrides"):
        bg.MixedNB(families="auto", overrides=["visits"]).fit(df, y)
    with pytest.raises(ValueError, match=r"column 'colour' holds text.*poisson family"):
        bg.MixedNB(families="auto", overrides={"colour": "poisson"}).fit(df, y)
