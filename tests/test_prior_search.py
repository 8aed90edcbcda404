"""cov_scale / cov_dof chosen by the exact evidence (type-II maximum likelihood).

References independent of the closed form: numerical integration over the parameters
(scipy.integrate, d = 1), a brute-force Monte Carlo average of the likelihood over prior
draws (d = 2), a brute-force grid for the maximiser, and refits for exact LOO.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats
from scipy.special import logsumexp, multigammaln
from sklearn.base import clone

import bayesgen as bg
from bayesgen.families.mvn import niw_evidence
from bayesgen.families.mvn.family import mean_strength_bound
from bayesgen.families.mvn.niw_evidence import (
    C_BOUNDS,
    S_BOUNDS,
    evidence_search,
    log_marginal_likelihood,
)
from bayesgen.inference import exact_loo


def _data(d: int, n_per_class: int, seed: int = 0, K: int = 2):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n_per_class)
    A = np.eye(d) + 0.6 * np.tri(d, k=-1)
    X = rng.normal(size=(y.size, d)) @ A.T * np.linspace(1.0, 3.0, d) + 2.0 * y[:, None]
    return X, y


def _x_evidence(est) -> float:
    """The family's exact log p(X | y) in the units of X (without the labels' term of
    ``log_marginal_likelihood``)."""
    return est._family.log_evidence(est._stats, est._prior, None, method=est.method_,
                                    who=type(est).__name__)


def _internal(est, X):
    return est._frame.internal(X) if est._frame is not None else X


# --------------------------------------------------------------- evidence is exact
@pytest.mark.parametrize("tied", [False, True])
def test_evidence_equals_numerical_integration_d1(tied):
    """d = 1: p(Z) = int int prod_n N(z_n; mu_k, s2) N(mu_k; m0, s2 / kappa0) IG(s2) by
    quadrature (QDA: per class over (mu_k, s2); LDA: mu_k integrated per class inside
    the integral over the shared s2)."""
    X, y = _data(1, 4, seed=3)
    est = (bg.LDA if tied else bg.QDA)(cov_dof=3.7, cov_scale=2.5, mean_strength=0.8).fit(X, y)
    Z, prior = _internal(est, X)[:, 0], est._prior
    m0, kappa0 = prior["m0"][0], prior["kappa0"]
    nu0, psi0 = prior["nu0"], prior["Psi0"][0, 0]
    ig = stats.invgamma(nu0 / 2.0, scale=psi0 / 2.0)  # IW in d = 1

    def class_term(z, s2):  # int over mu of the class's likelihood times its prior
        return integrate.quad(
            lambda mu: np.exp(stats.norm.logpdf(z, mu, np.sqrt(s2)).sum()
                              + stats.norm.logpdf(mu, m0, np.sqrt(s2 / kappa0))),
            m0 - 60, m0 + 60, points=[z.mean()], limit=200)[0]

    def density(log_s2, groups):
        s2 = np.exp(log_s2)
        value = ig.pdf(s2) * s2  # Jacobian of log s2
        for z in groups:
            value *= class_term(z, s2)
        return value

    classes = [Z[y == k] for k in np.unique(y)]
    if tied:
        total = np.log(integrate.quad(density, -12, 8, args=(classes,), limit=200)[0])
    else:
        total = sum(np.log(integrate.quad(density, -12, 8, args=([z],), limit=200)[0])
                    for z in classes)
    got = log_marginal_likelihood(est._stats, prior, tied=tied)
    np.testing.assert_allclose(got, total, rtol=0, atol=1e-6)
    np.testing.assert_allclose(est.prior_search_["log_evidence"],
                               _x_evidence(est), rtol=1e-12)


@pytest.mark.parametrize("tied", [False, True])
def test_evidence_equals_brute_force_monte_carlo_d2(tied):
    """d = 2: the average of the likelihood over 400,000 draws (mu, Sigma) from the prior,
    within 4 Monte Carlo standard errors (delta method on the log of the mean)."""
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1], 3)
    X = rng.normal(size=(y.size, 2)) @ np.array([[1.0, 0.5], [0.0, 1.0]])
    est = (bg.LDA if tied else bg.QDA)(cov_dof=12.0, cov_scale=0.7, mean_strength=1.0).fit(X, y)
    Z, prior = _internal(est, X), est._prior
    S = 400_000
    K = 2
    n_cov = 1 if tied else K
    covs = stats.invwishart(df=prior["nu0"], scale=prior["Psi0"]).rvs(
        size=S * n_cov, random_state=rng).reshape(n_cov, S, 2, 2)
    loglik = np.zeros(S)
    for k in range(K):
        cov = covs[0 if tied else k]
        chol = np.linalg.cholesky(cov / prior["kappa0"])
        mu = prior["m0"] + np.einsum("sij,sj->si", chol, rng.normal(size=(S, 2)))
        prec = np.linalg.inv(cov)
        _, logdet = np.linalg.slogdet(cov)
        for z in Z[y == k]:
            r = z - mu
            loglik += -0.5 * (np.einsum("si,sij,sj->s", r, prec, r) + logdet
                              + 2 * np.log(2 * np.pi))
    mc = logsumexp(loglik) - np.log(S)
    w = np.exp(loglik - loglik.max())
    se = w.std() / (w.mean() * np.sqrt(S))
    assert se < 0.02  # the check has power
    got = log_marginal_likelihood(est._stats, prior, tied=tied)
    assert abs(got - mc) < 4 * se


# ---------------------------------------------------- the search finds the argmax
@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("shape", ["wide", "tall"])
def test_search_is_the_argmax_over_a_grid(tied, shape):
    """Both auto: no point of a 121 x 121 grid over (log c, log s) has more evidence,
    and the search's value is within a grid step's rise of the grid's best."""
    d, n = (6, 4) if shape == "wide" else (3, 30)
    X, y = _data(d, n, seed=2)
    est = (bg.LDA if tied else bg.QDA)(cov_dof="auto", cov_scale="auto").fit(X, y)
    prior, st = est._prior, est._stats
    best = log_marginal_likelihood(st, prior, tied=tied)
    np.testing.assert_allclose(est.prior_search_["log_evidence"], _x_evidence(est),
                               rtol=1e-12)
    found_c = prior["nu0"] - d - 1
    grid_c = np.exp(np.linspace(*np.log(C_BOUNDS), 121))
    grid_s = np.exp(np.linspace(*np.log(S_BOUNDS), 121))
    S0 = prior["Psi0"] / (found_c * est.prior_search_["cov_scale"])
    values = np.array([[log_marginal_likelihood(
        st, dict(prior, nu0=d + 1 + c, Psi0=c * s * S0), tied=tied) for s in grid_s]
        for c in grid_c])
    assert values.max() <= best + 1e-9
    assert best - values.max() < 0.5  # the grid is coarse; the optimum is between points


