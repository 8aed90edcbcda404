"""LDA/QDA ``cov_structure`` = "diag", "spherical", "auto", "average" (mclust's EEI, VVI,
EII, VII and the choice or average of the estimator's three structures) against
independent references: numerical integration and brute-force Monte Carlo of the
evidence, GaussianNB (bayesgen's and scikit-learn's), closed-form Inverse-Gamma
posteriors written here from the Normal-Inverse-Gamma conjugacy, numerical maximisers of
the log posterior, and refits without each row.

The reference model, in the units of X, with explicit hyper-parameters (m0, kappa0, s0,
nu0, s), a0 = nu0 / 2, b0 = (nu0 - 2) s / 2, and G variance groups (LDA: one, QDA: one
per class)::

    diag       sigma2_gj ~ InvGamma(a0, b0 s0_j),  Var(x_j | k) = sigma2_gj
    spherical  v_g ~ InvGamma(a0, b0),             Var(x_j | k) = v_g s0_j
    mu_kj ~ N(m0_j, Var(x_j | k) / kappa0),  x_nj | y_n = k ~ N(mu_kj, Var(x_j | k))

Given the variances, the rows of one (class, feature) entry are jointly normal with mean
m0_j and covariance Var(x_j | k) (I + 1 1^T / kappa0) (the mean integrated out), which
is what the quadrature uses; the variances are then integrated numerically.
"""

from __future__ import annotations

import copy
import math
import re

import numpy as np
import pytest
from scipy import integrate, optimize, stats
from scipy.special import gammaln, logsumexp
from sklearn.base import clone
from sklearn.naive_bayes import GaussianNB as SkGaussianNB

import bayesgen as bg
from bayesgen.inference import exact_loo, scoring

ESTIMATORS = {"LDA": (bg.LDA, True), "QDA": (bg.QDA, False)}
MCLUST = {("LDA", "diag"): "EEI", ("QDA", "diag"): "VVI", ("LDA", "spherical"): "EII",
          ("QDA", "spherical"): "VII"}
OFFSET, SCALE = 1e6, 1e3  # the frame: X = Z * 1e3 + 1e6


