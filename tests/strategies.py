"""Hypothesis strategies for tests/test_properties.py: data sets shaped like users' data.

A data set is drawn in two layers. Hypothesis draws the *structure* (estimator, number
of classes, rows per class, features, label values and their container, the offset and
scale of every real-valued column, a seed), so that a failure shrinks to a readable
description; numpy, seeded from it, draws the values.

Real-valued columns are exact affine images of standardised data. Column j holds
``x = a_j z + b_j`` where ``z = K / 2**q_j`` lies on a dyadic grid (``K`` integers,
``q_j`` fractional bits), ``a_j = t_j 2**p_j`` (``t_j`` a small odd integer, so
``a_j`` in about 1e-6..1e6) and ``b_j`` (up to about 1e9 in magnitude) is a multiple of
``a_j / 2**q_j``. ``q_j`` is the largest number of bits (3 to 16) for which every
``t_j (K + b_j 2**q_j / a_j)`` stays below 2**52: then both the standardised view
``unit`` and the user's view ``X`` are exactly representable in float64 and
``X = a z + b`` holds without rounding, so any difference between a model fitted on
one and on the other is the library's. What float64 cannot avoid is the rounding of
quantities such as class means in the user's units, ``2**-52 |b_j|`` absolute, i.e.
``resolution = 2**-52 max_j |b_j| / a_j`` in units of the standardised data; the
properties allow a multiple of it (zero without offsets).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from hypothesis import assume
from hypothesis import strategies as st

import bayesgen as bg

MIXED_PARTS = ("gaussian", "bernoulli", "poisson", "categorical", "exponential")
_KIND = {
    "gaussian": "real", "bernoulli": "binary", "poisson": "count", "categorical": "categorical",
    "exponential": "positive",
}

ESTIMATORS = {
    "LDA": bg.LDA,
    "QDA": bg.QDA,
    "GaussianNB": bg.GaussianNB,
    "KernelNB": bg.KernelNB,
    "BernoulliNB": bg.BernoulliNB,
    "MultinomialNB": bg.MultinomialNB,
    "PoissonNB": bg.PoissonNB,
    "ExponentialNB": bg.ExponentialNB,
    "CategoricalNB": bg.CategoricalNB,
    "MixedNB": bg.MixedNB,
}
#: the support of every column of the single-family estimators
SUPPORT = {
    "LDA": "real", "QDA": "real", "GaussianNB": "real", "KernelNB": "real",
    "BernoulliNB": "binary", "MultinomialNB": "count", "PoissonNB": "count",
    "ExponentialNB": "positive", "CategoricalNB": "categorical",
}
METHODS = ("mle", "map", "conjugate")
#: every (estimator, method) pair of the property tests (KernelNB has no conjugate prior)
CASES = [
    (name, method) for name in ESTIMATORS for method in METHODS
    if not (name == "KernelNB" and method == "conjugate")
]
#: small posterior for method="conjugate", fixed seed
POSTERIOR_SIZE = {"draws": 50, "chains": 2, "random_state": 0}

_GRID_BITS_MAX = 16  # fractional bits of the standardised grid
_GRID_BITS_MIN = 3
_Z_MAX = 64.0  # |z| bound (outliers included)


def make_estimator(name: str, method: str, families=None, **params):
    """A default estimator of the case, with the small fixed-seed posterior for conjugate."""
    if method == "conjugate":
        params = {**POSTERIOR_SIZE, **params}
    if name == "MixedNB":
        params["families"] = families
    return ESTIMATORS[name](method=method, **params)


@dataclass
class Column:
    """How column j was made: its support and, for real columns, the exact affine map."""

    kind: str
    a: float = 1.0  # x = a * unit + b, exactly
    b: float = 0.0
    bits: int = 0  # fractional bits q of the standardised grid


@dataclass
class DataSet:
    """Training and test data of one example, in the user's view and the standardised one.

    ``X``/``X_test`` hold the user's values, ``unit``/``unit_test`` the same rows with
    every real column mapped back to ``z = (x - b) / a`` (exactly); other columns are
    the same in both. ``y`` is in the container the user passes (array, list, Series).
    """

    name: str
    method: str
    X: np.ndarray
    y: object
    X_test: np.ndarray
    unit: np.ndarray
    unit_test: np.ndarray
    columns: list[Column]
    families: list | None
    labels: list
    counts: list[int]
    seed: int
    container: str
    y_index: np.ndarray = field(repr=False)

    def __repr__(self) -> str:
        cols = ", ".join(
            f"{c.kind}(a={c.a:.3g}, b={c.b:.3g}, bits={c.bits})" if c.kind == "real"
            else c.kind for c in self.columns
        )
        return (
            f"DataSet({self.name}, {self.method!r}, rows per class={self.counts}, "
            f"labels={self.labels!r} as {self.container}, seed={self.seed}, "
            f"columns=[{cols}], families={self.families})"
        )

    def _repr_pretty_(self, printer, cycle) -> None:  # Hypothesis prints failing examples so
        printer.text(repr(self))

    @property
    def resolution(self) -> float:
        """Rounding unit of the user's data relative to its spread, max_j 2**-52 |b_j|/a_j."""
        return max((2.0**-52 * abs(c.b) / c.a for c in self.columns), default=0.0)

    def estimator(self, **params):
        return make_estimator(self.name, self.method, self.families, **params)

    def fit(self, X=None, y=None, **fit_params):
        """Fit a fresh estimator on (X, y), by default this data set's user view."""
        X = self.X if X is None else X
        y = self.y if y is None else y
        return self.estimator().fit(X, y, **fit_params)