def test_scale_only_search_is_the_argmax():
    X, y = _data(4, 6, seed=4)
    est = bg.LDA(cov_dof=9.0, cov_scale="auto").fit(X, y)
    prior, st = est._prior, est._stats
    s_hat = est.prior_search_["cov_scale"]
    S0 = prior["Psi0"] / ((9.0 - 5.0) * s_hat)
    grid = s_hat * np.exp(np.linspace(-2, 2, 401))
    values = [log_marginal_likelihood(st, dict(prior, Psi0=4.0 * s * S0), tied=True)
              for s in grid]
    assert max(values) <= log_marginal_likelihood(st, prior, tied=True) + 1e-10
    assert est.prior_search_["cov_dof"] == 9.0


def test_candidates_record_each_prior_at_its_optimum():
    X, y = _data(3, 8, seed=6)
    est = bg.QDA(cov_scale="auto").fit(X, y)
    table = pd.DataFrame(est.prior_search_["candidates"])
    assert list(table["cov_dof"]) == [5.0, "auto", "auto"]
    assert list(table["cov_scale"]) == [1.0, 1.0, "auto"]
    # nested families: more freedom, at least as much evidence
    ev = table["log_evidence"].to_numpy()
    assert ev[0] <= ev[1] + 1e-9 and ev[1] <= ev[2] + 1e-9
    assert ev[2] == est.prior_search_["log_evidence"]
    default = bg.QDA().fit(X, y)  # cov_dof="auto", cov_scale=None: the second candidate
    assert default.prior_search_["cov_scale"] == 1.0
    np.testing.assert_allclose(default.prior_search_["log_evidence"], ev[1], rtol=1e-12)
    fixed = bg.QDA(cov_dof=7.0, cov_scale=2.0).fit(X, y)
    assert len(fixed.prior_search_["candidates"]) == 1
    assert fixed.prior_search_["cov_dof"] == 7.0 and fixed.prior_search_["cov_scale"] == 2.0


def test_search_cost_does_not_depend_on_n():
    """The search reads the statistics only: the same statistics give the same choice
    (weights as repeated rows)."""
    X, y = _data(3, 10, seed=7)
    w = np.arange(1, y.size + 1) % 3 + 1.0
    a = bg.LDA(cov_scale="auto").fit(X, y, sample_weight=w)
    b = bg.LDA(cov_scale="auto").fit(np.repeat(X, w.astype(int), 0),
                                     np.repeat(y, w.astype(int)))
    np.testing.assert_allclose(a.prior_search_["cov_scale"], b.prior_search_["cov_scale"],
                               rtol=1e-6)
    np.testing.assert_allclose(a.prior_search_["cov_dof"], b.prior_search_["cov_dof"],
                               rtol=1e-6)


def test_choice_is_scale_equivariant():
    X, y = _data(4, 7, seed=8)
    a = bg.LDA(cov_scale="auto").fit(X, y)
    b = bg.LDA(cov_scale="auto").fit(X * [1e-3, 1.0, 7.0, 1e4], y)
    np.testing.assert_allclose(a.prior_search_["cov_scale"], b.prior_search_["cov_scale"],
                               rtol=1e-6)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X * [1e-3, 1.0, 7.0, 1e4]),
                               rtol=1e-6)


# ------------------------------------------------------------------- exact LOO
@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_exact_loo_stays_exact(cls):
    """LOO is the refit without the row: the evidence's choice of strength and scale is
    made again without it (refits of the same constructor)."""
    X, y = _data(2, 6, seed=9)
    common = {"method": "conjugate", "mean_prior": [1.0, 2.0], "cov_target": [2.0, 5.0],
              "draws": 10, "chains": 1, "random_state": 0}
    fitted = cls(cov_scale="auto", **common).fit(X, y)
    fixed = cls(cov_scale="auto", **common)
    brute = np.empty(y.size)
    for i in range(y.size):
        keep = np.arange(y.size) != i
        refit = clone(fixed).fit(X[keep], y[keep])
        brute[i] = refit.predict_joint_log_proba(X[i:i + 1])[0, y[i]]
    np.testing.assert_allclose(exact_loo.pointwise(fitted), brute, rtol=0, atol=1e-8)


