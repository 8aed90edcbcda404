"""scikit-learn-only parameter names give a TypeError that names the public estimator
and the bayesgen equivalent (not Python's bare message naming a private base class)."""

import inspect

import pytest
from sklearn.base import clone

import bayesgen as bg
from bayesgen.estimators.sklearn_names import SKLEARN_ONLY

ESTIMATORS = [bg.LDA, bg.QDA, bg.GaussianNB, bg.BernoulliNB, bg.MultinomialNB,
              bg.CategoricalNB, bg.PoissonNB, bg.ExponentialNB, bg.KernelNB, bg.MixedNB]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(SKLEARN_ONLY))
def test_sklearn_only_names_name_the_estimator(cls, name):
    with pytest.raises(TypeError) as err:
        cls(**{name: 1})
    message = str(err.value)
    assert message.startswith(f"{cls.__name__} has no parameter {name!r}")
    assert "_MVNClassifier" not in message and "_Common" not in message


@pytest.mark.parametrize(("cls", "name", "equivalent"), [
    (bg.LDA, "priors", "class_prior="), (bg.QDA, "reg_param", "cov_dof="),
    (bg.LDA, "shrinkage", "cov_target="), (bg.GaussianNB, "var_smoothing", "var_prior="),
    (bg.MultinomialNB, "fit_prior", "class_prior="), (bg.MultinomialNB, "force_alpha", "alpha="),
    (bg.QDA, "store_covariance", "always stored"), (bg.LDA, "solver", "closed-form"),
])
def test_the_equivalent_is_named(cls, name, equivalent):
    with pytest.raises(TypeError, match="bayesgen's equivalent") as err:
        cls(**{name: 1})
    assert equivalent in str(err.value)


def test_no_counterpart_says_so():
    with pytest.raises(TypeError, match="no counterpart in MultinomialNB"):
        bg.MultinomialNB(reg_param=0.1)


def test_unknown_name_lists_the_parameters():
    with pytest.raises(TypeError, match=r"QDA got an unexpected keyword argument 'colour'; "
                                        r"its parameters are .*cov_dof"):
        bg.QDA(colour="red")


def test_positional_arguments_are_refused():
    with pytest.raises(TypeError, match="keyword arguments only"):
        bg.LDA("map")


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_signature_get_params_and_clone_unchanged(cls):
    params = inspect.signature(cls.__init__).parameters
    assert "method" in params and all(p.kind is p.KEYWORD_ONLY
                                      for n, p in params.items() if n != "self")
    est = cls(method="mle")
    assert clone(est).get_params() == est.get_params()
    assert set(est.get_params()) == set(params) - {"self"}
