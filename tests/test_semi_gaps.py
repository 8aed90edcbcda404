"""LDA/QDA with both missing entries in X and unlabeled rows: data augmentation and NUTS
(MVNFamily.conditional_posterior, bayesgen.families.mvn.pymc_missing.rows_loglik)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal

import bayesgen as bg
from bayesgen.families.mvn import patterns as pat
from bayesgen.families.mvn import pymc_missing
from bayesgen.semi import nuts

MU = np.array([[0.0, 0.0, 0.0], [3.0, 0.5, 1.0]])
COV = np.array([[1.0, 0.4, 0.0], [0.4, 1.0, 0.3], [0.0, 0.3, 1.0]])


def _data(n, seed, p_missing=0.15, p_unlabeled=0.6):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = MU[y] + rng.standard_normal((n, 3)) @ np.linalg.cholesky(COV).T
    Xm = X.copy()
    Xm[rng.random((n, 3)) < p_missing] = np.nan
    ys = y.astype(float)
    ys[rng.random(n) < p_unlabeled] = np.nan
    ys[:4] = [0, 1, 0, 1]  # every class labeled
    return Xm, X, y, ys


@pytest.fixture(scope="module")
def data():
    return _data(90, 0)


def _quiet(make, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        return make().fit(X, y)


# ------------------------------------------------------------------ the Gibbs step
def test_conditional_posterior_without_gaps_is_the_conjugate_posterior():
    """Complete statistics: exactly family.posterior, no random numbers consumed."""
    rng0 = np.random.default_rng(3)
    X = rng0.standard_normal((40, 3))
    y = rng0.integers(0, 2, 40)
    clf = bg.QDA(method="map").fit(X, y)
    fam, stats = clf._family, clf._stats
    rng = np.random.default_rng(5)
    post = fam.conditional_posterior(stats, clf._params, clf._prior, rng)
    ref = fam.posterior(stats, clf._prior)
    for k in ref:
        assert np.array_equal(np.asarray(post[k]), np.asarray(ref[k]))
    assert rng.random() == np.random.default_rng(5).random()


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_conditional_posterior_completes_in_expectation(data, cls):
    """E[posterior mean m | theta] over the draws of x_mis equals the posterior mean
    of EM's expected statistics (m is linear in the completed class means)."""
    Xm, _, y, _ = data
    clf = cls(method="map").fit(Xm, y)
    fam, stats, theta = clf._family, clf._stats, clf._params
    groups = stats["groups"]
    cond = pat.condition(groups, theta, fam.tied)
    mean_g, scatter_g = pat.expected(groups, cond)
    done = pat.class_stats(groups, mean_g, scatter_g, 2, fam.tied)
    ref = fam.posterior({k: done[k] for k in ("count", "mean", "scatter")}, clf._prior)
    rng = np.random.default_rng(0)
    ms = np.stack([fam.conditional_posterior(stats, theta, clf._prior, rng)["m"]
                   for _ in range(2000)])
    se = ms.std(0) / np.sqrt(ms.shape[0])
    assert np.all(np.abs(ms.mean(0) - ref["m"]) < 5 * se + 1e-12)
    assert np.any(ms.std(0) > 0)  # the missing coordinates are drawn, not imputed


# ------------------------------------------------------------------ conjugate
@pytest.fixture(scope="module")
def da_lda(data):
    Xm, _, _, ys = data
    return _quiet(lambda: bg.LDA(method="conjugate", draws=300, tune=150, chains=2,
                                 random_state=0), Xm, ys)


def test_data_augmentation_fit(da_lda, data):
    Xm, X, y, ys = data
    clf = da_lda
    assert clf.n_unlabeled_ == int(np.isnan(ys).sum())
    assert clf.idata_.posterior.sizes["chain"] == 2
    assert "lp" in clf.idata_.sample_stats and np.all(np.isfinite(clf.idata_.sample_stats["lp"]))
    em = bg.LDA(method="map").fit(Xm, ys)  # the posterior mode, by EM over z and x_mis
    sd = clf.idata_.posterior["mu"].std(("chain", "draw")).values
    assert np.all(np.abs(clf.means_ - em.means_) < 0.5 * sd + 0.05)
    proba = clf.predict_proba(Xm)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(1), 1.0)
    assert (clf.predict(Xm) == y).mean() > 0.85
    # the unlabeled rows count: the posterior is narrower than the labeled-only one
    keep = ~np.isnan(ys)
    lab = _quiet(lambda: bg.LDA(method="conjugate", draws=300, tune=150, chains=2,
                                random_state=0), Xm[keep], ys[keep].astype(int))
    sd_lab = lab.idata_.posterior["mu"].std(("chain", "draw")).values
    assert np.all(sd < sd_lab)