# ---------------------------------------------------------- every method and path
@pytest.mark.parametrize("method", ["map", "conjugate"])
@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_point_and_conjugate_methods_use_the_chosen_prior(method, cls):
    X, y = _data(3, 8, seed=10)
    est = cls(method=method, cov_scale="auto", draws=20, chains=1, random_state=0).fit(X, y)
    d = X.shape[1]
    assert est.prior_search_["cov_dof"] == est._prior["nu0"]
    S0 = est._prior["Psi0"] / ((est._prior["nu0"] - d - 1) * est.prior_search_["cov_scale"])
    np.testing.assert_allclose(np.diag(S0), np.diag(bg.LDA().fit(X, y)._prior["Psi0"])
                               / (bg.LDA().fit(X, y)._prior["nu0"] - d - 1), rtol=1e-12)
    proba = est.predict_proba(X)
    assert np.all(np.isfinite(proba))


@pytest.mark.slow
def test_mcmc_runs_with_the_chosen_prior():
    X, y = _data(2, 6, seed=12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = bg.LDA(method="mcmc", cov_scale="auto", draws=20, tune=20, chains=1,
                     random_state=0, progressbar=False).fit(X, y)
    assert est.method_ == "mcmc"
    assert est.prior_search_["cov_scale"] == est.prior_search_["candidates"][-1][
        "chosen_cov_scale"]
    assert np.all(np.isfinite(est.predict_proba(X)))


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_missing_entries_fixed_point(cls):
    """With NaN the choice is a fixed point of the search over EM-completed statistics."""
    from bayesgen.families.mvn import em

    X, y = _data(3, 12, seed=13)
    X[np.random.default_rng(0).random(X.shape) < 0.15] = np.nan
    est = cls(cov_dof="auto", cov_scale="auto").fit(X, y)
    search = est.prior_search_
    fam, prior = est._family, est._prior
    d = X.shape[1]
    S0 = prior["Psi0"] / ((prior["nu0"] - d - 1) * search["cov_scale"])
    completed = em.evidence_stats(fam, est._stats, prior["m0"], prior["kappa0"],
                                  search["cov_scale"] * S0, search["cov_dof"])
    again = evidence_search(completed, prior["m0"], prior["kappa0"], S0, tied=fam.tied)
    np.testing.assert_allclose(again["nu0"], search["cov_dof"], rtol=1e-4)
    np.testing.assert_allclose(again["scale"], search["cov_scale"], rtol=1e-4)
    for method in ("map", "conjugate"):
        with warnings.catch_warnings():  # 20 data-augmentation draws: too few for R-hat
            warnings.simplefilter("ignore", bg.ConvergenceWarning)
            out = cls(method=method, cov_scale="auto", draws=20, chains=1,
                      random_state=0).fit(X, y)
        assert np.all(np.isfinite(out.predict_proba(X)))
    fixed = cls(cov_dof=6.0, cov_scale=2.0).fit(X, y)
    assert fixed.prior_search_["log_evidence"] is None


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_streaming_and_merge_equal_one_fit(cls):
    X, y = _data(3, 10, seed=14)
    whole = cls(cov_scale="auto").fit(X, y)
    stream = cls(cov_scale="auto")
    for part in np.array_split(np.random.default_rng(1).permutation(y.size), 3):
        stream.partial_fit(X[part], y[part], classes=[0, 1])
    halves = np.array_split(np.random.default_rng(2).permutation(y.size), 2)
    a = cls(cov_scale="auto").fit(X[halves[0]], y[halves[0]])
    b = cls(cov_scale="auto").fit(X[halves[1]], y[halves[1]])
    merged = bg.merge(a, b)
    for other in (stream, merged):
        for key in ("cov_dof", "cov_scale", "log_evidence"):
            np.testing.assert_allclose(other.prior_search_[key], whole.prior_search_[key],
                                       rtol=1e-7)
        np.testing.assert_allclose(other.predict_proba(X), whole.predict_proba(X), rtol=1e-7)


def test_save_load_keeps_the_search(tmp_path):
    X, y = _data(3, 8, seed=15)
    est = bg.QDA(cov_scale="auto").fit(X, y)
    est.save(tmp_path / "m.bg")
    back = bg.load(tmp_path / "m.bg")
    assert back.prior_search_ == est.prior_search_
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))


@pytest.mark.parametrize("bad", ["big", 0.0, -1.0, np.inf])
def test_bad_cov_scale_is_a_value_error(bad):
    X, y = _data(2, 5)
    with pytest.raises(ValueError, match="cov_scale"):
        bg.LDA(cov_scale=bad).fit(X, y)


def test_profile_gradient_matches_finite_differences():
    X, y = _data(4, 5, seed=16)
    est = bg.QDA().fit(X, y)
    prior = est._prior
    d = 4
    S0 = prior["Psi0"] / (prior["nu0"] - d - 1)
    eigen, sizes = niw_evidence.whitened_eigen(est._stats, prior["m0"], prior["kappa0"], S0,
                                               tied=False)
    c, t, h = 2.3, 1.7, 1e-6
    f, dc, dlogt = niw_evidence.profile_evidence(c, t, d, eigen, sizes)
    fc = niw_evidence.profile_evidence(c + h, t, d, eigen, sizes)[0]
    ft = niw_evidence.profile_evidence(c, t * np.exp(h), d, eigen, sizes)[0]
    np.testing.assert_allclose([(fc - f) / h, (ft - f) / h], [dc, dlogt], rtol=1e-4)
    # F + constant is the exact log evidence
    full = log_marginal_likelihood(est._stats, dict(prior, nu0=d + 1 + c, Psi0=t * S0),
                                   tied=False)
    full2 = log_marginal_likelihood(est._stats, dict(prior, nu0=d + 1 + 2 * c,
                                                     Psi0=3 * t * S0), tied=False)
    f2 = niw_evidence.profile_evidence(2 * c, 3 * t, d, eigen, sizes)[0]
    np.testing.assert_allclose(full - full2, f - f2, rtol=1e-10)


