"""``hasattr`` and ``getattr(est, name, None)`` never raise: an absent attribute or
property is an ``AttributeError`` (``NotFittedError`` before fit, itself one), so
Python's protocols, IPython's completion and scikit-learn's own ``hasattr`` tests work.

Every public name of every estimator (attributes, properties and methods, as ``dir``
lists them, plus the fitted attributes of the API) is read in the unfitted state, after
a point fit, after a posterior fit, and after a posterior fit from statistics alone.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import bayesgen as bg
from tests.conftest import CLASSIFIERS, make_data

#: fitted attributes and properties of the API (some exist for some estimators only)
API_NAMES = [
    "classes_", "n_features_in_", "feature_names_in_", "class_count_", "class_prior_",
    "method_", "idata_", "model_", "theta_", "var_", "means_", "covariance_",
    "feature_count_", "feature_log_prob_", "category_count_", "coef_", "intercept_",
    "explained_variance_ratio_", "scalings_", "named_parts_", "parts_", "families_",
    "estimators_", "named_estimators_", "weights_", "loo_", "n_unlabeled_",
]


def _read_every_name(est) -> dict[str, bool]:
    """``hasattr`` of every public name; ``getattr(est, name, None)`` agrees with it."""
    names = {n for n in dir(est) if not n.startswith("_")} | set(API_NAMES)
    present = {}
    for name in sorted(names):
        present[name] = hasattr(est, name)  # raises if absence is not an AttributeError
        missing = object()
        assert (getattr(est, name, missing) is missing) is not present[name], name
        assert getattr(est, name, None) is None or present[name], name
    return present


def _fits(name: str):
    factory, kind = CLASSIFIERS[name]
    X, y = make_data(kind, n_per_class=15)
    out = {"unfitted": factory(method="map"), "map": factory(method="map").fit(X, y)}
    if name != "KernelNB":  # NUTS only: its posterior fits are tested elsewhere
        post = {"method": "conjugate", "draws": 20, "chains": 1, "random_state": 0}
        out["conjugate"] = factory(**post).fit(X, y)
        streamed = factory(**post)
        out["streamed"] = streamed.partial_fit(X, y, classes=np.unique(y))
    return out


@pytest.mark.parametrize("name", list(CLASSIFIERS))
def test_hasattr_never_raises(name):
    for state, est in _fits(name).items():
        present = _read_every_name(est)
        assert present["model_"] is (state == "conjugate"), state
        assert present["classes_"] is (state != "unfitted"), state
        assert present["idata_"] is (state in {"conjugate", "streamed"}), state


@pytest.mark.parametrize("name", ["QDA", "MultinomialNB", "MixedNB"])
def test_absent_model_is_an_attribute_error_naming_build_model(name):
    fits = _fits(name)
    for state in ("map", "streamed"):
        with pytest.raises(AttributeError, match=r"build_model\(X, y\)"):
            fits[state].model_
        assert getattr(fits[state], "model_", None) is None
    with pytest.raises(NotFittedError):
        fits["unfitted"].model_
    X, y = make_data(CLASSIFIERS[name][1], n_per_class=15)
    assert fits["map"].build_model(X, y)["y"].eval().shape == (y.size,)  # the remedy


def test_model_of_rows_pymc_cannot_observe_is_absent():
    """Term weights (non-integer counts) are fine for a posterior fit, but PyMC observes
    whole-number counts only: model_ is then absent (an AttributeError saying why)."""
    X, y = make_data("count", n_per_class=15)
    est = bg.MultinomialNB(method="conjugate", draws=20, chains=1).fit(X * 0.37, y)
    assert not hasattr(est, "model_")
    with pytest.raises(AttributeError, match="whole-number counts"):
        est.model_
    with pytest.raises(ValueError, match="whole-number counts"):  # an explicit call
        est.build_model(X * 0.37, y)


def test_stack_hasattr_never_raises():
    X, y = make_data("real", n_per_class=15)
    unfitted = bg.StackedClassifier()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = bg.StackedClassifier().fit(X, y)
    before, after = _read_every_name(unfitted), _read_every_name(fitted)
    for attr in ("weights_", "loo_", "named_estimators_", "estimators_", "classes_"):
        assert not before[attr] and after[attr]
    assert not hasattr(fitted, "model_")