# ----------------------------------------------------------------- labels
def _label_values(kind: str, n: int) -> st.SearchStrategy[list]:
    if kind == "int":
        element = st.one_of(st.integers(0, 9), st.integers(-(10**12), 10**12))
    elif kind == "str":
        letters = st.characters(categories=("L", "N", "P", "Zs"))
        element = st.text(alphabet=letters, min_size=1, max_size=6)
    else:  # whole numbers: scikit-learn (and so bayesgen) rejects 0.5 as a "continuous" target
        element = st.one_of(st.integers(0, 9), st.integers(-(10**9), 10**9)).map(float)
    return st.lists(element, min_size=n, max_size=n, unique=True)


def label_sets(n: int) -> st.SearchStrategy[list]:
    """``n`` distinct class labels, all ints, all strings or all (whole-number) floats."""
    return st.sampled_from(["int", "str", "float"]).flatmap(lambda k: _label_values(k, n))


def as_container(values: list, container: str):
    """Labels as the user holds them: numpy array, list, object array (strings only, see
    ``data_sets``) or pandas Series."""
    if container == "object" and not isinstance(values[0], str):
        container = "array"
    if container == "list":
        return list(values)
    if container == "object":
        return np.array(values, dtype=object)
    if container == "series":
        return pd.Series(values)
    return np.array(values)


# ------------------------------------------------------------- columns
@st.composite
def affine_maps(draw) -> tuple[float, float]:
    """(a, b) targets: a log-uniform in 1e-6..1e6, b zero or +-1e-3..1e9 (log-uniform)."""
    a = 10.0 ** draw(st.floats(-6, 6))
    b = draw(st.one_of(st.just(0.0), st.floats(-3, 9).map(lambda e: 10.0**e)))
    sign = draw(st.sampled_from([1.0, -1.0]))
    return a, sign * b


def _grid(a_target: float, b_target: float, odd: int) -> tuple[int, int, int]:
    """Exponent p of a = odd 2**p, fractional bits q and integer offset m (b = odd m 2**(p-q))."""
    p = round(math.log2(a_target / odd))
    a = odd * 2.0**p
    ratio = abs(b_target) / a + _Z_MAX
    q = int(np.clip(math.floor(47 - math.log2(ratio)), _GRID_BITS_MIN, _GRID_BITS_MAX))
    m = round(b_target / a * 2.0**q)
    m = int(np.clip(m, -(2**47), 2**47))
    return p, q, m