# ------------------------------------------------------------------- GaussianNB
def test_gaussian_nb_evidence_equals_numerical_integration():
    """d = 1 per (class, feature): int int prod_n N(z; mu, s2) N(mu; m0, s2/kappa0)
    InvGamma(s2; a0, b0) by quadrature, with var_scale and var_dof given."""
    X, y = _data(2, 4, seed=20)
    est = bg.GaussianNB(var_dof=4.5, var_scale=1.7, mean_strength=0.5).fit(X, y)
    Z, prior = _internal(est, X), est._prior
    total = 0.0
    for j in range(2):
        ig = stats.invgamma(prior["a0"][j], scale=prior["b0"][j])
        for k in (0, 1):
            z = Z[y == k, j]

            def density(log_s2, z=z, ig=ig, j=j):
                s2 = np.exp(log_s2)
                inner = integrate.quad(
                    lambda mu: np.exp(stats.norm.logpdf(z, mu, np.sqrt(s2)).sum()
                                      + stats.norm.logpdf(mu, prior["m0"][j],
                                                          np.sqrt(s2 / prior["kappa0"]))),
                    z.mean() - 60, z.mean() + 60, points=[z.mean()], limit=200)[0]
                return inner * ig.pdf(s2) * s2

            total += np.log(integrate.quad(density, -14, 8, limit=200)[0])
    np.testing.assert_allclose(_x_evidence(est) + est._frame.log_jacobian * y.size, total,
                               rtol=0, atol=1e-5)
    auto = bg.GaussianNB(var_dof="auto", var_scale="auto").fit(X, y)
    np.testing.assert_allclose(auto.prior_search_["log_evidence"], _x_evidence(auto),
                               rtol=1e-12)


def _nig_log_evidence(stats: dict, prior: dict) -> float:
    """Oracle: the hand-derived Normal-Inverse-Gamma log evidence per (class, feature),
    lgamma(a_n) - lgamma(a0) + a0 log b0 - a_n log b_n + log(kappa0 / kappa_n) / 2
    - N log(2 pi) / 2, summed (internal frame)."""
    from scipy.special import gammaln

    n = np.broadcast_to(stats.get("observed", stats["count"][:, None]),
                        stats["mean"].shape)
    kappa_n = prior["kappa0"] + n
    a_n = prior["a0"] + n / 2.0
    b_n = (prior["b0"] + stats["m2"] / 2.0
           + prior["kappa0"] * n * (stats["mean"] - prior["m0"]) ** 2 / (2.0 * kappa_n))
    return float(np.sum(gammaln(a_n) - gammaln(prior["a0"]) + prior["a0"] * np.log(prior["b0"])
                        - a_n * np.log(b_n) + 0.5 * np.log(prior["kappa0"] / kappa_n)
                        - 0.5 * n * np.log(2.0 * np.pi)))


@pytest.mark.parametrize("missing", [False, True])
def test_gaussian_nb_search_is_the_argmax_over_a_grid(missing):
    from bayesgen.families import gaussian_evidence as gev

    X, y = _data(5, 6, seed=21)
    if missing:
        X[np.random.default_rng(3).random(X.shape) < 0.2] = np.nan
    est = bg.GaussianNB(var_dof="auto", var_scale="auto").fit(X, y)
    prior, st = est._prior, est._stats
    c_hat = 2.0 * prior["a0"][0] - 2.0
    s0 = 2.0 * prior["b0"] / (c_hat * est.prior_search_["var_scale"])
    best = _nig_log_evidence(st, prior)
    np.testing.assert_allclose(best - est._frame.log_jacobian * y.size,
                               est.prior_search_["log_evidence"], rtol=1e-10)
    grid_c = np.exp(np.linspace(*np.log(gev.C_BOUNDS), 121))
    grid_s = np.exp(np.linspace(*np.log(gev.S_BOUNDS), 121))
    values = np.array([[_nig_log_evidence(st, dict(prior, a0=np.full(5, (c + 2) / 2),
                                                    b0=c * s * s0 / 2)) for s in grid_s]
                       for c in grid_c])
    assert values.max() <= best + 1e-9
    assert best - values.max() < 0.5
    table = pd.DataFrame(est.prior_search_["candidates"])
    ev = table["log_evidence"].to_numpy()
    assert ev[0] <= ev[1] + 1e-9 and ev[1] <= ev[2] + 1e-9


def test_gaussian_nb_methods_streaming_and_defaults():
    X, y = _data(3, 8, seed=22)
    assert not hasattr(bg.GaussianNB().fit(X, y), "prior_search_")  # default unchanged
    whole = bg.GaussianNB(var_dof="auto", var_scale="auto").fit(X, y)
    stream = bg.GaussianNB(var_dof="auto", var_scale="auto")
    for part in np.array_split(np.random.default_rng(1).permutation(y.size), 3):
        stream.partial_fit(X[part], y[part], classes=[0, 1])
    np.testing.assert_allclose(stream.prior_search_["var_scale"],
                               whole.prior_search_["var_scale"], rtol=1e-7)
    for method in ("mle", "map", "conjugate"):
        est = bg.GaussianNB(method=method, var_dof="auto", var_scale="auto", draws=20,
                            chains=1, random_state=0).fit(X, y)
        assert np.all(np.isfinite(est.predict_proba(X)))
    with pytest.raises(ValueError, match="var_scale"):
        bg.GaussianNB(var_scale=-1.0).fit(X, y)