# ----------------------------------------------------------------- helpers
def _data(d: int, n=(5, 7), seed: int = 0, spread=(1.0, 1.7)):
    """Two classes, d features, in the units X = Z * 1e3 + 1e6."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(n)), n)
    Z = (rng.normal(size=(y.size, d)) * np.asarray(spread)[y][:, None]
         * np.linspace(1.0, 0.6, d) + 1.5 * y[:, None])
    return Z * SCALE + OFFSET, y


def _hp(d: int) -> dict:
    """Explicit, data-independent hyper-parameters in the units of X."""
    return {"m0": np.full(d, OFFSET + 500.0), "kappa0": 0.5,
            "s0": np.array([1.5e6, 0.6e6, 1.1e6])[:d], "nu0": 4.0, "s": 1.3}


def _kw(hp: dict) -> dict:
    """The estimator options that give the prior ``hp``."""
    return {"mean_prior": hp["m0"], "mean_strength": hp["kappa0"], "cov_target": hp["s0"],
            "cov_dof": hp["nu0"], "cov_scale": hp["s"]}


def _label_term(y: np.ndarray, alpha: float = 1.0) -> float:
    """log p(y) of the Dirichlet(alpha)-multinomial label sequence."""
    c = np.bincount(y).astype(float)
    a = np.full(c.size, alpha)
    return float(gammaln(a.sum()) - gammaln(a.sum() + c.sum()) + np.sum(gammaln(a + c)
                                                                        - gammaln(a)))


def _entry_loglik(x: np.ndarray, m0: float, kappa0: float):
    """var -> log p(x_1..x_n | var) with the mean integrated out: the normal density of
    mean m0 1 and covariance var C, C = I + 1 1^T / kappa0 (log|C| and r^T C^-1 r by
    numpy's dense linear algebra, once)."""
    n = x.size
    if n == 0:
        return lambda var: 0.0
    C = np.eye(n) + np.ones((n, n)) / kappa0
    r = x - m0
    logdet = np.linalg.slogdet(C)[1]
    quad = float(r @ np.linalg.solve(C, r))
    return lambda var: -0.5 * (n * math.log(2.0 * math.pi * var) + logdet + quad / var)


def _quad_log(fn, a: float, scale: float) -> float:
    """log of int InvGamma(v; a, scale) exp(fn(v)) dv, by quadrature over t = log v."""
    prior = stats.invgamma(a, scale=scale)

    def g(t):
        return fn(math.exp(t)) + prior.logpdf(math.exp(t)) + t

    t0 = optimize.minimize_scalar(lambda t: -g(t), bracket=(math.log(scale) - 3.0,
                                                            math.log(scale) + 3.0)).x
    c = g(t0)
    value, _ = integrate.quad(lambda t: math.exp(g(t) - c), t0 - 40.0, t0 + 40.0, points=[t0],
                              epsabs=0.0, epsrel=1e-11, limit=400)
    return c + math.log(value)


def _groups(X, y, hp, tied, spherical):
    """The independent variances: (InvGamma scale, [(rows of an entry, variance factor,
    m0_j)]) each; NaN entries dropped."""
    d = X.shape[1]
    a0, b0 = hp["nu0"] / 2.0, (hp["nu0"] - 2.0) * hp["s"] / 2.0
    classes = [list(np.unique(y))] if tied else [[k] for k in np.unique(y)]

    def col(k, j):
        x = X[y == k, j]
        return x[~np.isnan(x)]

    out = []
    for ks in classes:
        if spherical:
            out.append((b0, [(col(k, j), hp["s0"][j], hp["m0"][j]) for k in ks
                             for j in range(d)]))
        else:
            out.extend((b0 * hp["s0"][j], [(col(k, j), 1.0, hp["m0"][j]) for k in ks])
                       for j in range(d))
    return a0, out


def _quadrature_evidence(X, y, hp, tied, spherical) -> float:
    """log p(X | y) by one quadrature per independent variance (means analytic)."""
    a0, groups = _groups(X, y, hp, tied, spherical)
    total = 0.0
    for scale, ents in groups:
        terms = [(_entry_loglik(x, m, hp["kappa0"]), f) for x, f, m in ents]
        total += _quad_log(lambda v, terms=terms: sum(fn(v * f) for fn, f in terms), a0, scale)
    return total


def _mc_evidence(X, y, hp, tied, spherical, draws: int, rng) -> tuple[float, float]:
    """Brute-force Monte Carlo: (log mean exp of the likelihood over prior draws of every
    variance and mean, its standard error on the log scale)."""
    a0, groups = _groups(X, y, hp, tied, spherical)
    loglik = np.zeros(draws)
    for scale, ents in groups:
        v = stats.invgamma(a0, scale=scale).rvs(size=draws, random_state=rng)
        for x, f, m in ents:
            var = v * f
            mu = m + np.sqrt(var / hp["kappa0"]) * rng.standard_normal(draws)
            loglik += stats.norm.logpdf(x[None, :], mu[:, None], np.sqrt(var)[:, None]).sum(1)
    top = loglik.max()
    w = np.exp(loglik - top)
    return top + math.log(w.mean()), float(w.std() / (w.mean() * math.sqrt(draws)))


def _fit(name, structure, X, y, method="conjugate", hp=None, w=None, **kw):
    cls, _ = ESTIMATORS[name]
    options = dict(_kw(hp)) if hp is not None else {}
    options.update(kw)
    if method == "conjugate":
        options = {"draws": 20, "chains": 1, "random_state": 0, **options}
    return cls(method=method, cov_structure=structure, **options).fit(X, y, sample_weight=w)


def _by_hand(X, y, hp, tied, spherical, w=None):
    """Conjugate posterior written from the Normal-Inverse-Gamma update of the observed
    entries, units of X: m, kappa (K, d) and per (class, feature) the Inverse-Gamma
    (a, b) of Var(x_j | k) (spherical: b_g s0_j)."""
    K, d = int(y.max()) + 1, X.shape[1]
    w = np.ones(y.size) if w is None else w
    a0, b0 = hp["nu0"] / 2.0, (hp["nu0"] - 2.0) * hp["s"] / 2.0
    m, kappa, N, B = (np.zeros((K, d)) for _ in range(4))
    for k in range(K):
        for j in range(d):
            x, wk = X[y == k, j], w[y == k]
            ok = ~np.isnan(x)
            x, wk = x[ok], wk[ok]
            N[k, j] = wk.sum()
            xbar = (wk * x).sum() / N[k, j]
            S = (wk * (x - xbar) ** 2).sum()
            kappa[k, j] = hp["kappa0"] + N[k, j]
            m[k, j] = (hp["kappa0"] * hp["m0"][j] + N[k, j] * xbar) / kappa[k, j]
            B[k, j] = S + hp["kappa0"] * N[k, j] / kappa[k, j] * (xbar - hp["m0"][j]) ** 2
    groups = [np.arange(K)] if tied else [np.array([k]) for k in range(K)]
    a, b = np.zeros((K, d)), np.zeros((K, d))
    for g in groups:
        if spherical:
            a[g] = a0 + N[g].sum() / 2.0
            b[g] = (b0 + (B[g] / hp["s0"]).sum() / 2.0) * hp["s0"]
        else:
            a[g] = a0 + N[g].sum(axis=0) / 2.0
            b[g] = b0 * hp["s0"] + B[g].sum(axis=0) / 2.0
    return {"m": m, "kappa": kappa, "a": a, "b": b}


def _user_posterior(est) -> dict:
    """The fitted conjugate posterior of a diag/spherical fit in the units of X."""
    post, frame = est._posterior, est._frame
    return {"m": frame.loc + frame.scale * post["m"], "kappa": post["kappa"], "a": post["a"],
            "b": post["b"] * frame.scale ** 2}


def _diag(cov):
    return np.diagonal(np.asarray(cov), axis1=-2, axis2=-1)


# ------------------------------------------------------------- 1. evidence
@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("structure", ["diag", "spherical"])
@pytest.mark.parametrize("name", ["LDA", "QDA"])
def test_evidence_equals_quadrature(name, structure, d):
    """log p(X, y) minus the label term is the numerically integrated evidence, in the
    units of X (frame scale ~1e3, offset 1e6)."""
    X, y = _data(d)
    hp = _hp(d)
    est = _fit(name, structure, X, y, hp=hp)
    assert est._frame.scale[0] >= 512  # the frame is exercised
    got = est.log_marginal_likelihood() - _label_term(y)
    want = _quadrature_evidence(X, y, hp, ESTIMATORS[name][1], structure == "spherical")
    assert got == pytest.approx(want, rel=0, abs=1e-8)
    assert est.prior_search_["structure"] == MCLUST[name, structure]


def test_evidence_equals_full_2d_quadrature_d1():
    """d = 1, VVI: each class's evidence as a 2-D integral over (mean, log variance),
    nothing analytic (scipy's trapezoid rule on a fine grid of the smooth, rapidly
    decaying integrand, which converges geometrically)."""
    X, y = _data(1)
    hp = _hp(1)
    a0, b0 = hp["nu0"] / 2.0, (hp["nu0"] - 2.0) * hp["s"] / 2.0 * hp["s0"][0]
    total = 0.0
    for k in (0, 1):
        x = X[y == k, 0]
        xbar, n = x.mean(), x.size
        t0 = math.log(x.var())
        u = np.linspace(-14.0, 14.0, 561)[:, None]  # mu = xbar + sqrt(v / n) u
        t = np.linspace(t0 - 12.0, t0 + 25.0, 1201)[None, :]  # v = e^t
        v = np.exp(t)
        sd = np.sqrt(v)
        mu = xbar + sd / math.sqrt(n) * u
        g = (stats.norm.logpdf(x[:, None, None], mu, sd).sum(axis=0)
             + stats.norm.logpdf(mu, hp["m0"][0], sd / math.sqrt(hp["kappa0"]))
             + stats.invgamma.logpdf(v, a0, scale=b0) + t + np.log(sd / math.sqrt(n)))
        c = g.max()
        inner = integrate.trapezoid(np.exp(g - c), u[:, 0], axis=0)
        total += c + math.log(integrate.trapezoid(inner, t[0]))
    est = _fit("QDA", "diag", X, y, hp=hp)
    assert est.log_marginal_likelihood() - _label_term(y) == pytest.approx(total, abs=1e-7)


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("structure", ["diag", "spherical"])
@pytest.mark.parametrize("name", ["LDA", "QDA"])
def test_evidence_equals_monte_carlo(name, structure, d):
    """log-mean-exp of the likelihood over prior draws of every variance and mean."""
    X, y = _data(d, n=(3, 4), seed=1)
    hp = dict(_hp(d), kappa0=2.0, m0=np.full(d, OFFSET + 700.0))
    est = _fit(name, structure, X, y, hp=hp)
    got = est.log_marginal_likelihood() - _label_term(y)
    mc, se = _mc_evidence(X, y, hp, ESTIMATORS[name][1], structure == "spherical",
                          200_000, np.random.default_rng(7))
    assert se < 0.05
    assert abs(got - mc) < 4.0 * se + 1e-3, (got, mc, se)


@pytest.mark.parametrize("structure", ["diag", "spherical"])
@pytest.mark.parametrize("name", ["LDA", "QDA"])
def test_predictive_is_the_ratio_of_quadrature_evidences(name, structure):
    """The conjugate predictive log p(x | y = k, D) = log p(D + (x, k)) - log p(D), both
    by quadrature, for a complete row and one with a missing entry (spherical: the
    shared variance couples the observed features)."""
    X, y = _data(2)
    hp = _hp(2)
    tied, spherical = ESTIMATORS[name][1], structure == "spherical"
    est = _fit(name, structure, X, y, hp=hp)
    rows = np.array([[OFFSET + 900.0, OFFSET - 1200.0], [OFFSET + 2500.0, np.nan]])
    Z = scoring.internal(est, est._check_X_predict(rows))
    got = est._family.log_predictive(Z, est._posterior)
    base = _quadrature_evidence(X, y, hp, tied, spherical)
    for r, x in enumerate(rows):
        jacobian = np.log(est._frame.scale[~np.isnan(x)]).sum()
        for k in (0, 1):
            more = _quadrature_evidence(np.vstack([X, x]), np.append(y, k), hp, tied,
                                        spherical)
            assert got[r, k] - jacobian == pytest.approx(more - base, abs=1e-8), (r, k)


# ------------------------------------------------------- 2. VVI = GaussianNB
def _gnb_pair(X, y, method, hp, w=None):
    gnb = bg.GaussianNB(method=method, mean_prior=hp["m0"], mean_strength=hp["kappa0"],
                        var_prior=hp["s0"], var_dof=hp["nu0"], var_scale=hp["s"],
                        **({"draws": 20, "chains": 1, "random_state": 0}
                           if method == "conjugate" else {}))
    return gnb.fit(X, y, sample_weight=w), _fit("QDA", "diag", X, y, method=method, hp=hp, w=w)


@pytest.mark.parametrize("missing", [False, True], ids=["complete", "nan"])
def test_vvi_is_gaussian_nb(missing):
    """Same prior, same model: evidence, MAP and conjugate predictive, with NaN too."""
    X, y = _data(3, n=(8, 9), seed=2)
    hp = _hp(3)
    w = np.random.default_rng(0).uniform(0.5, 2.0, y.size)
    if missing:
        X = X.copy()
        X[[0, 3, 9, 12], [1, 0, 2, 1]] = np.nan
    Xt, _ = _data(3, n=(4, 4), seed=3)
    Xt[0, 1] = np.nan
    gnb, qda = _gnb_pair(X, y, "conjugate", hp, w)
    assert qda.log_marginal_likelihood() == pytest.approx(gnb.log_marginal_likelihood(),
                                                          rel=1e-12)
    np.testing.assert_allclose(qda.predict_joint_log_proba(Xt), gnb.predict_joint_log_proba(Xt),
                               rtol=1e-11)
    np.testing.assert_allclose(qda.predict_proba(Xt), gnb.predict_proba(Xt), rtol=1e-10,
                               atol=1e-14)
    Zt = scoring.internal(qda, qda._check_X_predict(Xt))
    Zg = scoring.internal(gnb, gnb._check_X_predict(Xt))
    np.testing.assert_allclose(  # the conjugate predictive densities, units of X
        qda._family.log_predictive(Zt, qda._posterior) - qda._frame.log_jacobian,
        gnb._family.log_predictive(Zg, gnb._posterior) - gnb._frame.log_jacobian, rtol=1e-11)
    gnb, qda = _gnb_pair(X, y, "map", hp, w)
    np.testing.assert_allclose(_diag(qda.covariance_), gnb.var_, rtol=1e-11)
    np.testing.assert_allclose(qda.means_, gnb.theta_, rtol=1e-13)
    np.testing.assert_allclose(qda.predict_proba(Xt), gnb.predict_proba(Xt), rtol=1e-10,
                               atol=1e-14)


def test_vvi_default_target_is_gaussian_nb_default():
    """QDA(cov_structure="diag", cov_dof=3) is GaussianNB(var_dof=3): same default prior."""
    X, y = _data(3, n=(8, 9), seed=4)
    qda = bg.QDA(cov_structure="diag", cov_dof=3.0).fit(X, y)
    gnb = bg.GaussianNB(var_dof=3.0).fit(X, y)
    np.testing.assert_allclose(_diag(qda.covariance_), gnb.var_, rtol=1e-11)
    np.testing.assert_allclose(qda.predict_proba(X), gnb.predict_proba(X), rtol=1e-10,
                               atol=1e-14)


# ------------------------------------------------------------------- 3. MLE
@pytest.mark.parametrize("divisor", ["n", "unbiased"])
def test_mle_formulas(divisor):
    X, y = _data(3, n=(8, 11), seed=5)
    K, d, N = 2, 3, y.size
    nk = np.bincount(y)
    S = np.array([((X[y == k] - X[y == k].mean(0)) ** 2).sum(0) for k in range(K)])  # (K, d)
    unbiased = divisor == "unbiased"
    s0 = _hp(3)["s0"]
    eei = bg.LDA(method="mle", cov_structure="diag", divisor=divisor).fit(X, y)
    np.testing.assert_allclose(eei.covariance_, np.diag(S.sum(0) / (N - K * unbiased)),
                               rtol=1e-12)
    vvi = bg.QDA(method="mle", cov_structure="diag", divisor=divisor).fit(X, y)
    if not unbiased:
        sk = SkGaussianNB(var_smoothing=0.0).fit(X, y)
        np.testing.assert_allclose(_diag(vvi.covariance_), sk.var_, rtol=1e-11)
        np.testing.assert_allclose(vvi.means_, sk.theta_, rtol=1e-13)
    np.testing.assert_allclose(_diag(vvi.covariance_), S / (nk[:, None] - unbiased), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(vvi.covariance_) - np.apply_along_axis(
        np.diag, 1, _diag(vvi.covariance_)), 0.0)
    eii = bg.LDA(method="mle", cov_structure="spherical", cov_target=s0,
                 divisor=divisor).fit(X, y)
    v = (S / s0).sum() / (d * (N - K * unbiased))
    np.testing.assert_allclose(eii.covariance_, v * np.diag(s0), rtol=1e-12)
    vii = bg.QDA(method="mle", cov_structure="spherical", cov_target=s0,
                 divisor=divisor).fit(X, y)
    vk = (S / s0).sum(1) / (d * (nk - unbiased))
    np.testing.assert_allclose(vii.covariance_, vk[:, None, None] * np.diag(s0), rtol=1e-12)
    # the default target: the pooled within-class variances, so EII's default MLE is
    # sum_j S_j / (S_j / N) / (N d) = 1 times them... in the units of X
    default = bg.LDA(method="mle", cov_structure="spherical", divisor=divisor).fit(X, y)
    pooled = S.sum(0) / N
    v = (S / pooled).sum() / (d * (N - K * unbiased))
    np.testing.assert_allclose(default.covariance_, v * np.diag(pooled), rtol=1e-10)


# ------------------------------------------------------------- 4. MAP mode
@pytest.mark.parametrize("structure", ["diag", "spherical"])
@pytest.mark.parametrize("name", ["LDA", "QDA"])
def test_map_is_the_joint_mode(name, structure):
    """MAP (means, variances) maximise log-likelihood + log prior density in (mu, sigma2),
    found here by a generic numerical maximiser (unit-scale data: no frame)."""
    rng = np.random.default_rng(8)
    y = np.repeat([0, 1], [4, 5])
    X = rng.normal(size=(y.size, 2)) * [1.0, 0.5] + y[:, None]
    hp = {"m0": np.array([0.3, -0.2]), "kappa0": 0.7, "s0": np.array([1.2, 0.4]), "nu0": 5.0,
          "s": 0.8}
    tied, spherical = ESTIMATORS[name][1], structure == "spherical"
    K, d = 2, 2
    a0, b0 = hp["nu0"] / 2.0, (hp["nu0"] - 2.0) * hp["s"] / 2.0
    G = 1 if tied else K
    n_var = G * (1 if spherical else d)

    def unpack(p):
        mu = p[:K * d].reshape(K, d)
        t = p[K * d:].reshape(G, -1)
        var = np.exp(t) * hp["s0"] if spherical else np.exp(t)  # (G, d)
        return mu, np.broadcast_to(var, (K, d)) if tied else var, np.exp(t)

    def log_post(p):
        mu, var, raw = unpack(p)
        out = stats.norm.logpdf(X, mu[y], np.sqrt(var[y])).sum()
        out += stats.norm.logpdf(mu, hp["m0"], np.sqrt(var / hp["kappa0"])).sum()
        scale = b0 if spherical else b0 * hp["s0"]
        out += stats.invgamma.logpdf(raw, a0, scale=scale).sum()
        return out

    start = np.concatenate([np.array([X[y == k].mean(0) for k in range(K)]).ravel(),
                            np.zeros(n_var)])
    res = optimize.minimize(lambda p: -log_post(p), start, method="BFGS",
                            options={"gtol": 1e-10})
    mu, var, _ = unpack(res.x)
    est = _fit(name, structure, X, y, method="map", hp=hp)
    np.testing.assert_allclose(est.means_, mu, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(_diag(est.covariance_), var[0] if tied else var, rtol=1e-6)
    # and it is a maximum: log_post at the estimator's values is not below the optimiser's
    p = np.concatenate([est.means_.ravel(), np.log(
        (_diag(est.covariance_)[None] if tied else _diag(est.covariance_))
        / (hp["s0"] if spherical else 1.0))[:, :1 if spherical else d].ravel()])
    assert log_post(p) >= -res.fun - 1e-9


# -------------------------------------------------------------- 5. exact LOO
def _loo_setup(name, structure, missing=False, seed=9):
    X, y = _data(2, n=(6, 7), seed=seed)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, y.size)
    w[::3] = 1.0  # rows of weight 1 and others ("average" re-weights them differently)
    if missing:
        X = X.copy()
        X[[1, 4, 8, 11], [0, 1, 1, 0]] = np.nan
    hp = dict(_hp(2), nu0=5.0)
    est = _fit(name, structure, X, y, hp=hp, w=w)
    Z = scoring.internal(est, est._check_X_predict(X))
    Xt, _ = _data(2, n=(2, 3), seed=seed + 1)
    Zt = scoring.internal(est, est._check_X_predict(Xt))
    return est, X, y, w, Z, Zt


def _member_refit(family, prior, stats_rest, Z_test):
    """log p(z_test | y = k, D without a row), (m, K), recomputed from the statistics of
    the other rows under the fit's prior (held fixed); for "auto"/"average" the
    structures re-weighted by their evidences on those rows."""
    if not hasattr(family, "members"):
        return family.log_predictive(Z_test, family.posterior(stats_rest, prior))
    if not family.average:
        s = family.chosen(prior)
        member = family.members[s]
        return member.log_predictive(Z_test, member.posterior(stats_rest, prior["members"][s]))
    log_ev = np.array([m.log_evidence(stats_rest, p, lambda: None, method="conjugate",
                                      who="test")
                       for m, p in zip(family.members, prior["members"], strict=True)])
    log_w = log_ev - logsumexp(log_ev)
    parts = [lw + m.log_predictive(Z_test, m.posterior(stats_rest, p))
             for lw, m, p in zip(log_w, family.members, prior["members"], strict=True)]
    return logsumexp(np.stack(parts), axis=0)


CHOICES = [("LDA", "diag"), ("QDA", "diag"), ("LDA", "spherical"), ("QDA", "spherical"),
           ("LDA", "auto"), ("QDA", "auto"), ("LDA", "average"), ("QDA", "average")]


@pytest.mark.parametrize(("name", "structure", "missing"),
                         [(*c, False) for c in CHOICES] + [(*c, True) for c in CHOICES[:4]])
def test_loo_hooks_equal_refits(name, structure, missing):
    """loo_log_predictive and loo_log_predictive_at (at test rows and Z_test=None) equal
    the posterior recomputed without each row (weighted rows, so that "average" needs
    the evidences of the downdated statistics; NaN for diag/spherical)."""
    est, X, y, w, Z, Zt = _loo_setup(name, structure, missing)
    family, post, prior = copy.deepcopy(est._family), est._posterior, est._prior
    K = est.classes_.size
    at = family.loo_log_predictive_at(Z, y, w, post, Zt)
    at_rows = family.loo_log_predictive_at(Z, y, w, post)
    loo = family.loo_log_predictive(Z, y, w, post)
    for i in range(y.size):
        rest = np.arange(y.size) != i
        s_rest = family.stats(Z[rest], y[rest], w[rest], K)
        np.testing.assert_allclose(at[i], _member_refit(family, prior, s_rest, Zt),
                                   rtol=1e-10, atol=1e-9)
        own = _member_refit(family, prior, s_rest, Z[i:i + 1])[0]
        np.testing.assert_allclose(at_rows[i], own, rtol=1e-10, atol=1e-9)
        assert loo[i] == pytest.approx(own[y[i]], rel=1e-10, abs=1e-9)


@pytest.mark.parametrize(("name", "structure"), CHOICES)
def test_loo_equals_estimator_refits(name, structure):
    """Exact LOO joint log p(x_i, y = k | D without i) against clone(est).fit without the
    row (data-independent prior): for "average" this checks the re-weighting
    w_s^(-i) ~ p_s(X without i) (w_s / p_s(x_i | y_i, D without i) for weight-1 rows);
    for "auto" at the rows whose refit keeps the structure (the LOO holds it fixed)."""
    est, X, y, w, _, _ = _loo_setup(name, structure)
    got, _ = exact_loo.loo_log_joint(est)
    compared = 0
    for i in range(y.size):
        keep = np.arange(y.size) != i
        refit = clone(est).fit(X[keep], y[keep], sample_weight=w[keep])
        if structure == "auto" and (refit.prior_search_["structure"]
                                    != est.prior_search_["structure"]):
            continue
        compared += 1
        np.testing.assert_allclose(got[i], refit.predict_joint_log_proba(X[i:i + 1])[0],
                                   rtol=0, atol=1e-8)
    assert compared >= (4 if structure == "auto" else y.size)


@pytest.mark.parametrize("name", ["LDA", "QDA"])
def test_average_weights_are_used(name):
    """The averaged LOO differs from every member's: the weights are not one-hot."""
    est, X, y, w, Z, _ = _loo_setup(name, "average")
    weights = [row["weight"] for row in est.prior_search_["structures"]]
    assert max(weights) < 0.99, weights


# ----------------------------------------------------------- 6. conjugate draws
@pytest.fixture(scope="module")
def draws_fits():
    X, y = _data(2, n=(9, 11), seed=10)
    hp = dict(_hp(2), nu0=6.0)
    fits = {key: _fit(*key, X, y, hp=hp, draws=4000, chains=2)
            for key in [("LDA", "diag"), ("QDA", "diag"), ("LDA", "spherical"),
                        ("QDA", "spherical")]}
    return X, y, hp, fits


@pytest.mark.parametrize(("name", "structure"), CHOICES[:4])
def test_draws_match_inverse_gamma(draws_fits, name, structure):
    """Mean and variance of the covariance diagonal's draws: b / (a - 1) and
    b^2 / ((a - 1)^2 (a - 2)) of the closed-form Inverse-Gamma posterior."""
    X, y, hp, fits = draws_fits
    est = fits[name, structure]
    tied = ESTIMATORS[name][1]
    ref = _by_hand(X, y, hp, tied, structure == "spherical")
    a, b = (ref[k][0] if tied else ref[k] for k in ("a", "b"))
    draws = _diag(est.idata_.posterior["cov"].values).reshape(-1, *a.shape)
    S = draws.shape[0]
    mean, var = b / (a - 1.0), b**2 / ((a - 1.0) ** 2 * (a - 2.0))
    assert np.all(np.abs(draws.mean(0) - mean) < 5.0 * np.sqrt(var / S))
    np.testing.assert_allclose(draws.var(0), var, rtol=0.2)
    if structure == "spherical":  # every draw is proportional to s0
        np.testing.assert_allclose(draws[..., 1] / draws[..., 0],
                                   hp["s0"][1] / hp["s0"][0], rtol=1e-10)
    mu = est.idata_.posterior["mu"].values.reshape(-1, 2, 2)
    assert np.all(np.abs(mu.mean(0) - ref["m"]) < 5.0 * np.sqrt(
        (b / (a - 1.0)) / ref["kappa"] / S))


@pytest.fixture(scope="module")
def average_fit():
    """LDA(cov_structure="average") whose three weights are all sizeable."""
    rng = np.random.default_rng(11)
    y = np.repeat([0, 1], 6)
    X = rng.normal(size=(12, 2)) @ np.array([[1.0, 0.3], [0.0, 0.9]]) + y[:, None]
    X = X * SCALE + OFFSET
    hp = {"m0": np.full(2, OFFSET), "kappa0": 0.5, "s0": np.array([1e6, 0.9e6]), "nu0": 5.0,
          "s": 1.0}
    est = _fit("LDA", "average", X, y, hp=hp, draws=3000, chains=2)
    return X, y, hp, est


def test_average_draws_come_in_proportion_to_weights(average_fit):
    X, y, hp, est = average_fit
    weights = np.array([row["weight"] for row in est.prior_search_["structures"]])
    assert np.all(weights > 0.05), weights
    cov = est.idata_.posterior["cov"].values.reshape(-1, 2, 2)
    full = np.abs(cov[:, 0, 1]) > 0
    spherical = ~full & np.isclose(cov[:, 0, 0] / cov[:, 1, 1], hp["s0"][0] / hp["s0"][1],
                                   rtol=1e-9, atol=0)
    counts = np.array([spherical.sum(), (~full & ~spherical).sum(), full.sum()])
    S = cov.shape[0]
    assert np.all(np.abs(counts - S * weights) < 4.0 * np.sqrt(S * weights * (1 - weights))), (
        counts, S * weights)


def test_average_predictive_is_the_weighted_mixture(average_fit):
    """p(x, y = k | D) of "average" = logsumexp_s(log w_s + member s's), the members
    fitted alone with the same prior; and its evidence is log mean_s p(X | y, s)."""
    X, y, hp, est = average_fit
    Xt, _ = _data(2, n=(3, 3), seed=12)
    rows = est.prior_search_["structures"]
    members = {row["cov_structure"]: _fit("LDA", row["cov_structure"], X, y, hp=hp)
               for row in rows}
    mix = logsumexp(np.stack([np.log(row["weight"])
                              + members[row["cov_structure"]].predict_joint_log_proba(Xt)
                              for row in rows]), axis=0)
    np.testing.assert_allclose(est.predict_joint_log_proba(Xt), mix, rtol=1e-11)
    evidences = [members[row["cov_structure"]].log_marginal_likelihood() for row in rows]
    assert est.log_marginal_likelihood() == pytest.approx(logsumexp(evidences) - np.log(3),
                                                          rel=1e-12)
    for row in rows:  # the reported log evidences are the members' (without the labels)
        assert row["log_evidence"] == pytest.approx(
            members[row["cov_structure"]].log_marginal_likelihood() - _label_term(y),
            rel=1e-12)
    auto = _fit("LDA", "auto", X, y, hp=hp)
    best = max(rows, key=lambda row: row["weight"])["cov_structure"]
    np.testing.assert_allclose(auto.predict_joint_log_proba(Xt),
                               members[best].predict_joint_log_proba(Xt), rtol=1e-12)


# ---------------------------------------------------------- 7. missing entries
@pytest.mark.parametrize(("name", "structure"), CHOICES[:4])
def test_missing_entries_posterior_and_evidence(name, structure):
    """With NaN the posterior is the Normal-Inverse-Gamma update of the observed entries
    only (built by hand), MAP too, and the evidence integrates them numerically."""
    X, y = _data(2, n=(6, 7), seed=13)
    X = X.copy()
    X[[0, 2, 7, 10, 12], [1, 0, 0, 1, 1]] = np.nan
    w = np.random.default_rng(13).uniform(0.5, 2.0, y.size)
    hp = _hp(2)
    tied, spherical = ESTIMATORS[name][1], structure == "spherical"
    est = _fit(name, structure, X, y, hp=hp, w=w)
    ref = _by_hand(X, y, hp, tied, spherical, w)
    got = _user_posterior(est)
    for key in ("m", "kappa", "a", "b"):
        np.testing.assert_allclose(got[key], ref[key], rtol=1e-11, err_msg=key)
    # evidence, unweighted (the quadrature's rows are whole observations)
    est = _fit(name, structure, X, y, hp=hp)
    assert est.log_marginal_likelihood() - _label_term(y) == pytest.approx(
        _quadrature_evidence(X, y, hp, tied, spherical), abs=1e-8)
    # MAP: mu = m, sigma2 = b / (a + 1 + M / 2), M class means sharing the variance
    ref = _by_hand(X, y, hp, tied, spherical)
    M = (2 if tied else 1) * (2 if spherical else 1)
    est = _fit(name, structure, X, y, method="map", hp=hp)
    np.testing.assert_allclose(est.means_, ref["m"], rtol=1e-12)
    var = ref["b"] / (ref["a"] + 1.0 + M / 2.0)
    np.testing.assert_allclose(_diag(est.covariance_), var[0] if tied else var, rtol=1e-11)


# ----------------------------------------------------------- 8. streaming
def _assert_same_search(a, b, path="prior_search_"):
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for key in a:
            _assert_same_search(a[key], b[key], f"{path}[{key!r}]")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), path
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            _assert_same_search(u, v, f"{path}[{i}]")
    elif isinstance(a, str) or a is None:
        assert a == b, path
    else:
        np.testing.assert_allclose(a, b, rtol=1e-8, err_msg=path)