def _real_column(rng, y_index, n_classes, q, n_test_rows, test_index):
    """Integer grid values of one real column (train and test)."""
    centre = rng.normal(0.0, 2.0, n_classes)
    sd = np.exp(rng.uniform(np.log(0.3), np.log(2.0), n_classes))
    z = centre[y_index] + sd[y_index] * rng.normal(size=y_index.size)
    z_test = centre[test_index] + sd[test_index] * rng.normal(size=n_test_rows)
    z_test[-1] += rng.choice([-1, 1]) * rng.uniform(8, 20) * sd[test_index[-1]]  # outlier
    scale = 2.0**q
    ints = np.round(np.clip(z, -_Z_MAX, _Z_MAX) * scale).astype(np.int64)
    ints_test = np.round(np.clip(z_test, -_Z_MAX, _Z_MAX) * scale).astype(np.int64)
    return ints, ints_test


def _views(ints: np.ndarray, p: int, q: int, m: int, odd: int) -> tuple[np.ndarray, np.ndarray]:
    """(user values odd (K + m) 2**(p-q), standardised values K 2**-q), both exact."""
    values = odd * (ints + m)
    assert np.all(np.abs(values) < 2**52)
    user = np.ldexp(values.astype(np.float64), p - q)
    unit = np.ldexp(ints.astype(np.float64), -q)
    return user, unit


def _discrete_column(kind, rng, y_index, n_classes, n_test_rows, test_index):
    if kind == "binary":
        p = rng.uniform(0.05, 0.95, n_classes)
        return (
            (rng.uniform(size=y_index.size) < p[y_index]).astype(float),
            (rng.uniform(size=n_test_rows) < p[test_index]).astype(float),
        )
    if kind == "count":
        rate = np.exp(rng.uniform(np.log(0.2), np.log(30.0), n_classes))
        return rng.poisson(rate[y_index]).astype(float), rng.poisson(rate[test_index]).astype(float)
    if kind == "positive":  # durations: exponential, class means 1e-3..1e3
        mean = np.exp(rng.uniform(np.log(1e-3), np.log(1e3), n_classes))
        return rng.exponential(mean[y_index]), rng.exponential(mean[test_index])
    n_cat = int(rng.integers(2, 6))
    probs = rng.dirichlet(np.ones(n_cat), n_classes)
    draw = lambda idx: np.array([rng.choice(n_cat, p=probs[k]) for k in idx], dtype=float)  # noqa: E731
    train = draw(y_index)
    test = draw(test_index)
    # the categories are the values seen in training: another value is an error at predict
    return train, np.where(np.isin(test, train), test, train[0])


def _well_posed(unit: np.ndarray, y_index: np.ndarray, real: list[int], name: str,
                method: str, n_classes: int) -> bool:
    """Real columns non-constant within every class of >= 2 rows; covariance well
    conditioned where the method estimates it without a prior; for a multinomial MLE,
    some count in every class."""
    if name == "MultinomialNB" and method == "mle":
        return all(unit[y_index == k].sum() > 0 for k in range(n_classes))
    if not real:
        return True
    Z = unit[:, real]
    for k in range(n_classes):
        Zk = Z[y_index == k]
        if Zk.shape[0] >= 2 and np.any(np.ptp(Zk, axis=0) == 0):
            return False
    if method == "mle" and name in ("LDA", "QDA"):
        groups = [Z[y_index == k] - Z[y_index == k].mean(0) for k in range(n_classes)]
        scatters = [g.T @ g for g in groups] if name == "QDA" else [sum(g.T @ g for g in groups)]
        return all(np.linalg.cond(s) < 1e6 for s in scatters)
    return True


def _min_rows(name: str, method: str, d: int, n_classes: int, kinds: list[str]) -> int:
    """Fewest rows per class the method accepts (and a data set that makes sense)."""
    if name == "KernelNB":
        return 2
    if method != "mle":
        return 1
    if name == "QDA":
        return d + 1
    if name == "LDA":
        return max(2, 1 + math.ceil(d / n_classes))
    return 2 if "real" in kinds else 1