def test_gaussian_nb_exact_loo_stays_exact():
    X, y = _data(2, 6, seed=23)
    common = {"method": "conjugate", "mean_prior": [1.0, 2.0], "var_prior": [2.0, 5.0],
              "draws": 10, "chains": 1, "random_state": 0}
    fitted = bg.GaussianNB(var_dof="auto", var_scale="auto", **common).fit(X, y)
    fixed = bg.GaussianNB(var_dof="auto", var_scale="auto", **common)  # refit semantics
    brute = np.empty(y.size)
    for i in range(y.size):
        keep = np.arange(y.size) != i
        brute[i] = clone(fixed).fit(X[keep], y[keep]).predict_joint_log_proba(
            X[i:i + 1])[0, y[i]]
    np.testing.assert_allclose(exact_loo.pointwise(fitted), brute, rtol=0, atol=1e-8)


# ------------------------------------------------- mclust's covariance structures
def _structure_case(d, n, seed):
    from bayesgen.families.mvn import structures

    X, y = _data(d, n, seed=seed)
    est = bg.QDA(cov_scale="auto").fit(X, y)
    prior = est._prior
    s0 = np.diagonal(prior["Psi0"]) / ((prior["nu0"] - d - 1) * est.prior_search_["cov_scale"])
    return structures, est, X, y, prior, s0


def test_structures_listed_with_their_evidence():
    structures, est, X, y, prior, s0 = _structure_case(3, 8, 30)
    table = pd.DataFrame(est.prior_search_["structures"]).set_index("structure")
    assert list(table.index) == list(structures.ALL)
    # VVV is the fitted model (both auto); VVI is GaussianNB's model at its own optimum
    np.testing.assert_allclose(table.loc["VVV", "log_evidence"],
                               est.prior_search_["candidates"][2]["log_evidence"], rtol=1e-12)
    nb = bg.GaussianNB(var_dof="auto", var_scale="auto").fit(X, y)
    np.testing.assert_allclose(table.loc["VVI", "log_evidence"],
                               nb.prior_search_["log_evidence"], rtol=1e-9)
    lda = bg.LDA(cov_scale="auto").fit(X, y)
    shared = pd.DataFrame(lda.prior_search_["structures"]).set_index("structure")
    assert list(shared.index) == list(structures.SHARED)
    np.testing.assert_allclose(shared["log_evidence"], table.loc[list(structures.SHARED),
                                                                 "log_evidence"], rtol=1e-9)


def test_structures_coincide_in_one_dimension():
    """d = 1: spherical, diagonal and full are one model, so EII = EEI = EEE and
    VII = VVI = VVV at the same hyper-parameters (the full ones by quadrature above)."""
    structures, est, X, y, prior, s0 = _structure_case(1, 5, 31)
    nu0, scale = 4.3, 0.8
    niw = dict(prior, nu0=nu0, Psi0=(nu0 - 2) * scale * np.diag(s0))
    pooled = structures._pooled(est._stats)
    for names, st, tied in ((("EII", "EEI"), pooled, True), (("VII", "VVI"), est._stats, False)):
        want = log_marginal_likelihood(st, niw, tied=tied)
        for name in names:
            got = structures.structure_log_evidence(est._stats, prior["m0"], prior["kappa0"],
                                                    s0, name, nu0, scale)
            np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("name", ["EII", "VII", "EEI", "VVI"])
def test_structure_evidence_equals_brute_force_monte_carlo_d2(name):
    """The likelihood averaged over 400,000 prior draws of the variances and means."""
    from bayesgen.families.mvn import structures

    rng = np.random.default_rng(32)
    y = np.repeat([0, 1], 3)
    X = rng.normal(size=(y.size, 2)) * [1.0, 2.0]
    est = bg.QDA(cov_scale="auto", mean_strength=1.0).fit(X, y)
    prior = est._prior
    s0 = np.diagonal(prior["Psi0"]) / ((prior["nu0"] - 3) * est.prior_search_["cov_scale"])
    Z = _internal(est, X)
    nu0, scale = 9.0, 1.3
    a0, S = nu0 / 2.0, 400_000
    per_class, spherical = name[0] == "V", name[1] == "I"
    n_var = (2 if per_class else 1, 1 if spherical else 2)

    def draw_var(k):
        b0 = (nu0 - 2.0) * scale / 2.0 * (1.0 if spherical else s0)
        v = stats.invgamma(a0).rvs(size=(S, n_var[1]), random_state=rng) * b0
        return v * s0 if spherical else v

    shared = draw_var(0)
    loglik = np.zeros(S)
    for k in (0, 1):
        var = draw_var(k) if per_class else shared
        mu = prior["m0"] + rng.normal(size=(S, 2)) * np.sqrt(var / prior["kappa0"])
        for z in Z[y == k]:
            loglik += stats.norm.logpdf(z, mu, np.sqrt(var)).sum(axis=1)
    mc = logsumexp(loglik) - np.log(S)
    w = np.exp(loglik - loglik.max())
    se = w.std() / (w.mean() * np.sqrt(S))
    assert se < 0.02
    got = structures.structure_log_evidence(est._stats, prior["m0"], prior["kappa0"], s0,
                                            name, nu0, scale)
    assert abs(got - mc) < 4 * se


