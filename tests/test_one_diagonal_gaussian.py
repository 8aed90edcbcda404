"""GaussianNB and QDA(cov_structure="diag") are one model (a Normal-Inverse-Gamma prior
per class and feature), computed by one implementation
(:mod:`bayesgen.families.mvn.diagonal`): with the same prior they give the same
parameters, predictive, evidence, exact leave-one-out and leave-one-out at other rows."""

import numpy as np
import pytest

import bayesgen as bg
from bayesgen.inference import exact_loo

# (GaussianNB options, the same prior as QDA options)
SETTINGS = {
    "defaults": ({}, {"cov_dof": 3.0}),
    "fixed": ({"mean_prior": [0.5, -1.0, 2.0, 0.0], "mean_strength": 0.3,
               "var_prior": [1.0, 2.0, 0.5, 3.0], "var_dof": 5.0, "var_scale": 1.5},
              {"mean_prior": [0.5, -1.0, 2.0, 0.0], "mean_strength": 0.3,
               "cov_target": [1.0, 2.0, 0.5, 3.0], "cov_dof": 5.0, "cov_scale": 1.5}),
    "auto": ({"var_dof": "auto", "var_scale": "auto"},
             {"cov_dof": "auto", "cov_scale": "auto"}),
}


def _pooled_variances(X, y, w):
    """The pooled within-class weighted variance of each feature's observed entries."""
    num = den = 0.0
    for k in np.unique(y):
        Xk, wk = X[y == k], w[y == k][:, None] * ~np.isnan(X[y == k])
        Xk = np.nan_to_num(Xk)
        mean = (wk * Xk).sum(axis=0) / wk.sum(axis=0)
        num = num + (wk * (Xk - mean) ** 2).sum(axis=0)
        den = den + wk.sum(axis=0)
    return num / den


def _data(gaps: bool):
    rng = np.random.default_rng(5)
    y = np.repeat(np.arange(3), 10)
    X = rng.standard_normal((30, 4)) * [1.0, 3.0, 0.2, 10.0] + y[:, None] * [1, 0, 1, 5.0]
    if gaps:
        X[rng.random(X.shape) < 0.15] = np.nan
        X[np.arange(3) * 10, 0] = 1.0  # every (class, feature) keeps observed entries
    w = rng.uniform(0.5, 2.0, 30)
    X_test = rng.standard_normal((7, 4)) * 3.0
    X_test[0] = [1e200, -1e200, 3.0, 1e150]  # far rows
    return X, y, w, X_test


@pytest.mark.parametrize("gaps", [False, True])
@pytest.mark.parametrize("setting", SETTINGS)
def test_gaussian_nb_equals_qda_diag(setting, gaps):
    nb_options, qda_options = SETTINGS[setting]
    X, y, w, X_test = _data(gaps)
    if gaps and "var_prior" not in nb_options:
        # the default targets differ with missing entries (GaussianNB: the observed
        # entries' pooled variances; QDA: its pattern-wise scatter), the model does not
        s0 = _pooled_variances(X, y, w)
        nb_options = dict(nb_options, var_prior=s0)
        qda_options = dict(qda_options, cov_target=s0)
    if not gaps:  # the default targets are the same
        np.testing.assert_allclose(
            bg.GaussianNB(**nb_options).fit(X, y, sample_weight=w)._prior["s0"],
            bg.QDA(cov_structure="diag", **qda_options).fit(X, y, sample_weight=w)
            ._prior["s0"], rtol=1e-12)
    pairs = []
    for method in ("map", "conjugate"):
        nb = bg.GaussianNB(method=method, random_state=0, draws=20, chains=1, **nb_options)
        qda = bg.QDA(method=method, cov_structure="diag", random_state=0, draws=20, chains=1,
                     **qda_options)
        nb.fit(X, y, sample_weight=w)
        qda.fit(X, y, sample_weight=w)
        pairs.append((nb, qda))
        for rows in (X, X_test):
            np.testing.assert_allclose(nb.predict_joint_log_proba(rows),
                                       qda.predict_joint_log_proba(rows), rtol=1e-10)
    nb, qda = pairs[0]
    np.testing.assert_allclose(nb.theta_, qda.means_, rtol=1e-10)
    np.testing.assert_allclose(nb.var_, np.diagonal(np.asarray(qda.covariance_), axis1=1,
                                                    axis2=2), rtol=1e-10)
    nb, qda = pairs[1]
    np.testing.assert_allclose(nb.log_marginal_likelihood(), qda.log_marginal_likelihood(),
                               rtol=1e-10)
    for est in (nb, qda):
        assert np.all(np.isfinite(est.predict_joint_log_proba(X_test)))
    loo_nb, _ = exact_loo.loo_log_joint(nb)
    loo_qda, _ = exact_loo.loo_log_joint(qda)
    np.testing.assert_allclose(loo_nb, loo_qda, rtol=1e-10)
    np.testing.assert_allclose(exact_loo.pointwise(nb), exact_loo.pointwise(qda), rtol=1e-10)
    at = [exact_loo.loo_log_joint_at(est, exact_loo.training_rows(est), X_test[1:])
          for est in (nb, qda)]
    # "auto": each leave-one-out re-runs the evidence search, whose answer is the same
    # only to the search's tolerance (the two fits sum their statistics in other orders)
    np.testing.assert_allclose(at[0], at[1], rtol=1e-8 if setting == "auto" else 1e-10)
    if setting == "auto":
        assert nb.prior_search_["var_dof"] == pytest.approx(qda.prior_search_["cov_dof"],
                                                            rel=1e-10)
        assert nb.prior_search_["log_evidence"] == pytest.approx(
            qda.prior_search_["log_evidence"], rel=1e-10)