@pytest.mark.parametrize("structure", ["diag", "spherical", "auto"])
@pytest.mark.parametrize("name", ["LDA", "QDA"])
def test_partial_fit_and_merge_equal_one_fit(name, structure):
    """Default (data-dependent) priors: 3 partial_fit batches and bg.merge of 3 shards
    give one fit's predict_proba and prior_search_."""
    rng = np.random.default_rng(14)
    y = rng.integers(0, 3, 90)
    X = rng.normal(size=(90, 3)) * [1.0, 3.0, 0.5] + y[:, None] * [1.0, 0.5, 0.2]
    X = X * SCALE + OFFSET
    cls = ESTIMATORS[name][0]
    one = cls(cov_structure=structure).fit(X, y)
    stream = cls(cov_structure=structure)
    for part in np.array_split(np.arange(90), 3):
        stream.partial_fit(X[part], y[part], classes=[0, 1, 2])
    merged = bg.merge(*[cls(cov_structure=structure).fit(X[p], y[p])
                        for p in np.array_split(np.arange(90), 3)])
    for other in (stream, merged):
        np.testing.assert_allclose(other.predict_proba(X), one.predict_proba(X), rtol=1e-8,
                                   atol=1e-10)
        _assert_same_search(other.prior_search_, one.prior_search_)