@st.composite
def mixed_layouts(draw) -> tuple[list[str], list]:
    """Column kinds and ``families`` of a MixedNB: 1-2 gaussian, 0-1 of each other part,
    columns in shuffled positions."""
    sizes = {
        "gaussian": draw(st.integers(1, 2)),
        **{part: draw(st.integers(0, 1)) for part in MIXED_PARTS[1:]},
    }
    names = [part for part in MIXED_PARTS for _ in range(sizes[part])]
    order = draw(st.permutations(range(len(names))))
    kinds = [None] * len(names)
    families = []
    for part in MIXED_PARTS:
        cols = sorted(order[i] for i, n in enumerate(names) if n == part)
        if cols:
            families.append((part, cols))
            for c in cols:
                kinds[c] = _KIND[part]
    return kinds, families


@st.composite
def data_sets(draw, name: str, method: str) -> DataSet:
    """One training/test data set for estimator ``name`` fitted with ``method``."""
    n_classes = draw(st.integers(2, 4))
    if name == "MixedNB":
        kinds, families = draw(mixed_layouts())
    else:
        kinds, families = [SUPPORT[name]] * draw(st.integers(1, 5)), None
    d = len(kinds)
    low = _min_rows(name, method, d, n_classes, kinds)
    counts = draw(st.lists(st.integers(low, low + 5), min_size=n_classes, max_size=n_classes))
    labels = draw(label_sets(n_classes))
    # an object array of numbers is "unknown" to scikit-learn: see test_object_labels
    containers = ["array", "list", "series"] + (["object"] if isinstance(labels[0], str) else [])
    container = draw(st.sampled_from(containers))
    maps = [draw(affine_maps()) if kind == "real" else None for kind in kinds]
    odds = [draw(st.sampled_from([1, 3, 5, 7, 11, 15])) if kind == "real" else 1 for kind in kinds]
    seed = draw(st.integers(0, 2**32 - 1))

    rng = np.random.default_rng(seed)
    y_index = rng.permutation(np.repeat(np.arange(n_classes), counts))
    n_test = 6
    test_index = rng.integers(0, n_classes, n_test)
    real = [j for j, kind in enumerate(kinds) if kind == "real"]
    for _ in range(50):  # redraw values until the real columns are well posed
        X, unit = np.empty((y_index.size, d)), np.empty((y_index.size, d))
        X_test, unit_test = np.empty((n_test, d)), np.empty((n_test, d))
        columns = []
        for j, kind in enumerate(kinds):
            if kind == "real":
                p, q, m = _grid(*maps[j], odds[j])
                ints, ints_test = _real_column(rng, y_index, n_classes, q, n_test, test_index)
                X[:, j], unit[:, j] = _views(ints, p, q, m, odds[j])
                X_test[:, j], unit_test[:, j] = _views(ints_test, p, q, m, odds[j])
                a, b = odds[j] * 2.0**p, odds[j] * m * 2.0 ** (p - q)
                columns.append(Column(kind, a=a, b=b, bits=q))
            else:
                X[:, j], X_test[:, j] = _discrete_column(kind, rng, y_index, n_classes, n_test,
                                                         test_index)
                unit[:, j], unit_test[:, j] = X[:, j], X_test[:, j]
                columns.append(Column(kind))
        if _well_posed(unit, y_index, real, name, method, n_classes):
            break
    else:
        assume(False)
    for j in real:  # the two views are exact affine images of each other
        c = columns[j]
        assert np.array_equal(unit[:, j] * c.a + c.b, X[:, j])
        assert np.array_equal(unit_test[:, j] * c.a + c.b, X_test[:, j])
    y = as_container([labels[i] for i in y_index], container)
    return DataSet(name=name, method=method, X=X, y=y, X_test=X_test, unit=unit,
                   unit_test=unit_test, columns=columns, families=families, labels=labels,
                   counts=counts, seed=seed, container=container, y_index=y_index)