def test_normal_inverse_gamma_algebra_against_oracles():
    """The algebra's Student-t step, evidence and downdate against scipy.stats.t, the
    hand-derived Normal-Inverse-Gamma marginal likelihood and a posterior without the
    row."""
    from scipy import stats
    from scipy.special import gammaln

    from bayesgen.families import conjugate
    from bayesgen.families.mvn.diagonal import NIG

    rng = np.random.default_rng(2)
    post = {"m": rng.normal(size=(3, 4)), "kappa": rng.uniform(0.5, 5, (3, 4)),
            "a": rng.uniform(1, 6, (3, 4)), "b": rng.uniform(0.5, 4, (3, 4))}
    x = rng.normal(size=(5, 4)) * 2
    scale = np.sqrt(post["b"] * (post["kappa"] + 1) / (post["a"] * post["kappa"]))
    oracle = stats.t.logpdf(x[:, None, :], df=2 * post["a"], loc=post["m"],
                            scale=scale).sum(axis=-1)
    np.testing.assert_allclose(conjugate.log_predictive(NIG, x, post), oracle, rtol=1e-12)
    # evidence: m0, kappa0, a0, b0 updated by rows of one class and feature
    z = rng.normal(size=7)
    m0, k0, a0, b0 = 0.3, 0.5, 2.0, 1.5
    n, zbar = z.size, z.mean()
    kn, an = k0 + n, a0 + n / 2
    bn = b0 + ((z - zbar) ** 2).sum() / 2 + k0 * n * (zbar - m0) ** 2 / (2 * kn)
    mn = (k0 * m0 + n * zbar) / kn
    hand = (gammaln(an) - gammaln(a0) + a0 * np.log(b0) - an * np.log(bn)
            + 0.5 * np.log(k0 / kn) - n / 2 * np.log(2 * np.pi))
    prior = {"m": np.array([m0]), "kappa": np.array([k0]), "a": np.array([a0]),
             "b": np.array([b0])}
    full = {"m": np.array([[mn]]), "kappa": np.array([[kn]]), "a": np.array([[an]]),
            "b": np.array([[bn]])}
    np.testing.assert_allclose(conjugate.log_evidence(NIG, prior, full), hand, rtol=1e-12)
    # the downdate of the last row is the posterior of the first n - 1 rows
    z1 = z[:-1]
    k1, a1 = k0 + n - 1, a0 + (n - 1) / 2
    b1 = (b0 + ((z1 - z1.mean()) ** 2).sum() / 2
          + k0 * (n - 1) * (z1.mean() - m0) ** 2 / (2 * k1))
    down = NIG.downdate({key: v[0] for key, v in full.items()}, z[-1:], np.ones(1))
    np.testing.assert_allclose([down["m"][0], down["kappa"][0], down["a"][0], down["b"][0]],
                               [(k0 * m0 + z1.sum()) / k1, k1, a1, b1], rtol=1e-12)


def test_spherical_algebra_is_its_log_normaliser():
    """:class:`SphericalNIG`'s closed-form multivariate-t step equals its log Z
    difference, and the algebra's evidence the hand-derived grouped Normal-Inverse-Gamma
    one (:func:`.structures.log_evidence_entries`), with missing entries and weights."""
    from bayesgen.families import conjugate
    from bayesgen.families.mvn import diagonal as dg
    from bayesgen.families.mvn.structures import entries, log_evidence_entries

    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 3)) * [1.0, 2.0, 3.0]
    X[rng.random(X.shape) < 0.2] = np.nan
    y, w = np.repeat([0, 1], 15), rng.uniform(0.5, 2.0, 30)
    fam = dg.DiagonalMVNFamily(tied=False, spherical=True)
    stats = fam.stats(X, y, w, 2)
    prior = fam.prior(stats)
    post = fam.posterior(stats, prior)
    alg, ent = fam.algebra(post), dg.entries_of(post)
    Xt = rng.normal(size=(5, 3))
    Xt[1, 0] = np.nan
    pairs = {key: np.repeat(value, 5, axis=0) for key, value in ent.items()}
    by_z = alg.log_z(alg.update(pairs, np.tile(Xt, (2, 1)))) - alg.log_z(pairs)
    np.testing.assert_allclose(conjugate.log_predictive(alg, Xt, ent).T.ravel(), by_z,
                               rtol=1e-12, atol=1e-12)
    tau0 = {"m": np.broadcast_to(prior["m0"], (2, 3)), "kappa": np.full((2, 3), prior["kappa0"]),
            "a": np.full((2, 3), prior["nu0"] / 2),
            "b": np.broadcast_to((prior["nu0"] - 2) * prior["scale"] / 2 * prior["s0"], (2, 3))}
    np.testing.assert_allclose(
        conjugate.log_evidence(alg, tau0, ent),
        log_evidence_entries(entries(stats), prior, tied=False, spherical=True), rtol=1e-12)
