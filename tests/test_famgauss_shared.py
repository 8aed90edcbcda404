"""The Gaussian families share one implementation of what is one formula: the
Normal-Inverse-Gamma entry hooks (GaussianNB = QDA's diagonal structure), the frame's
unit conversions and the likelihood maximiser. References: NumPy moments, scipy.stats."""

import numpy as np
import pytest
from scipy import stats

import bayesgen as bg
from bayesgen.families.gaussian import GaussianFamily
from bayesgen.families.mvn.diagonal import DiagonalMVNFamily
from bayesgen.families.mvn.family import MVNFamily

HOOKS = ("map", "log_prior", "conditional_posterior", "can_augment_labels", "draw",
         "log_predictive", "log_evidence", "loo_log_predictive", "loo_log_predictive_at",
         "far_log_predictive")


@pytest.mark.parametrize("hook", HOOKS)
def test_gaussian_nb_and_diagonal_structures_run_one_implementation(hook):
    assert getattr(GaussianFamily, hook) is getattr(DiagonalMVNFamily, hook)


@pytest.mark.parametrize("family", [GaussianFamily, MVNFamily, DiagonalMVNFamily])
def test_one_to_user_and_likelihood_maximiser(family):
    for hook in ("to_user", "prior_to_user", "likelihood_maximiser"):
        assert getattr(family, hook) is getattr(GaussianFamily, hook)


def _data(seed=0, n=40):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = 1e4 + 50.0 * rng.normal(size=(n, 3)) * [1.0, 1e-3, 10.0] + 30.0 * y[:, None]
    return X, y


def test_parameters_and_prior_in_the_units_of_x():
    """Point estimates against NumPy's moments in the units of X (the frame converts
    back), and the resolved priors' defaults (grand mean, pooled within-class variances)
    in the units of X."""
    X, y = _data()
    groups = [X[y == k] for k in (0, 1)]
    pooled = sum(((g - g.mean(0)) ** 2).sum(0) for g in groups) / len(X)
    gnb = bg.GaussianNB(method="mle").fit(X, y)
    np.testing.assert_allclose(gnb.theta_, [g.mean(0) for g in groups], rtol=1e-12)
    np.testing.assert_allclose(gnb.var_, [g.var(0) for g in groups], rtol=1e-9)
    qda = bg.QDA(method="mle").fit(X, y)
    diag = bg.QDA(method="mle", cov_structure="diag").fit(X, y)
    for k, g in enumerate(groups):
        np.testing.assert_allclose(qda.covariance_[k], np.cov(g.T, bias=True), rtol=1e-9)
        np.testing.assert_allclose(np.diag(diag.covariance_[k]), g.var(0), rtol=1e-9)
    fit = bg.GaussianNB(var_dof=5.0).fit(X, y)._fitted()
    prior = fit.family.prior_to_user(fit.prior)
    np.testing.assert_allclose(prior["m0"], X.mean(0), rtol=1e-12)
    np.testing.assert_allclose(prior["s0"], pooled, rtol=1e-9)
    np.testing.assert_allclose(prior["b0"], (5.0 - 2.0) * pooled / 2.0, rtol=1e-9)
    fit = bg.LDA(cov_dof=6.0).fit(X, y)._fitted()
    prior = fit.family.prior_to_user(fit.prior)
    np.testing.assert_allclose(prior["Psi0"], (6.0 - 3 - 1) * np.diag(pooled), rtol=1e-9)
    fit = bg.LDA(cov_dof=6.0, cov_structure="spherical").fit(X, y)._fitted()
    np.testing.assert_allclose(fit.family.prior_to_user(fit.prior)["s0"], pooled, rtol=1e-9)


def test_unbiased_divisor_maximiser_is_a_configured_copy():
    fam = GaussianFamily(divisor="unbiased")
    own = fam.likelihood_maximiser()
    assert own is not fam and own.divisor == "n" and fam.divisor == "unbiased"
    plain = MVNFamily(tied=True)
    assert plain.likelihood_maximiser() is plain


@pytest.mark.parametrize("structure", ["diag", "spherical"])
def test_predictive_is_the_student_t_of_the_posterior(structure):
    """The conjugate predictive of a diagonal (product of Student-t, scipy's t) or
    spherical (joint multivariate t, scipy's multivariate_t) structure, internal frame;
    far rows (beyond float64's squares) keep finite probabilities."""
    X, y = _data(1)
    est = bg.QDA(method="conjugate", cov_structure=structure, random_state=0).fit(X, y)
    fit = est._fitted()
    post, Z = fit.posterior, fit.frame.internal(X[:4] + 1.0)
    got = fit.family.log_predictive(Z, post)
    for k in range(2):
        a, b, kappa, m = (post[key][k] for key in ("a", "b", "kappa", "m"))
        scale2 = b * (1.0 + 1.0 / kappa) / a
        if structure == "diag":
            want = stats.t.logpdf(Z, df=2 * a, loc=m, scale=np.sqrt(scale2)).sum(1)
        else:
            want = stats.multivariate_t.logpdf(Z, loc=m, shape=np.diag(scale2), df=2 * a[0])
        np.testing.assert_allclose(got[:, k], want, rtol=1e-10)
    proba = est.predict_proba(np.array([[1e300, 1e4, 1e4], [1e4, -1e250, 1e4]]))
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(1), 1.0)