# ---------------------------------------------------------------- 9. NUTS
@pytest.fixture(scope="module")
def mcmc_fits():
    X, y = _data(2, n=(10, 12), seed=15)
    hp = dict(_hp(2), nu0=6.0)
    fits = {}
    for key in [("LDA", "spherical"), ("QDA", "diag")]:
        fits[key] = _fit(*key, X, y, method="mcmc", hp=hp, draws=400, tune=400, chains=2,
                         random_state=1, progressbar=False)
    fits["auto"] = bg.QDA(method="mcmc", cov_structure="auto", draws=100, tune=100, chains=1,
                          random_state=1, progressbar=False).fit(X, y)
    return X, y, hp, fits


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayesgen.ConvergenceWarning")
@pytest.mark.parametrize(("name", "structure"), [("LDA", "spherical"), ("QDA", "diag")])
def test_mcmc_agrees_with_conjugate(mcmc_fits, name, structure):
    import arviz as az

    X, y, hp, fits = mcmc_fits
    est = fits[name, structure]
    tied = ESTIMATORS[name][1]
    ref = _by_hand(X, y, hp, tied, structure == "spherical")
    a, b = (ref[k][0] if tied else ref[k] for k in ("a", "b"))
    cov = est.idata_.posterior["cov"]
    diag = _diag(cov.values)  # (chain, draw, [K,] d)
    mcse = np.asarray(az.mcse(az.convert_to_dataset(
        {"v": diag}), method="mean")["v"].values)
    assert np.all(np.abs(diag.mean(axis=(0, 1)) - b / (a - 1.0)) < 4.0 * mcse + 1e-12)
    assert _structure_of_draws(cov.values, hp["s0"]) == MCLUST[name, structure]


