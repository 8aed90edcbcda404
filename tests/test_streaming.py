"""partial_fit and bg.merge: any sequence of batches (or shards) gives the fit on their
concatenation to 1e-10; bad batches raise and leave the estimator unchanged; fits
without rows say what they cannot do."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

import bayesgen as bg
from bayesgen.inference.rows import kept as kept_rows
from tests.streaming_helpers import CASES, assert_same_model, data, make


def _batches(n: int, seed: int) -> list[np.ndarray]:
    """Random cuts into 5 batches of unequal sizes (one of a single row)."""
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.choice(np.arange(2, n - 1), size=3, replace=False))
    return [np.arange(0, 1), *np.split(np.arange(1, n), cuts - 1)]


@pytest.mark.filterwarnings("ignore:.*few samples so far:bayesgen.DataWarning")
@pytest.mark.parametrize(("name", "method"), CASES)
def test_partial_fit_equals_fit(name, method):
    _, X, y = data(name)
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=y.size)
    full = make(name, method).fit(X, y, sample_weight=w)
    inc = make(name, method)
    for rows in _batches(y.size, 3):
        inc.partial_fit(X[rows], y[rows], classes=np.unique(y), sample_weight=w[rows])
    assert kept_rows(inc) is None  # fitted from statistics: no rows
    assert inc.method_ == method
    assert_same_model(inc, full, X)


@pytest.mark.parametrize("name", ["GaussianNB", "QDA", "CategoricalNB", "MixedNB", "ExponentialNB"])
def test_one_class_per_batch(name):
    """Batches holding one class each (sorted stream): the prior handles the classes
    not seen yet, and the end result is the fit on all rows."""
    _, X, y = data(name)
    order = np.argsort(y, kind="stable")
    inc = make(name, "map")
    for k in np.unique(y):
        rows = order[y[order] == k]
        inc.partial_fit(X[rows], y[rows], classes=np.unique(y))
    assert_same_model(inc, make(name, "map").fit(X, y), X)


def test_partial_fit_continues_fit():
    _, X, y = data("LDA")
    est = make("LDA", "conjugate").fit(X[:50], y[:50])
    est.partial_fit(X[50:], y[50:])  # classes known from fit
    assert_same_model(est, make("LDA", "conjugate").fit(X, y), X)


def test_string_labels_and_dataframes():
    _, X, y = data("GaussianNB")
    labels = np.array(["cat", "dog", "emu"])[y]
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    inc = make("GaussianNB", "map")
    inc.partial_fit(frame.iloc[:40], labels[:40], classes=["emu", "cat", "dog"])
    inc.partial_fit(frame.iloc[40:], labels[40:])
    assert list(inc.feature_names_in_) == ["a", "b", "c", "d"]
    assert list(inc.classes_) == ["cat", "dog", "emu"]
    assert_same_model(inc, make("GaussianNB", "map").fit(frame, labels), frame)
    with pytest.raises(ValueError, match="feature names"):
        inc.partial_fit(frame.rename(columns={"a": "z"}).iloc[:5], labels[:5])


# ------------------------------------------------------------------ bad input
@pytest.fixture(scope="module")
def streamed():
    _, X, y = data("GaussianNB")
    est = make("GaussianNB", "conjugate")
    est.partial_fit(X[:50], y[:50], classes=[0, 1, 2])
    est.partial_fit(X[50:], y[50:])
    return est, X, y


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda X, y: ((X[:5], np.array([0, 1, 7, 7, 1])), {}), r"label\(s\) \['7'\].*not among"),
        (lambda X, y: ((X[:5], np.array(["a"] * 5)), {}), "not among classes"),
        (lambda X, y: ((X[:5, :3], y[:5]), {}), "3 features.*expecting 4"),
        (lambda X, y: ((X[:5], y[:5]), {"classes": [0, 1]}), "not the same as on the first"),
        (lambda X, y: ((X[:5] * np.inf, y[:5]), {}), "infinity"),
        (lambda X, y: ((X[:5], y[:5]), {"sample_weight": -np.ones(5)}), "non-negative"),
        (lambda X, y: ((X[:5], y[:4]), {}), "inconsistent numbers of samples"),
    ],
)
def test_bad_batch_leaves_estimator_unchanged(streamed, change, match):
    est, X, y = streamed
    before = pickle.dumps(est)
    args, kwargs = change(X, y)
    with pytest.raises(ValueError, match=match):
        est.partial_fit(*args, **kwargs)
    assert pickle.dumps(est) == before


def test_classes_required_on_first_call():
    _, X, y = data("BernoulliNB")
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        make("BernoulliNB", "map").partial_fit(X, y)
    with pytest.raises(ValueError, match="at least 2 distinct labels"):
        make("BernoulliNB", "map").partial_fit(X, y, classes=[0, 0])


def test_parameters_checked_in_partial_fit():
    _, X, y = data("GaussianNB")
    with pytest.raises(ValueError, match="var_dof"):
        bg.GaussianNB(var_dof=1.0).partial_fit(X, y, classes=[0, 1, 2])


def test_failed_refit_leaves_estimator_unchanged(streamed):
    """A batch that is valid but whose refit fails (here: a class_alpha of the wrong
    length, checked with the statistics) changes nothing."""
    est, X, y = streamed
    before = pickle.dumps(est)
    est.set_params(class_alpha=[1.0, 2.0])
    with pytest.raises(ValueError, match="class_alpha"):
        est.partial_fit(X[:5], y[:5])
    est.set_params(class_alpha=1.0)
    assert pickle.dumps(est) == before


def test_mle_waits_for_every_class():
    """method='mle' cannot estimate a class without samples: the statistics are kept
    with a DataWarning, the estimator is not fitted until the class arrives."""
    _, X, y = data("PoissonNB")
    est = make("PoissonNB", "mle")
    with pytest.warns(bg.DataWarning, match=r"class\(es\) \[2\] have few samples so far"):
        est.partial_fit(X[y < 2], y[y < 2], classes=[0, 1, 2])
    with pytest.raises(NotFittedError):
        est.predict(X)
    est.partial_fit(X[y == 2], y[y == 2])
    order = np.concatenate([np.flatnonzero(y < 2), np.flatnonzero(y == 2)])
    assert_same_model(est, make("PoissonNB", "mle").fit(X[order], y[order]), X)


# ------------------------------------------------------------ without rows
def test_fitted_without_rows(streamed, tmp_path):
    est, X, y = streamed
    assert est.idata_.groups() == ["posterior"]
    for what in (est.sample_posterior_predictive,
                 est.sample_prior_predictive, lambda: bg.compare({"a": est, "b": est}),
                 lambda: bg.ppc_pvalues(est), est.add_log_likelihood):
        with pytest.raises(ValueError, match=r"needs the training rows.*Pass them"):
            what()
    with pytest.raises(AttributeError, match=r"needs the training rows.*build_model"):
        est.model_  # absent: hasattr is False
    assert not hasattr(est, "model_")
    est.sample(5, random_state=0)  # the generative model itself needs no rows
    # with the rows given, what needs them works (on a copy: they would be kept)
    copy = pickle.loads(pickle.dumps(est))
    assert copy.build_model(X, y)["x"].eval().shape == X.shape
    assert bg.compare({"a": copy, "b": copy}, X=X, y=y).shape[0] == 2
    assert np.isfinite(bg.ppc_pvalues(copy, X=X, y=y, random_state=0)["p_value"]).any()
    est.save(tmp_path / "m.nc")
    loaded = bg.load(tmp_path / "m.nc")
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    loaded.partial_fit(X[:10], np.zeros(10, dtype=int))  # a loaded model keeps streaming


# -------------------------------------------------------------------- merge
@pytest.mark.parametrize(("name", "method"), [c for c in CASES if c[1] != "mle"])
def test_merge_equals_fit(name, method):
    _, X, y = data(name)
    shards = np.array_split(np.arange(y.size), 3)
    parts = [make(name, method, random_state=i).fit(X[s], y[s]) for i, s in enumerate(shards)]
    # ArviZ's InferenceData pickles a posterior_predictive group differently the first
    # time than every time after (nothing of the fit changes): compare settled pickles
    for p in parts:
        pickle.dumps(p)
    before = [pickle.dumps(p) for p in parts]
    merged = bg.merge(*parts)
    assert [pickle.dumps(p) for p in parts] == before  # inputs untouched
    assert merged.random_state == 0  # the first estimator's
    assert_same_model(merged, make(name, method).fit(X, y), X)


def test_merge_unites_classes_and_categories():
    """Shards that saw different classes and different category values."""
    _, X, y = data("CategoricalNB")
    X = X + 10.0 * (np.arange(y.size) >= 45)[:, None]
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    shards = [np.arange(0, 40), np.arange(40, 90), np.r_[0:5, 85:90]]  # may overlap
    parts = [make("CategoricalNB", "conjugate").fit(X[s], y[s]) for s in shards]
    assert [p.classes_.tolist() for p in parts] == [[0, 1], [1, 2], [0, 2]]
    merged = bg.merge([parts[2], parts[0], parts[1]])  # any order
    assert list(merged.classes_) == [0, 1, 2]
    full = make("CategoricalNB", "conjugate").fit(
        np.concatenate([X[s] for s in (shards[2], shards[0], shards[1])]),
        np.concatenate([y[s] for s in (shards[2], shards[0], shards[1])]))
    assert_same_model(merged, full, X)


def test_merge_rejects_other_configurations():
    _, X, y = data("GaussianNB")
    a = make("GaussianNB", "map").fit(X, y)
    with pytest.raises(ValueError, match=r"other parameters than estimator 0 \(\['var_dof'\]\)"):
        bg.merge(a, make("GaussianNB", "map", var_dof=5.0).fit(X, y))
    with pytest.raises(ValueError, match="is a LDA, estimator 0 a GaussianNB"):
        bg.merge(a, make("LDA", "map").fit(X, y))
    with pytest.raises(ValueError, match=r"different numbers of features \(4 and 3\)"):
        bg.merge(a, make("GaussianNB", "map").fit(X[:, :3], y))
    with pytest.raises(ValueError, match="strings and numbers"):
        bg.merge(a, make("GaussianNB", "map").fit(X, np.array(["a", "b", "c"])[y]))
    with pytest.raises(NotFittedError):
        bg.merge(a, make("GaussianNB", "map"))
    with pytest.raises(ValueError, match="at least one"):
        bg.merge()


def test_merge_mle_with_a_class_missing_from_a_shard():
    """A class one shard lacks has zero count there; the MLE of the union is defined."""
    _, X, y = data("BernoulliNB")
    part = y != 2
    merged = bg.merge(make("BernoulliNB", "mle").fit(X[part], y[part]),
                      make("BernoulliNB", "mle").fit(X, y))
    both = make("BernoulliNB", "mle").fit(np.concatenate([X[part], X]),
                                          np.concatenate([y[part], y]))
    assert_same_model(merged, both, X)


# ------------------------------------------------------- constant features
@pytest.mark.parametrize("offset", [0.0, 3.0, -7e5, 1e12])
def test_constant_features_found_as_by_brute_force(offset):
    """The statistics zero the spread of a feature constant within a class; only the
    columns whose spread is within the rounding residue are checked against the data,
    which must find exactly what max == min per class finds."""
    from bayesgen.families import gaussian_stats as gs

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 200)
    X = rng.normal(size=(600, 5)) + offset
    X[y == 0, 1] = offset + 0.1  # constant in class 0
    X[:, 2] = offset + 1.0  # constant everywhere
    X[y == 1, 3] = offset * (1 + 1e-15 * rng.integers(0, 2, size=200))  # almost
    w = rng.uniform(0.0, 2.0, size=600)
    w[::7] = 0.0
    brute = np.array([[np.ptp(X[(y == k) & (w > 0), j]) == 0 for j in range(5)]
                      for k in range(3)])
    diag = gs.diagonal_stats(X, y, w, 3)
    np.testing.assert_array_equal(diag["m2"] == 0, brute)
    full = gs.scatter_stats(X, y, w, 3, tied=False)
    np.testing.assert_array_equal(np.diagonal(full["scatter"], axis1=1, axis2=2) == 0, brute)
    tied = gs.scatter_stats(X, y, w, 3, tied=True)
    np.testing.assert_array_equal(np.diagonal(tied["scatter"]) == 0, brute.all(axis=0))
    np.testing.assert_array_equal(diag["rows"], [np.sum((y == k) & (w > 0)) for k in range(3)])