def test_structure_search_is_the_argmax_over_a_grid():
    structures, est, X, y, prior, s0 = _structure_case(4, 6, 33)
    table = pd.DataFrame(est.prior_search_["structures"]).set_index("structure")
    jac = est._frame.log_jacobian * y.size
    for name in ("EII", "VII", "EEI", "VVI"):
        best = table.loc[name, "log_evidence"] + jac  # back to the internal frame
        grid = [structures.structure_log_evidence(est._stats, prior["m0"], prior["kappa0"], s0,
                                                  name, 2 + c, s)
                for c in np.exp(np.linspace(np.log(1e-2), np.log(1e6), 61))
                for s in np.exp(np.linspace(np.log(1e-3), np.log(1e3), 61))]
        assert max(grid) <= best + 1e-9
        assert best - max(grid) < 1.0


# ------------------------------------------------------------ mean_strength="auto"
@pytest.mark.parametrize("tied", [False, True])
def test_profile_with_kappa_is_the_log_evidence_up_to_a_constant(tied):
    X, y = _data(4, 6, seed=40, K=3)
    est = (bg.LDA if tied else bg.QDA)().fit(X, y)
    prior, st, d = est._prior, est._stats, 4
    S0 = prior["Psi0"] / (prior["nu0"] - d - 1)
    parts = niw_evidence.kappa_parts(st, prior["m0"], S0, tied=tied)
    points = [(0.7, 2.0, 0.05), (3.0, 0.4, 2.5), (40.0, 9.0, 300.0)]
    exact = [log_marginal_likelihood(st, dict(prior, nu0=d + 1 + c, Psi0=t * S0, kappa0=k),
                                     tied=tied) for c, t, k in points]
    profile = [niw_evidence.profile_kappa(c, t, k, d, parts) for c, t, k in points]
    np.testing.assert_allclose(np.diff(exact), np.diff(profile), rtol=1e-10)


@pytest.mark.parametrize(("tied", "flat"), [(False, False), (True, False), (True, True)])
def test_profile_kappa_gradient_is_its_derivative(tied, flat):
    """profile_kappa_grad's dF/dlog(kappa0), dF/dc (t fixed) and dF/dlog(t) against
    central differences of profile_kappa (step 1e-5 in each log), at points where the
    evidence is far from flat; ``flat``: the flat-m0 evidence of LDA's "auto"."""
    X, y = _data(4, 6, seed=40, K=3)
    est = (bg.LDA if tied else bg.QDA)().fit(X, y)
    prior, st, d = est._prior, est._stats, 4
    S0 = prior["Psi0"] / (prior["nu0"] - d - 1)
    parts = niw_evidence.kappa_parts(st, prior["m0"], S0, tied=tied)
    h = 1e-5

    def f(lk, lc, lt):
        return niw_evidence.profile_kappa(np.exp(lc), np.exp(lt), np.exp(lk), d, parts, flat)

    for lk, lc, lt in [(0.3, 1.0, 0.2), (-3.0, 5.0, -1.0), (4.0, 2.0, 2.0)]:
        value, dlogk, dc, dlogt = niw_evidence.profile_kappa_grad(
            np.exp(lc), np.exp(lt), np.exp(lk), d, parts, flat)
        assert value == f(lk, lc, lt)
        numeric = [(f(lk + h, lc, lt) - f(lk - h, lc, lt)) / (2 * h),
                   (f(lk, lc + h, lt) - f(lk, lc - h, lt)) / (2 * h * np.exp(lc)),
                   (f(lk, lc, lt + h) - f(lk, lc, lt - h)) / (2 * h)]
        np.testing.assert_allclose([dlogk, dc, dlogt], numeric, rtol=1e-6, atol=1e-6)


def _niw_log_evidence_textbook(st: dict, prior: dict) -> float:
    """log p(X | y; m0) of the tied NIW model, Murphy (2007) eq. 266 written out with
    scipy's multigammaln (independent of the library's exponential-family code)."""
    n, mean, S = st["count"], st["mean"], st["scatter"]
    d, m0, k0 = mean.shape[1], prior["m0"], prior["kappa0"]
    nu0, Psi0 = prior["nu0"], prior["Psi0"]
    diff = mean - m0
    B = S + np.einsum("k,ki,kj->ij", k0 * n / (k0 + n), diff, diff)
    N = n.sum()
    return float(-0.5 * N * d * np.log(np.pi) + multigammaln((nu0 + N) / 2.0, d)
                 - multigammaln(nu0 / 2.0, d) + 0.5 * nu0 * np.linalg.slogdet(Psi0)[1]
                 - 0.5 * (nu0 + N) * np.linalg.slogdet(Psi0 + B)[1]
                 + 0.5 * d * np.sum(np.log(k0 / (k0 + n))))


def _flat_m0_log_evidence(st: dict, prior: dict, m_ref: np.ndarray, spread: float) -> float:
    """log int p(X | y; m0) dm0 (flat prior on m0, d = 1 or 2) by adaptive quadrature of
    the textbook NIW evidence with m0 given, over m_ref +- spread."""
    def log_ev(m):
        return _niw_log_evidence_textbook(st, dict(prior, m0=np.asarray(m, dtype=float)))

    peak = log_ev(m_ref)
    lo, hi = m_ref - spread, m_ref + spread
    if m_ref.size == 1:
        value, _ = integrate.quad(lambda m: np.exp(log_ev([m]) - peak), lo[0], hi[0],
                                  epsabs=0.0, epsrel=1e-11, limit=200)
    else:
        value, _ = integrate.dblquad(lambda a, b: np.exp(log_ev([a, b]) - peak),
                                     lo[1], hi[1], lo[0], hi[0], epsabs=0.0, epsrel=1e-8)
    return peak + np.log(value)