def _structure_of_draws(cov: np.ndarray, s0: np.ndarray) -> str:
    """mclust's name of the structure every draw (..., [K,] d, d) has: full (some
    off-diagonal != 0), spherical (each diagonal proportional to s0) or diagonal; shared
    (LDA, no class axis) or per class (QDA)."""
    tied = cov.shape[-3] != 2  # (chain, draw, d, d) vs (chain, draw, K=2, d, d)
    off = cov[..., 0, 1]
    diag = _diag(cov)
    if np.any(off != 0):
        return "EEE" if tied else "VVV"
    ratio = diag[..., 0] / diag[..., 1]
    if np.allclose(ratio, s0[0] / s0[1], rtol=1e-9, atol=0):
        return "EII" if tied else "VII"
    return "EEI" if tied else "VVI"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayesgen.ConvergenceWarning")
def test_auto_mcmc_samples_the_chosen_structure(mcmc_fits):
    *_, fits = mcmc_fits
    est = fits["auto"]
    chosen = est.prior_search_["structure"]
    cov = est.idata_.posterior["cov"].values
    # the default target s0: the pooled within-class variances, units of X
    X, y = mcmc_fits[:2]
    s0 = sum(((X[y == k] - X[y == k].mean(0)) ** 2).sum(0) for k in (0, 1)) / y.size
    assert _structure_of_draws(cov, s0) == chosen
    assert cov.shape[:2] == (1, 100)


