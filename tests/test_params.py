"""Constructor parameters are validated at fit for every estimator and method.

A bad value raises ``ValueError`` whose message names the parameter, whether or not
the chosen method uses it (``divisor`` with ``method="map"``, ``draws`` with "mle").
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_param_validation

import bayesgen as bg
from bayesgen.utils.random import legacy_rng, rng_from, seed_from
from tests.conftest import CLASSIFIERS, make_data

#: bad values of the parameters every estimator has
COMMON_BAD = {
    "method": ["foo", 3, None],
    "class_alpha": ["abc", -1.0, 0.0, np.inf, np.nan, ["a", "b", "c"], [1.0, -1.0, 1.0],
                    [1.0, 2.0]],
    "draws": [0, -1, 2.5, "10"],
    "tune": [-1, 1.5, "a"],
    "chains": [0, "4", 1.0],
    "sampler": ["gibbs", 1],
    "target_accept": [0.0, 1.0, 1.5, "high"],
    "progressbar": ["yes", 2],
    "random_state": ["seed", -5, 2**32, 1.5],
    "loss": ["abc", -np.ones((3, 3)), np.full((3, 3), np.nan), np.ones((2, 2)),
             [["a", "b", "c"]] * 3],
}

#: bad values of each estimator's own parameters
OWN_BAD = {
    "GaussianNB": {
        "mean_prior": ["abc", [np.nan] * 4, [0.0, 1.0]],
        "mean_strength": [0, -1, "a", np.inf],
        "var_prior": [-1.0, "a", [1.0, -1.0, 1.0, 1.0]],
        "var_dof": [2, 1, "a"],
        "divisor": ["foo", 1],
    },
    "LDA": {
        "mean_prior": ["abc", [0.0, 1.0]],
        "mean_strength": [0, "a"],
        "cov_target": [-1.0, "a", np.ones((2, 2))],
        "cov_dof": ["abc", 1.5, 4.5],  # 4.5 <= d + 1 = 5: checked once d is known
        "divisor": ["foo"],
        "cov_prior_form": ["foo", None],
    },
    "BernoulliNB": {"alpha": ["x", 0, -1, ["a"] * 6], "binarize": ["x", np.nan, np.inf]},
    "MultinomialNB": {"alpha": ["x", 0, [1.0, 2.0]]},
    "CategoricalNB": {"alpha": ["x", -2], "min_categories": [0, "x", 2.5]},
    "PoissonNB": {"alpha": ["x", 0.5, [0.5] * 6], "rate_prior": [-1.0, "x", [1.0, 2.0]]},
    "ExponentialNB": {"alpha": ["x", 0.5, [0.5] * 5],
                      "mean_prior": [-1.0, 0.0, "x", [1.0, 2.0], [1.0, 0.0, 1.0, 1.0, 1.0]]},
    "KernelNB": {"bandwidth_sd": [0, "x", np.inf]},
    "MixedNB": {
        "families": ["foo", 3, [("nope", [0])], [("gaussian", [0, 1], {"var_dof": "abc"})],
                     [("poisson", [0], {"alpha": 0.5})]],
        "alpha": ["x", 0],
    },
}
OWN_BAD["QDA"] = OWN_BAD["LDA"]


def _cases() -> list:
    return [
        pytest.param(name, param, value, id=f"{name}-{param}={value!r}"[:80])
        for name in sorted(CLASSIFIERS)
        for param, values in {**COMMON_BAD, **OWN_BAD[name]}.items()
        for value in values
    ]


@pytest.fixture(scope="module")
def data():
    return {kind: make_data(kind, n_per_class=8) for kind in {k for _, k in CLASSIFIERS.values()}}


@pytest.mark.parametrize(("name", "param", "value"), _cases())
def test_bad_parameter_raises_naming_it_for_every_method(data, name, param, value):
    factory, kind = CLASSIFIERS[name]
    if param == "families":
        factory = bg.MixedNB
    X, y = data[kind]
    # small sampler settings, so that a check that failed to fire would not be slow
    base = {"draws": 20, "tune": 20, "chains": 1, "progressbar": False}
    for method in CLASSIFIERS[name][0]()._methods:  # KernelNB has no "conjugate"
        kwargs = {**base, "method": method, param: value}
        if param == "method":
            kwargs["method"] = value
        clf = factory(**kwargs)
        with pytest.raises(ValueError, match=rf"\b{param}\b"):
            clf.fit(X, y)
        if param == "method":
            break


def test_kernel_nb_conjugate_explains(data):
    X, y = data["real"]
    with pytest.raises(ValueError, match=r"no conjugate prior.*method='mcmc'"):
        bg.KernelNB(method="conjugate").fit(X, y)


def test_invalid_parameter_error_is_raised_before_the_data_are_read():
    # the parameter error wins over the data error (X is garbage here)
    with pytest.raises(InvalidParameterError, match="'divisor' parameter of GaussianNB"):
        bg.GaussianNB(divisor="foo").fit([["a"]], ["b"])


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_sklearn_param_validation_check(name):
    """scikit-learn's own check: one constraint per parameter, and InvalidParameterError
    for a value of a wrong type and for a value outside each constraint."""
    factory, _ = CLASSIFIERS[name]
    check_param_validation(name, factory())


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_constraints_cover_exactly_the_constructor(name):
    clf = CLASSIFIERS[name][0]()
    assert set(clf._parameter_constraints) == set(clf.get_params(deep=False))


@pytest.mark.parametrize(
    "params",
    [
        {"cov_dof": None}, {"cov_dof": "auto"}, {"cov_dof": 10}, {"cov_dof": np.float64(7.5)},
        {"class_alpha": [1, 2, 3]}, {"class_alpha": np.array([1.0, 2.0, 3.0])},
        {"class_alpha": np.int64(2)}, {"mean_prior": 0.0}, {"cov_target": 2.0},
        {"cov_target": [1.0, 2.0, 1.0, 1.0]}, {"random_state": np.random.RandomState(0)},
        {"random_state": np.random.default_rng(0)}, {"random_state": np.int64(3)},
        {"draws": np.int64(5)}, {"progressbar": np.bool_(False)},
        {"loss": [[0, 1, 1], [1, 0, 1], [5, 5, 0]]},
    ],
)
def test_valid_values_are_accepted(data, params):
    X, y = data["real"]
    for method in ("mle", "map", "conjugate"):
        clf = bg.QDA(**{"method": method, "draws": 10, "chains": 2, **params}).fit(X, y)
        assert np.all(np.isfinite(clf.predict_proba(X)))


def test_valid_family_values_are_accepted(data):
    Xc, y = data["count"]
    bg.PoissonNB(alpha=1.0, rate_prior=2.0).fit(Xc, y)
    bg.MultinomialNB(alpha=[1.5] * 6).fit(Xc, y)
    bg.BernoulliNB(binarize=2.5).fit(Xc, y)
    Xk, y = data["categorical"]
    bg.CategoricalNB(min_categories=6).fit(Xk, y)
    bg.CategoricalNB(min_categories=[5, 5, 5, 5]).fit(Xk, y)
    Xp, y = data["positive"]
    bg.ExponentialNB(alpha=1.0, mean_prior=2.0).fit(Xp, y)
    bg.ExponentialNB(alpha=[1.5] * 5, mean_prior=[1.0, 2.0, 3.0, 4.0, 5.0]).fit(Xp, y)
    Xm, y = data["mixed"]
    clf = bg.MixedNB(families=[("gaussian", [0, 1], {"var_dof": 4}), ("bernoulli", [2, 3]),
                               ("poisson", (4, 5), {"alpha": 1.5})]).fit(Xm, y)
    assert clf.predict_proba(Xm).shape == (len(y), 3)
    clf = bg.MixedNB(families=[("gaussian", [0, 1]), ("bernoulli", [2, 3]),
                               ("exponential", (4, 5), {"alpha": 3.0, "mean_prior": 2.0})])
    assert clf.fit(Xm, y).predict_proba(Xm).shape == (len(y), 3)


def test_mixed_part_options_are_named(data):
    X, y = data["mixed"]
    spec = [("gaussian", [0, 1], {"var_dof": "abc"}), ("bernoulli", [2, 3]),
            ("poisson", [4, 5])]
    with pytest.raises(ValueError, match=r"'var_dof' parameter of MixedNB families\[0\]"):
        bg.MixedNB(families=spec).fit(X, y)


def test_clone_get_params_and_grid_search_still_work(data):
    X, y = data["real"]
    rng = np.random.default_rng(0)
    clf = bg.GaussianNB(method="conjugate", draws=10, chains=1, random_state=rng)
    twin = clone(clf)
    assert twin.get_params()["draws"] == 10
    assert isinstance(twin.get_params()["random_state"], np.random.Generator)
    grid = GridSearchCV(bg.GaussianNB(), {"class_alpha": [1.0, 2.0],
                                          "divisor": ["n", "unbiased"]}, cv=2).fit(X, y)
    assert grid.best_params_["class_alpha"] in (1.0, 2.0)
    # an invalid grid value is reported by name, as a ValueError
    with pytest.raises(ValueError, match="divisor"):
        GridSearchCV(bg.GaussianNB(), {"divisor": ["foo"]}, cv=2, error_score="raise").fit(X, y)


# --------------------------------------------------------------- random states
@pytest.mark.parametrize("kind", ["int", "none", "generator", "randomstate"])
def test_every_random_state_kind_works_for_conjugate(data, kind):
    X, y = data["real"]

    def make():
        return {"int": 7, "none": None, "generator": np.random.default_rng(7),
                "randomstate": np.random.RandomState(7)}[kind]

    a = bg.GaussianNB(method="conjugate", draws=50, chains=2, random_state=make()).fit(X, y)
    assert np.all(np.isfinite(a.predict_proba(X)))
    Xs, ys = a.sample(5, random_state=make())
    assert Xs.shape == (5, X.shape[1])
    a.sample_posterior_predictive(random_state=make())
    if kind != "none":  # a fresh seed of the same kind reproduces the draws
        b = bg.GaussianNB(method="conjugate", draws=50, chains=2, random_state=make()).fit(X, y)
        np.testing.assert_array_equal(a._params["mu"], b._params["mu"])


def test_int_seed_streams_are_unchanged():
    """The conjugate path still uses default_rng(seed); sample() and the predictive
    samplers still use default_rng(RandomState(seed).randint(2**31))."""
    a, b = rng_from(5), np.random.default_rng(5)
    assert a.integers(1 << 30) == b.integers(1 << 30)
    c, d = legacy_rng(5), np.random.default_rng(np.random.RandomState(5).randint(2**31))
    assert c.integers(1 << 30) == d.integers(1 << 30)
    assert seed_from(5) == 5 and seed_from(None) is None
    g = np.random.default_rng(1)
    assert legacy_rng(g) is g and rng_from(g) is g
    assert 0 <= seed_from(np.random.default_rng(1)) < 2**31
    assert seed_from(np.random.default_rng(1)) == seed_from(np.random.default_rng(1))


@pytest.mark.parametrize("bad", ["seed", -5, 2**32, 1.5, object()])
def test_random_state_helpers_name_the_parameter(bad):
    for helper in (rng_from, seed_from, legacy_rng):
        with pytest.raises(ValueError, match="random_state must be None, an int"):
            helper(bad)


def test_sample_rejects_a_bad_random_state(data):
    X, y = data["real"]
    clf = bg.GaussianNB().fit(X, y)
    with pytest.raises(ValueError, match="random_state"):
        clf.sample(3, random_state="seed")
