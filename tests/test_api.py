"""The public API contract for every classifier: sklearn behaviour and bad input."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

import bayesgen as bg


def test_version_and_exports():
    assert isinstance(bg.__version__, str)
    for name in ["LDA", "QDA", "GaussianNB", "BernoulliNB", "MultinomialNB", "CategoricalNB",
                 "PoissonNB", "ExponentialNB", "MixedNB", "KernelNB"]:
        assert hasattr(bg, name)


@pytest.mark.parametrize("method", ["mle", "map"])
def test_prediction_surface(classifier_case, method):
    _name, factory, X, y = classifier_case
    clf = factory(method=method).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.shape == (len(y), 3)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), proba, atol=1e-12)
    joint = clf.predict_joint_log_proba(X)
    # p(y | x) = p(x, y) / sum_k p(x, y=k)
    np.testing.assert_allclose(
        np.exp(joint - np.logaddexp.reduce(joint, axis=1, keepdims=True)), proba, atol=1e-9
    )
    dec = clf.decision_function(X)
    assert dec.shape == (len(y), 3)
    np.testing.assert_array_equal(np.argmax(dec, 1), np.argmax(proba, 1))
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(proba, 1)])
    assert clf.score(X, y) > 0.6
    assert clf.n_features_in_ == X.shape[1]
    np.testing.assert_allclose(clf.class_prior_.sum(), 1.0)
    np.testing.assert_allclose(clf.class_count_, np.bincount(y))


def test_sample_round_trip(classifier_case):
    _name, factory, X, y = classifier_case
    clf = factory().fit(X, y)
    Xs, ys = clf.sample(200, random_state=0)
    assert Xs.shape == (200, X.shape[1])
    assert set(np.unique(ys)) <= set(clf.classes_)
    # data drawn from the model is valid input for the model
    assert np.all(np.isfinite(clf.predict_proba(Xs)))
    Xs2, ys2 = clf.sample(200, random_state=0)
    np.testing.assert_array_equal(Xs, Xs2)
    np.testing.assert_array_equal(ys, ys2)
    with pytest.raises(ValueError, match="not seen in fit"):
        clf.sample(3, classes=["nope"] * 3)


def test_binary_decision_function_is_a_difference(classifier_case):
    _name, factory, X, y = classifier_case
    keep = y < 2
    clf = factory().fit(X[keep], y[keep])
    dec = clf.decision_function(X[keep])
    assert dec.shape == (keep.sum(),)
    np.testing.assert_array_equal(clf.predict(X[keep]), clf.classes_[(dec > 0).astype(int)])


def test_string_labels_and_dataframe(classifier_case):
    name, factory, X, y = classifier_case
    labels = np.array(["setosa", "virginica", "versicolor"])[y]
    cols = [f"col_{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=cols)
    if name == "MixedNB":
        fams = [("gaussian", cols[:2]), ("bernoulli", cols[2:4]), ("poisson", cols[4:])]
        clf = bg.MixedNB(families=fams).fit(df, labels)
    else:
        clf = factory().fit(df, labels)
    assert list(clf.feature_names_in_) == cols
    assert set(clf.predict(df)) <= set(labels)
    assert list(clf.classes_) == sorted(set(labels))
    ref = clone(clf).fit(X, labels) if name != "MixedNB" else None
    if ref is not None:
        np.testing.assert_allclose(clf.predict_proba(df), ref.predict_proba(X))


def test_clone_pipeline_cv_grid(classifier_case):
    _name, factory, X, y = classifier_case
    clf = factory()
    params = clf.get_params()
    assert params["method"] == "map" and params["class_alpha"] == 1.0
    assert clone(clf).get_params() == params
    pipe = make_pipeline(FunctionTransformer(), factory())
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.mean() > 0.6
    grid = GridSearchCV(factory(), {"class_alpha": [1.0, 2.0]}, cv=3).fit(X, y)
    assert grid.best_params_["class_alpha"] in (1.0, 2.0)


def test_not_fitted(classifier_case):
    _name, factory, X, _y = classifier_case
    clf = factory()
    for call in (clf.predict, clf.predict_proba, clf.predict_log_proba,
                 clf.predict_joint_log_proba, clf.decision_function):
        with pytest.raises(NotFittedError):
            call(X)
    with pytest.raises(NotFittedError):
        clf.sample(3)


def test_bad_input(classifier_case):
    _name, factory, X, y = classifier_case
    bad = X.copy()
    bad[0, 0] = np.nan  # a missing value (issue 14): LDA/QDA reject it until part B
    accepts = factory()._make_family().capabilities.missing
    if not accepts:
        with pytest.raises(ValueError, match="missing"):
            factory().fit(bad, y)
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        factory().fit(bad, y)
    with pytest.raises(ValueError, match="class"):
        factory().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="method"):
        factory(method="bayes").fit(X, y)
    with pytest.raises(ValueError, match="class_alpha"):
        factory(class_alpha=[1.0, 2.0]).fit(X, y)
    with pytest.raises(ValueError, match="class_alpha"):
        factory(class_alpha=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="loss"):
        factory(loss=np.ones((2, 2))).fit(X, y)
    with pytest.raises(ValueError, match="sample_weight"):
        factory().fit(X, y, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="sample_weight"):
        factory().fit(X, y, sample_weight=-np.ones(len(y)))
    clf = factory().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :-1])
    bad = X.copy()
    bad[1, 1] = np.nan
    if accepts:
        assert np.all(np.isfinite(clf.predict_proba(bad)))
    else:
        with pytest.raises(ValueError, match="NaN"):
            clf.predict_proba(bad)


def test_loss_matrix_shifts_decisions():
    from tests.conftest import make_data

    X, y = make_data("real", n_per_class=60, n_classes=2, seed=3)
    X = X + np.random.default_rng(0).normal(scale=3.0, size=X.shape)  # overlap
    plain = bg.QDA().fit(X, y)
    # missing class 1 costs 20x a false alarm
    cautious = bg.QDA(loss=[[0.0, 1.0], [20.0, 0.0]]).fit(X, y)
    p1 = plain.predict_proba(X)[:, 1]
    pred = cautious.predict(X)
    np.testing.assert_array_equal(pred, (p1 > 1 / 21).astype(int))
    assert (pred == 1).sum() > (plain.predict(X) == 1).sum()


def test_class_alpha_map_formula():
    from tests.conftest import make_data

    X, y = make_data("real", n_per_class=5, n_classes=3)
    y = y.copy()
    y[:3] = 1  # counts 2, 8, 5
    counts = np.bincount(y)
    a = np.array([1.0, 2.0, 5.0])
    clf = bg.GaussianNB(class_alpha=a).fit(X, y)
    np.testing.assert_allclose(clf.class_prior_, (counts + a - 1) / (counts.sum() + a.sum() - 3))
    laplace = bg.GaussianNB(class_alpha=2).fit(X, y)
    np.testing.assert_allclose(laplace.class_prior_, (counts + 1) / (counts.sum() + 3))
    mle = bg.GaussianNB(method="mle", class_alpha=5.0).fit(X, y)
    np.testing.assert_allclose(mle.class_prior_, counts / counts.sum())


def test_zero_weight_class_is_never_predicted():
    from tests.conftest import make_data

    X, y = make_data("real")
    w = np.where(y == 2, 0.0, 1.0)
    clf = bg.GaussianNB().fit(X, y, sample_weight=w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not np.any(clf.predict(X) == 2)
    with pytest.raises(ValueError, match="class 2"):
        bg.GaussianNB(method="mle").fit(X, y, sample_weight=w)


def test_random_state_reproducible():
    from tests.conftest import make_data

    X, y = make_data("real")
    a = bg.QDA(random_state=5).fit(X, y).sample(20, random_state=1)
    b = bg.QDA(random_state=5).fit(X, y).sample(20, random_state=1)
    np.testing.assert_array_equal(a[0], b[0])


def test_probabilities_sum_to_one_to_rounding_even_with_huge_scores():
    """A feature nearly constant in training gives log-scores ~ -1e10 on test rows;
    log_joint - logsumexp then carries a rounding error ~1e-6 unless renormalised."""
    from scipy.special import logsumexp

    from bayesgen.utils.logspace import normalise

    rng = np.random.default_rng(0)
    log_joint = -1e10 + rng.normal(size=(50, 4)) * 3.0
    log_proba = normalise(log_joint, np.log(np.full(4, 0.25)), "test")
    np.testing.assert_allclose(np.exp(log_proba).sum(1), 1.0, rtol=0, atol=1e-14)
    # the probabilities are those of the O(1) part of the scores
    expected = log_joint + 1e10
    expected -= logsumexp(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(log_proba, expected, atol=1e-5)
    X = rng.normal(size=(40, 3))
    y = np.repeat([0, 1], 20)
    X[:, 2] = 1.0 + 1e-7 * rng.normal(size=40)  # near-constant feature
    proba = bg.GaussianNB(method="map").fit(X, y).predict_proba(rng.normal(size=(30, 3)))
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=0, atol=1e-14)