def test_average_refuses_mcmc():
    X, y = _data(2)
    with pytest.raises(ValueError, match="discrete choice NUTS cannot sample"):
        bg.LDA(method="mcmc", cov_structure="average").fit(X, y)


# ----------------------------------------------------------- 10. bad inputs
BAD = [
    ("LDA", {"cov_structure": "bogus"}, "cov_structure"),
    ("QDA", {"cov_structure": "diag", "cov_prior_form": "lkj"}, "prior on correlations"),
    ("LDA", {"cov_structure": "spherical", "cov_prior_form": "lkj"},
     "prior on correlations"),
    ("LDA", {"cov_structure": "diag", "cov_dof": "sample"}, "cov_dof='sample'"),
    ("QDA", {"cov_structure": "auto", "cov_dof": "sample"}, "cov_dof/cov_scale='sample'"),
    ("QDA", {"cov_structure": "diag", "cov_target": "pooled"}, "partial pooling"),
    ("QDA", {"cov_structure": "average", "cov_target": "pooled"}, "cov_target='pooled'"),
    ("LDA", {"cov_structure": "diag", "cov_target": [[1.0, 0.2], [0.2, 1.0]]},
     "off-diagonal"),
    ("LDA", {"cov_structure": "diag", "cov_dof": 2.0}, "cov_dof"),
    ("QDA", {"cov_structure": "spherical", "cov_dof": 1.5}, "cov_dof"),
]


