"""The Normal-Inverse-Wishart algebra of LDA and QDA (``bayesgen.families.mvn.niw``)
against independent references: scipy's multivariate t for the predictive, the
evidence from scipy's Gamma_d and determinants, refits without the row for the
leave-one-out (own class and at other rows, LDA's shared covariance included), and the
generic log-normaliser differences of ``conjugate.Joint`` for the rank-one closed
forms."""

import numpy as np
import pytest
import scipy.stats as st
from scipy.special import multigammaln

from bayesgen.families import conjugate
from bayesgen.families.mvn.family import MVNFamily
from bayesgen.families.mvn.niw import NIW, natural_prior, posterior

K, D = 3, 4


def _data(n: int = 24, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D)) @ rng.normal(size=(D, D)) + 3.0
    y = np.arange(n) % K
    w = rng.uniform(0.5, 2.0, n)
    return X, y, w


@pytest.fixture(scope="module", params=[True, False], ids=["LDA", "QDA"])
def fitted(request):
    tied = request.param
    X, y, w = _data()
    family = MVNFamily(tied=tied, cov_dof=D + 4.0, mean_strength=0.3,
                       cov_target=np.linspace(0.5, 2.0, D), mean_prior=np.zeros(D))
    stats = family.stats(X, y, w, K)
    prior = family.prior(stats)
    return family, tied, X, y, w, prior, family.posterior(stats, prior)


def _student_t(x, post, k, tied):
    d = x.shape[-1]
    Psi = post["Psi"] if tied else post["Psi"][k]
    nu = float(post["nu"] if tied else post["nu"][k])
    df = nu - d + 1.0
    kappa = post["kappa"][k]
    return st.multivariate_t(post["m"][k], Psi * (kappa + 1.0) / (kappa * df), df=df).logpdf(x)


def test_predictive_is_scipy_multivariate_t(fitted):
    family, tied, X, y, w, prior, post = fitted
    Xt = np.random.default_rng(1).normal(size=(5, D)) + 3.0
    got = family.log_predictive(Xt, post)
    want = np.stack([_student_t(Xt, post, k, tied) for k in range(K)], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_evidence_is_the_gamma_determinant_formula(fitted):
    family, tied, X, y, w, prior, post = fitted
    stats = family.stats(X, y, w, K)
    got = conjugate.log_evidence(NIW(tied=tied), natural_prior(prior), post)
    N = stats["count"]
    nus = [post["nu"]] if tied else list(post["nu"])
    Psis = [post["Psi"]] if tied else list(post["Psi"])
    want = (-0.5 * N.sum() * D * np.log(np.pi)
            + 0.5 * D * np.log(prior["kappa0"] / post["kappa"]).sum())
    for nu, Psi in zip(nus, Psis, strict=True):
        want += (multigammaln(nu / 2.0, D) - multigammaln(prior["nu0"] / 2.0, D)
                 + 0.5 * prior["nu0"] * np.linalg.slogdet(prior["Psi0"])[1]
                 - 0.5 * nu * np.linalg.slogdet(Psi)[1])
    assert got == pytest.approx(want, rel=1e-12)


def _refit(family, X, y, w, prior, i):
    keep = np.arange(y.size) != i
    return family.posterior(family.stats(X[keep], y[keep], w[keep], K), prior)


def test_loo_and_loo_at_are_refits(fitted):
    family, tied, X, y, w, prior, post = fitted
    Xt = np.random.default_rng(2).normal(size=(4, D)) + 3.0
    Xt_gap = Xt.copy()
    Xt_gap[1, 2] = np.nan
    loo = family.loo_log_predictive(X, y, w, post)
    at_self = family.loo_log_predictive_at(X, y, w, post)
    at = family.loo_log_predictive_at(X, y, w, post, Xt)
    at_gap = family.loo_log_predictive_at(X, y, w, post, Xt_gap)
    for i in range(y.size):
        p = _refit(family, X, y, w, prior, i)
        self_row = family.log_predictive(X[i:i + 1], p)[0]
        assert loo[i] == pytest.approx(self_row[y[i]], rel=1e-10)
        np.testing.assert_allclose(at_self[i], self_row, rtol=1e-10)
        np.testing.assert_allclose(at[i], family.log_predictive(Xt, p), rtol=1e-10)
        np.testing.assert_allclose(at_gap[i], family.log_predictive(Xt_gap, p), rtol=1e-10)
    if tied:  # the shared block: other classes' columns change too
        full = family.log_predictive(X, post)
        other = (y + 1) % K
        assert np.all(at_self[np.arange(y.size), other] != full[np.arange(y.size), other])


def test_closed_forms_are_the_generic_differences():
    """QDA-shaped posteriors: NIW's predict and loo equal the differences of log Z that
    ``conjugate.Joint`` computes by default (its update, step and downdate)."""
    X, y, w = _data(seed=3)
    family = MVNFamily(tied=False, cov_dof=D + 2.5)
    stats = family.stats(X, y, w, K)
    post = posterior(stats, family.prior(stats), tied=False)
    alg = NIW(tied=False)
    generic = conjugate.Joint.predict(alg, post, X)
    np.testing.assert_allclose(alg.predict(post, X), generic, rtol=1e-10)
    np.testing.assert_allclose(alg.loo(post, X, y, w), conjugate.Joint.loo(alg, post, X, y, w),
                               rtol=1e-10)
    np.testing.assert_allclose(alg.loo_at(post, X, y, w, X[:5]),
                               conjugate.Joint.loo_at(alg, post, X, y, w, X[:5]), rtol=1e-10)
    back = alg.update(alg.downdate(conjugate.take(post, y), X, w), X, w)
    for key in post:
        np.testing.assert_allclose(back[key], conjugate.take(post, y)[key], rtol=1e-12)