def test_lambda_zero_is_the_labeled_only_gap_augmentation(data):
    Xm, _, _, ys = data
    keep = ~np.isnan(ys)
    kw = dict(method="conjugate", draws=60, tune=30, chains=2, random_state=4)
    a = _quiet(lambda: bg.QDA(unlabeled_weight=0.0, **kw), Xm, ys)
    b = _quiet(lambda: bg.QDA(**kw), Xm[keep], ys[keep].astype(int))
    assert np.array_equal(a._params["mu"], b._params["mu"])
    assert np.array_equal(a._params["cov"], b._params["cov"])
    assert np.array_equal(a.predict_joint_log_proba(Xm), b.predict_joint_log_proba(Xm))


def test_unlabeled_gaps_only(data):
    """Gaps in the unlabeled rows only: labeled-only start is i.i.d. conjugate, the
    augmentation still completes the unlabeled rows' statistics."""
    Xm, X, y, ys = data
    Xo = np.where(np.isnan(ys)[:, None], Xm, X)
    clf = _quiet(lambda: bg.LDA(method="conjugate", draws=100, tune=50, chains=2,
                                random_state=1), Xo, ys)
    assert np.all(np.isfinite(clf.means_)) and (clf.predict(X) == y).mean() > 0.85


# ------------------------------------------------------------------ NUTS
def _stats_model(cls, data, lam):
    """A fitted estimator's statistics model with the unlabeled rows' potential."""
    from bayesgen.inference import scoring
    from bayesgen.inference.model import build_stats_model

    Xm, _, _, ys = data
    keep = ~np.isnan(ys)
    clf = cls(method="map").fit(Xm[keep], ys[keep].astype(int))
    Zu = scoring.internal(clf, Xm[~keep])
    w = np.linspace(0.5, 1.5, Zu.shape[0])
    return clf, build_stats_model(clf, nuts.extra_likelihood(Zu, w, lam)), Zu, w


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_nuts_potential_by_hand(data, cls):
    """unlabeled_loglik at a random point = lambda sum_n w_n logsumexp_k(log pi_k +
    log N(x_o; mu_ko, Sigma_koo)) by scipy.stats on each row's observed coordinates."""
    clf, model, Zu, w = _stats_model(cls, data, 0.7)
    rng = np.random.default_rng(2)
    point = {k: v + 0.3 * rng.standard_normal(np.shape(v))
             for k, v in model.initial_point().items()}
    pot = next(p for p in model.potentials if p.name == "unlabeled_loglik")
    f = model.compile_fn(outs=[pot, model["mu"], model["cov"], model["pi"]],
                         inputs=model.value_vars, on_unused_input="ignore")
    value, mu, cov, pi = f(point)
    ref = 0.0
    for n, x in enumerate(Zu):
        o = ~np.isnan(x)
        terms = []
        for k in range(2):
            S = cov if clf._family.tied else cov[k]
            ll = (multivariate_normal(mu[k, o], S[np.ix_(o, o)]).logpdf(x[o])
                  if o.any() else 0.0)
            terms.append(np.log(pi[k]) + ll)
        ref += w[n] * logsumexp(terms)
    assert np.isclose(value, 0.7 * ref, rtol=1e-10, atol=1e-8)
    assert np.isnan(Zu).any()  # the case at hand: rows with different patterns


def test_pattern_columns_match_the_generic_columns(data):
    """Without gaps, the per-pattern columns equal pm.logp of the family's own observed
    MvNormal (the generic path of every other family)."""
    import pymc as pm
    import pytensor.tensor as pt

    clf, _, Zu, _ = _stats_model(bg.QDA, data, 1.0)
    Z = np.nan_to_num(Zu, nan=0.3)
    params = {"mu": pt.as_tensor(clf._params["mu"]), "cov": pt.as_tensor(clf._params["cov"])}
    cols = pymc_missing.rows_loglik(clf._family, params, Z, 2).eval()
    for k in range(2):
        ref = pm.logp(pm.MvNormal.dist(clf._params["mu"][k], clf._params["cov"][k]), Z).eval()
        assert np.allclose(cols[:, k], ref, rtol=1e-10)


@pytest.mark.slow
def test_augmentation_agrees_with_nuts():
    """The same posterior by two samplers: posterior means within Monte Carlo error."""
    Xm, _, _, ys = _data(70, 7, p_missing=0.2, p_unlabeled=0.5)
    kw = dict(draws=300, tune=300, chains=2, random_state=1)
    da = _quiet(lambda: bg.LDA(method="conjugate", **kw), Xm, ys)
    nuts = _quiet(lambda: bg.LDA(method="mcmc", progressbar=False, **kw), Xm, ys)
    for name in ("mu", "cov"):
        a = da.idata_.posterior[name].values
        b = nuts.idata_.posterior[name].values
        a, b = a.reshape(-1, *a.shape[2:]), b.reshape(-1, *b.shape[2:])
        sd = np.sqrt(a.var(0) + b.var(0))
        # difference of two means with effective sizes >= 60 each: 4 standard errors
        assert np.all(np.abs(a.mean(0) - b.mean(0)) <= 4 * sd / np.sqrt(60) + 1e-9), name
        assert np.allclose(a.std(0), b.std(0), rtol=0.35, atol=0.02), name
    assert np.abs(da.predict_proba(Xm) - nuts.predict_proba(Xm)).max() < 0.08