@pytest.mark.parametrize(("name", "options", "match"), BAD)
def test_bad_options(name, options, match):
    X, y = _data(2)
    with pytest.raises(ValueError, match=re.escape(match)):
        ESTIMATORS[name][0](**options).fit(X, y)


def test_bad_missing_entries():
    X, y = _data(2)
    X = X.copy()
    X[0, 1] = np.nan
    with pytest.raises(ValueError, match="cov_structure='average' needs complete rows"):
        bg.LDA(cov_structure="average").fit(X, y)
    with pytest.raises(ValueError, match="BIC, which needs complete rows"):
        bg.QDA(method="mle", cov_structure="auto").fit(X, y)
    assert np.all(np.isfinite(bg.QDA(cov_structure="auto").fit(X, y).predict_proba(X)))


# ---------------------------------------------- 11. save/load, unlabeled rows
@pytest.mark.parametrize("structure", ["diag", "average"])
def test_save_load_round_trip(tmp_path, structure):
    X, y = _data(2, n=(8, 9), seed=16)
    est = bg.QDA(method="conjugate", cov_structure=structure, draws=30, chains=1,
                 random_state=0).fit(X, y)
    est.save(tmp_path / "model.nc")
    loaded = bg.load(tmp_path / "model.nc")
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    assert loaded.prior_search_["structure"] == est.prior_search_["structure"]
    assert loaded.log_marginal_likelihood() == est.log_marginal_likelihood()