@pytest.mark.parametrize(("d", "K"), [(1, 2), (1, 3), (2, 2)])
def test_flat_m0_profile_is_the_evidence_integrated_over_m0(d, K):
    """The flat-m0 objective of LDA's ``mean_strength="auto"`` (profile_kappa with
    ``flat``) against an independent reference: the textbook NIW evidence with m0 given
    (equal to the library's), integrated over m0 by quadrature; differences over
    (c, t, kappa0) must agree (the constant of the flat prior cancels), so every term in
    c, t and kappa0 is checked."""
    rng = np.random.default_rng(44 + d + K)
    counts = [4, 7, 5][:K]
    y = np.repeat(np.arange(K), counts)
    X = rng.normal(size=(y.size, d)) * np.linspace(1.0, 2.0, d) + 1.5 * y[:, None]
    est = bg.LDA(mean_strength=1.0, cov_dof=d + 3.0).fit(X, y)
    st, m_ref = est._stats, est._prior["m0"]
    np.testing.assert_allclose(_niw_log_evidence_textbook(st, est._prior),
                               log_marginal_likelihood(st, est._prior, tied=True),
                               rtol=1e-12)
    S0 = est._prior["Psi0"] / 2.0
    parts = niw_evidence.kappa_parts(st, m_ref, S0, tied=True)
    spread = 40.0 * float(np.sqrt(np.max(np.diagonal(S0))))
    points = [(0.7, 2.0, 0.05), (3.0, 0.4, 2.5), (40.0, 9.0, 30.0)][: 3 if d == 1 else 2]
    exact, profile = [], []
    for c, t, k in points:
        prior = dict(est._prior, kappa0=k, nu0=d + 1.0 + c, Psi0=t * S0)
        exact.append(_flat_m0_log_evidence(st, prior, m_ref, spread))
        profile.append(niw_evidence.profile_kappa(c, t, k, d, parts, flat=True))
    np.testing.assert_allclose(np.diff(profile), np.diff(exact), rtol=1e-7, atol=1e-7)


def test_lda_mean_strength_auto_is_the_flat_m0_argmax():
    """LDA's ``mean_strength="auto"`` (m0 from the data): kappa0 is the argmax of the
    flat-m0 evidence over the whole of K_BOUNDS (no d / 4 bound: here it lies beyond it),
    a root of its slope, and nu0 (``cov_dof="auto"``) the argmax at that kappa0; equal
    statistics (rows and classes permuted) give the same choices to ~1e-12."""
    X, y = _data(3, 8, seed=41, K=3)
    est = bg.LDA(mean_strength="auto", cov_dof="auto").fit(X, y)
    search, prior, st, d = est.prior_search_, est._prior, est._stats, 3
    assert search["mean_evidence"] == "flat-m0"
    assert "mean_strength_unbounded" not in search
    kappa, c = search["mean_strength"], search["cov_dof"] - d - 1.0
    assert prior["kappa0"] == kappa
    assert niw_evidence.K_BOUNDS[0] < kappa < niw_evidence.K_BOUNDS[1]
    S0 = prior["Psi0"] / c
    parts = niw_evidence.kappa_parts(st, prior["m0"], S0, tied=True)
    assert abs(niw_evidence.profile_kappa_grad(c, c, kappa, d, parts, flat=True)[1]) < 1e-8
    best = niw_evidence.profile_kappa(c, c, kappa, d, parts, flat=True)
    lk_grid = np.linspace(*np.log(niw_evidence.K_BOUNDS), 2001)
    lc_grid = np.linspace(np.log(c) - 2.0, np.log(c) + 2.0, 41)
    grid = [niw_evidence.profile_kappa(np.exp(lc), np.exp(lc), np.exp(lk), d, parts,
                                       flat=True) for lk in lk_grid[::40] for lc in lc_grid]
    grid += [niw_evidence.profile_kappa(c, c, np.exp(lk), d, parts, flat=True)
             for lk in lk_grid]
    assert max(grid) <= best + 1e-9
    # the plug-in evidence (mean_prior given: the same m0) merges the means, and takes
    # the bound d / 4; the flat-m0 one does not
    plug = bg.LDA(mean_strength="auto", cov_dof=7.0, mean_prior=X.mean(axis=0)).fit(X, y)
    assert plug.prior_search_["mean_evidence"] == "plug-in"
    assert plug.prior_search_["mean_strength"] == mean_strength_bound(d)
    assert plug.prior_search_["mean_strength_unbounded"] > mean_strength_bound(d)
    # determinism: permuted rows, relabelled classes
    order = np.random.default_rng(5).permutation(y.size)
    again = bg.LDA(mean_strength="auto", cov_dof="auto").fit(X[order], (2 - y)[order])
    for key in ("mean_strength", "cov_dof"):
        np.testing.assert_allclose(again.prior_search_[key], search[key], rtol=1e-12)
    fixed = bg.LDA(mean_strength="auto", cov_dof=7.0).fit(X, y)
    fixed_again = bg.LDA(mean_strength="auto", cov_dof=7.0).fit(X[order], (2 - y)[order])
    np.testing.assert_allclose(fixed_again.prior_search_["mean_strength"],
                               fixed.prior_search_["mean_strength"], rtol=1e-12)


