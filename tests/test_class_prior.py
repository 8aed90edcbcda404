"""A fixed class prior (``class_prior``, issue 13 item 3): pi is known, not estimated,
smoothed or sampled, for every estimator and method; scikit-learn's ``priors`` /
``class_prior`` / ``fit_prior=False`` equivalences; bad input."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest
from scipy.special import softmax
from sklearn import discriminant_analysis as skda
from sklearn import naive_bayes as sknb

import bayesgen as bg
from bayesgen.inference.model import build_stats_model
from tests.conftest import CLASSIFIERS, make_data

P = np.array([0.5, 0.3, 0.2])
CONJUGATE = sorted(set(CLASSIFIERS) - {"KernelNB"})


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
@pytest.mark.parametrize("method", ["mle", "map"])
def test_point_methods_plug_in_the_fixed_prior(name, method):
    """class_prior_ is the given prior, the family parameters do not change, and the
    probabilities are the plug-in Bayes rule with it."""
    factory, kind = CLASSIFIERS[name]
    X, y = make_data(kind)
    fixed = factory(method=method, class_prior=P).fit(X, y)
    free = factory(method=method).fit(X, y)
    np.testing.assert_array_equal(fixed.class_prior_, P)
    np.testing.assert_array_equal(fixed.class_log_prior_, np.log(P))
    log_lik = free.predict_joint_log_proba(X) - np.log(free.class_prior_)
    np.testing.assert_allclose(fixed.predict_joint_log_proba(X), log_lik + np.log(P),
                               rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(fixed.predict_proba(X), softmax(log_lik + np.log(P), axis=1),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", CONJUGATE)
def test_conjugate_draws_of_pi_are_constant(name):
    factory, kind = CLASSIFIERS[name]
    X, y = make_data(kind)
    kw = {"method": "conjugate", "draws": 100, "chains": 2, "random_state": 0}
    fixed = factory(class_prior=P, **kw).fit(X, y)
    free = factory(**kw).fit(X, y)
    np.testing.assert_array_equal(fixed._log_pi_draws, np.broadcast_to(np.log(P), (200, 3)))
    np.testing.assert_array_equal(fixed.idata_.posterior["pi"].values,
                                  np.broadcast_to(P, (2, 100, 3)))
    np.testing.assert_allclose(fixed.class_prior_, P, rtol=1e-15)
    # the closed-form predictive: log E[pi_k] (the Dirichlet posterior mean) -> log P
    conc = free.class_count_ + free.class_alpha_
    shift = np.log(P) - np.log(conc / conc.sum())
    np.testing.assert_allclose(fixed.predict_joint_log_proba(X),
                               free.predict_joint_log_proba(X) + shift, rtol=1e-12, atol=1e-9)
    # the draws of the family parameters are those of the free fit (same seed)
    for key in fixed._family.param_dims:
        np.testing.assert_array_equal(fixed._params[key], free._params[key])
    # pi is not a parameter: not in the summary (nor in the convergence checks and
    # trace plots), while idata_ keeps the constant pi for az.summary on request
    assert not any(str(row).startswith("pi") for row in fixed.summary().index)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # R-hat of a constant: NaN
        table = az.summary(fixed.idata_, var_names=["pi"])
    np.testing.assert_allclose(table["mean"], P)
    np.testing.assert_array_equal(table["sd"], 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_mcmc_pi_is_data(name):
    """NUTS samples the family parameters only: pi is a constant of the statistics
    model and every posterior draw equals class_prior."""
    factory, kind = CLASSIFIERS[name]
    X, y = make_data(kind, n_per_class=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        clf = factory(method="mcmc", class_prior=P, draws=60, tune=60, chains=2,
                      random_state=1, progressbar=False).fit(X, y)
    assert "pi" not in [v.name for v in build_stats_model(clf).free_RVs]
    np.testing.assert_array_equal(clf.idata_.posterior["pi"].values,
                                  np.broadcast_to(P, (2, 60, 3)))
    np.testing.assert_allclose(clf.class_prior_, P, rtol=1e-15)
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_model_holds_the_prior_as_data():
    X, y = make_data("real")
    clf = bg.GaussianNB(class_prior=P).fit(X, y)
    model = clf.build_model(X, y)
    assert "pi" not in [v.name for v in model.free_RVs]
    np.testing.assert_array_equal(model["class_prior"].get_value(), P)
    assert np.isfinite(model.compile_logp()(model.initial_point()))
    prior = clf.sample_prior_predictive(draws=20, random_state=0, X=X, y=y).prior
    np.testing.assert_allclose(prior["pi"].values, np.broadcast_to(P, (1, 20, 3)))
    # without class_prior, pi stays a Dirichlet random variable
    assert "pi" in [v.name for v in bg.GaussianNB().fit(X, y).build_model(X, y).free_RVs]


def test_sample_draws_classes_from_the_fixed_prior():
    X, y = make_data("count")
    clf = bg.PoissonNB(class_prior=P).fit(X, y)
    _, labels = clf.sample(20_000, random_state=0)
    freq = np.bincount(labels, minlength=3) / labels.size
    np.testing.assert_allclose(freq, P, atol=0.015)


def test_zero_prior_class_is_never_predicted():
    X, y = make_data("real")
    p = np.array([0.0, 0.5, 0.5])
    for method in ("map", "conjugate"):
        clf = bg.QDA(method=method, class_prior=p, draws=50, chains=2).fit(X, y)
        proba = clf.predict_proba(X)
        assert np.all(np.isfinite(proba)) and np.all(proba[:, 0] == 0.0)
        assert not np.any(clf.predict(X) == 0)


def test_save_load_keeps_the_fixed_prior(tmp_path):
    X, y = make_data("binary")
    clf = bg.BernoulliNB(method="conjugate", class_prior=P, draws=50, chains=2,
                         random_state=0).fit(X, y)
    clf.save(tmp_path / "m.nc")
    loaded = bg.load(tmp_path / "m.nc")
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(loaded.class_prior, P)


# -------------------------------------------------- scikit-learn equivalences
def test_sklearn_priors_lda_qda_gaussian_nb():
    X, y = make_data("real")
    pairs = [
        # scikit-learn's default svd solver: within-class covariance not weighted by
        # the priors (its lsqr/eigen solvers weight it by them: another model)
        (bg.LDA(method="mle", class_prior=P), skda.LinearDiscriminantAnalysis(priors=P)),
        (bg.QDA(method="mle", class_prior=P), skda.QuadraticDiscriminantAnalysis(priors=P)),
        (bg.GaussianNB(method="mle", class_prior=P), sknb.GaussianNB(var_smoothing=0, priors=P)),
    ]
    for ours, ref in pairs:
        ours.fit(X, y)
        ref.fit(X, y)
        np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-12)
    lda, ref = pairs[0]
    # svd's coef_ is Sigma^-1 (mu_k - xbar): equal to ours up to a term common to classes
    np.testing.assert_allclose(lda.coef_ - lda.coef_[0], ref.coef_ - ref.coef_[0], atol=1e-9)
    np.testing.assert_allclose(lda.intercept_ - lda.intercept_[0],
                               ref.intercept_ - ref.intercept_[0], atol=1e-9)
    # the projection weighs the classes by the priors too (xbar_ = priors @ means_)
    got, want = lda.transform(X), ref.transform(X)
    np.testing.assert_allclose(got * np.sign((got * want).sum(axis=0)), want, atol=1e-10)
    np.testing.assert_allclose(lda.xbar_, ref.xbar_, atol=1e-12)


def test_sklearn_discrete_class_prior_and_fit_prior():
    uniform = np.full(3, 1 / 3)
    cases = [
        ("count", bg.MultinomialNB(method="map", alpha=2, class_prior=uniform),
         sknb.MultinomialNB(fit_prior=False)),
        ("count", bg.MultinomialNB(method="map", alpha=2, class_prior=P),
         sknb.MultinomialNB(class_prior=P)),
        ("binary", bg.BernoulliNB(method="map", alpha=2, class_prior=uniform),
         sknb.BernoulliNB(fit_prior=False)),
        ("binary", bg.BernoulliNB(method="map", alpha=1.5, class_prior=P),
         sknb.BernoulliNB(alpha=0.5, class_prior=P)),
        ("categorical", bg.CategoricalNB(method="map", alpha=2, class_prior=P),
         sknb.CategoricalNB(class_prior=P)),
        ("categorical", bg.CategoricalNB(method="map", alpha=2, class_prior=uniform),
         sknb.CategoricalNB(fit_prior=False)),
    ]
    for kind, ours, ref in cases:
        X, y = make_data(kind)
        np.testing.assert_allclose(ours.fit(X, y).predict_proba(X),
                                   ref.fit(X, y).predict_proba(X), atol=1e-12)
        np.testing.assert_allclose(ours.class_log_prior_, ref.class_log_prior_, rtol=1e-14)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("value", "match"),
    [
        ([0.5, 0.3, 0.3], "must sum to 1"),
        ([0.5, 0.5], r"shape \(3,\)"),
        ([0.5, 0.25, 0.25, 0.0], r"shape \(3,\)"),
        ([[0.5, 0.3, 0.2]], r"shape \(3,\)"),
        ([1.2, -0.1, -0.1], "finite probabilities >= 0"),
        ([np.nan, 0.5, 0.5], "finite probabilities >= 0"),
        (["a", "b", "c"], "3 probabilities"),
    ],
)
def test_bad_class_prior_names_the_parameter(value, match):
    X, y = make_data("real")
    with pytest.raises(ValueError, match=f"class_prior.*{match}|{match}.*class_prior"):
        bg.GaussianNB(class_prior=value).fit(X, y)


def test_class_prior_tolerance_and_type():
    X, y = make_data("real")
    close = P + np.array([1e-9, 0.0, -2e-9])
    assert bg.LDA(class_prior=close).fit(X, y).class_prior_.sum() == pytest.approx(1, abs=1e-8)
    with pytest.raises(ValueError, match="class_prior"):
        bg.LDA(class_prior=P + np.array([1e-7, 0.0, 0.0])).fit(X, y)
    with pytest.raises(ValueError, match="class_prior"):  # type check (InvalidParameterError)
        bg.LDA(class_prior="uniform").fit(X, y)