@pytest.mark.filterwarnings("ignore::bayesgen.ConvergenceWarning")
@pytest.mark.parametrize("method", ["map", "conjugate"])
@pytest.mark.parametrize("structure", ["diag", "auto"])
def test_unlabeled_rows(structure, method):
    X, y = _data(2, n=(10, 10), seed=17)
    y_semi = y.astype(object)
    y_semi[[1, 4, 12, 17]] = None
    kw = {"draws": 20, "tune": 10, "chains": 1, "random_state": 0} if method == "conjugate" \
        else {}
    est = bg.LDA(method=method, cov_structure=structure, **kw).fit(X, y_semi)
    assert est.n_unlabeled_ == 4
    assert list(est.classes_) == [0, 1]
    proba = est.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(1), 1.0)
    assert np.mean(est.predict(X) == y) > 0.6


# ------------------------------------------------------------ isotropic target
@pytest.mark.parametrize("structure", ["full", "diag", "spherical", "average"])
@pytest.mark.parametrize("name", ["LDA", "QDA"])
def test_isotropic_target_is_the_mean_within_class_variance(name, structure):
    """cov_target="isotropic" is cov_target = v * ones(d) in the units of X, v the mean over
    the features of the pooled within-class variances (divisor N), and it is equivariant
    under one common change of units and offsets of all features (not per feature)."""
    cls, _ = ESTIMATORS[name]
    rng = np.random.default_rng(7)
    y = np.repeat([0, 1, 2], 9)
    X = rng.normal(size=(y.size, 3)) * [1.0, 3.0, 0.2] + y[:, None] * [1.0, 2.0, 0.3]
    means = np.array([X[y == k].mean(axis=0) for k in range(3)])
    v = np.mean(((X - means[y]) ** 2).sum(axis=0) / y.size)
    kw = {"cov_structure": structure, "method": "conjugate", "draws": 20, "chains": 1,
          "random_state": 0}
    iso = cls(cov_target="isotropic", **kw).fit(X, y)
    explicit = cls(cov_target=np.full(3, v), **kw).fit(X, y)
    # QDA's default cov_dof="auto" searches the strength: agreement to its tolerance
    np.testing.assert_allclose(iso.predict_proba(X), explicit.predict_proba(X), rtol=1e-6,
                               atol=1e-9)
    np.testing.assert_allclose(iso.log_marginal_likelihood(),
                               explicit.log_marginal_likelihood(), rtol=1e-9)
    moved = cls(cov_target="isotropic", **kw).fit(X * 1e4 - 3e7, y)
    np.testing.assert_allclose(moved.predict_proba(X * 1e4 - 3e7), iso.predict_proba(X),
                               rtol=1e-6, atol=1e-9)


def test_isotropic_target_differs_from_the_diagonal_default():
    """With features in different units the isotropic target is a different prior (the
    evidence sees it), while the default diagonal target is unit-free per feature."""
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 12)
    X = rng.normal(size=(y.size, 2)) * [1.0, 100.0] + y[:, None]
    iso = bg.LDA(cov_target="isotropic", method="map").fit(X, y)
    default = bg.LDA(method="map").fit(X, y)
    assert iso.log_marginal_likelihood() < default.log_marginal_likelihood() - 1.0


@pytest.mark.parametrize("structure", ["diag", "spherical"])
@pytest.mark.parametrize("name", ["LDA", "QDA"])
def test_mean_strength_auto_is_the_evidence_maximiser(name, structure):
    """mean_strength="auto" (with the strength and scale "auto") is the argmax of the
    evidence over kappa0: fixing kappa0 a little off it lowers the evidence."""
    cls, _ = ESTIMATORS[name]
    X, y = _data(3, n=(9, 12), seed=5)
    kw = {"cov_structure": structure, "cov_dof": "auto", "cov_scale": "auto"}
    best = cls(mean_strength="auto", **kw).fit(X, y)
    kappa0 = best.prior_search_["mean_strength"]
    for factor in (0.8, 1.25):
        other = cls(mean_strength=kappa0 * factor, **kw).fit(X, y)
        assert other.log_marginal_likelihood() < best.log_marginal_likelihood()