@pytest.mark.parametrize("tied", [False])
def test_mean_strength_search_is_the_argmax_over_a_grid(tied):
    X, y = _data(3, 8, seed=41, K=3)
    """QDA (plug-in m0): kappa0 is the argmax of the evidence over [1e-4, d / 4] (the
    bound of ``mean_strength_bound``); here the evidence's own argmax lies beyond the
    bound, and ``search_["mean_strength_unbounded"]`` records it."""
    est = (bg.LDA if tied else bg.QDA)(mean_strength="auto", cov_dof=7.0).fit(X, y)
    prior, st = est._prior, est._stats
    kappa = est.prior_search_["mean_strength"]
    assert prior["kappa0"] == kappa <= mean_strength_bound(3) == 0.75
    best = log_marginal_likelihood(st, prior, tied=tied)
    low = niw_evidence.K_BOUNDS[0]
    grid = np.exp(np.linspace(np.log(low), np.log(0.75), 2001))
    values = [log_marginal_likelihood(st, dict(prior, kappa0=k), tied=tied) for k in grid]
    assert max(values) <= best + 1e-7
    # the unbounded search's choice: the argmax over the whole range, beyond the bound
    free = est.prior_search_["mean_strength_unbounded"]
    whole = np.exp(np.linspace(*np.log(niw_evidence.K_BOUNDS), 2001))
    on_whole = [log_marginal_likelihood(st, dict(prior, kappa0=k), tied=tied)
                for k in whole]
    assert free > 0.75
    # the evidence's choice is a root of its slope in log kappa0, not where a search on
    # values stopped (equal statistics give equal choices)
    c = prior["nu0"] - 3 - 1
    parts = niw_evidence.kappa_parts(st, prior["m0"], prior["Psi0"] / c, tied=tied)
    assert abs(niw_evidence.profile_kappa_grad(c, c, free, 3, parts)[1]) < 1e-8
    assert log_marginal_likelihood(st, dict(prior, kappa0=free), tied=tied) >= (
        max(on_whole) - 1e-7)
    # at the bound the fit is that of mean_strength = d / 4
    fixed = (bg.LDA if tied else bg.QDA)(mean_strength=0.75, cov_dof=7.0).fit(X, y)
    np.testing.assert_allclose(fixed.predict_proba(X), est.predict_proba(X), rtol=1e-10)
    table = pd.DataFrame(est.prior_search_["candidates"])
    assert table["mean_strength"].iloc[-1] == "auto"
    assert table["log_evidence"].iloc[-1] >= table["log_evidence"].max() - 1e-9


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_mean_strength_auto_with_missing_streaming_and_methods(cls):
    X, y = _data(3, 10, seed=42)
    whole = cls(mean_strength="auto", cov_scale="auto").fit(X, y)
    stream = cls(mean_strength="auto", cov_scale="auto")
    for part in np.array_split(np.random.default_rng(1).permutation(y.size), 3):
        stream.partial_fit(X[part], y[part], classes=[0, 1])
    for key in ("mean_strength", "cov_dof", "cov_scale"):
        np.testing.assert_allclose(stream.prior_search_[key], whole.prior_search_[key],
                                   rtol=1e-6)
    for method in ("mle", "map", "conjugate"):
        est = cls(method=method, mean_strength="auto", draws=20, chains=1,
                  random_state=0).fit(X, y)
        assert np.all(np.isfinite(est.predict_proba(X)))
    X[np.random.default_rng(0).random(X.shape) < 0.15] = np.nan
    gappy = cls(mean_strength="auto").fit(X, y)
    assert gappy._prior["kappa0"] == gappy.prior_search_["mean_strength"] > 0
    assert np.all(np.isfinite(gappy.predict_proba(X)))


def test_mean_strength_auto_is_not_more_confident_than_the_data_allow():
    """Few rows per class for the features (d = 40, 10 rows per class, 2 Gaussian
    classes whose means are 3 standard deviations apart along a random direction, the
    shared covariance a rotation of variances log-spaced over [0.1, 10]): kappa0 =
    0.01 treats the noise of the sample means as signal and predicts held-out labels
    hardly better than the class frequencies (0.68 against log 2 = 0.69); the evidence
    with m0 plugged in merges the class means (log loss log 2 to 1e-3, every row at
    1/2) and its bounded choice takes d / 4; LDA's "auto" (m0 integrated out, no bound)
    keeps the means apart by itself (kappa0 12.2, log loss 0.45, as the bound's 0.44)."""
    rng = np.random.default_rng(3)
    d = 40
    rotation, _ = np.linalg.qr(rng.normal(size=(d, d)))
    chol = np.linalg.cholesky(rotation @ np.diag(np.logspace(-1, 1, d)) @ rotation.T)
    u = rng.normal(size=d)
    delta = chol @ (3.0 * u / np.linalg.norm(u))

    def draw(n):
        y = np.repeat([0, 1], n)
        return (y[:, None] - 0.5) * delta + rng.normal(size=(2 * n, d)) @ chol.T, y

    (X, y), (X_test, y_test) = draw(10), draw(1000)

    def loss(**kw):
        est = bg.LDA(method="conjugate", draws=10, chains=1, **kw).fit(X, y)
        p = est.predict_proba(X_test)[np.arange(y_test.size), y_test]
        return -np.mean(np.log(p)), est

    auto, est = loss(mean_strength="auto")
    assert est.prior_search_["mean_evidence"] == "flat-m0"
    assert 0.01 < est.prior_search_["mean_strength"] < 1e3
    plug, plugged = loss(mean_strength="auto", mean_prior=X.mean(axis=0))
    assert plugged.prior_search_["mean_strength"] == mean_strength_bound(d) == 10.0
    free = plugged.prior_search_["mean_strength_unbounded"]
    assert free > 10.0
    assert abs(loss(mean_strength=free)[0] - np.log(2)) < 1e-3
    default = loss()[0]
    assert abs(auto - plug) < 0.05  # flat-m0 kappa0 12.2: 0.446; the bound 10: 0.442
    assert default > auto + 0.15
    assert auto < 0.6
