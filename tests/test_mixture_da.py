"""MixtureDA: EM against scikit-learn's GaussianMixture and the closed-form MAP
equations, densities against scipy.stats, n_components=1 against QDA, the Gibbs
sampler against the conjugate posterior (M = 1), truth and a small simulation-based
calibration, interleaved classes where one Gaussian per class fails, and bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp
from sklearn.mixture import GaussianMixture
from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesgen as bg
from tests.sklearn_checks import _expected_failures, _mixture_instances


def interleaved(n_per_blob: int, seed: int, spread: float = 0.5):
    """Two classes of three blobs each, alternating along the first axis (0, 4, 8 for
    class 0; 2, 6, 10 for class 1): one Gaussian per class cannot follow them."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for j, centre in enumerate([0.0, 2.0, 4.0, 6.0, 8.0, 10.0]):
        X.append(rng.normal([centre, 0.0], spread, size=(n_per_blob, 2)))
        y.append(np.full(n_per_blob, j % 2))
    return np.vstack(X), np.concatenate(y)


def two_blob_class(n: int, seed: int):
    """Class 0: blobs at (0, 0) and (5, 5) with weights 0.3 / 0.7; class 1: one blob at
    (0, 5)."""
    rng = np.random.default_rng(seed)
    n0 = int(0.3 * n)
    X0 = np.vstack([rng.normal([0, 0], 0.6, size=(n0, 2)),
                    rng.normal([5, 5], 0.6, size=(n - n0, 2))])
    X1 = rng.normal([0, 5], 0.8, size=(n, 2))
    return np.vstack([X0, X1]), np.repeat([0, 1], n)


@pytest.fixture(scope="module")
def blobs():
    return two_blob_class(300, 0)


@pytest.fixture(scope="module")
def map_fit(blobs):
    X, y = blobs
    return bg.MixtureDA(n_components=[2, 1], predictive="posterior", random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def plugin_fit(blobs):
    X, y = blobs
    return bg.MixtureDA(n_components=[2, 1], predictive="plugin", random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def gibbs_fit(blobs):
    X, y = blobs
    with warnings.catch_warnings():  # short chains: the ESS warning is expected here
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        return bg.MixtureDA(n_components=[2, 1], method="gibbs", draws=60, tune=30,
                            chains=2, random_state=1).fit(X, y)


# ----------------------------------------------------------- one component = QDA
@pytest.mark.parametrize("kw", [{}, {"cov_dof": None}, {"cov_dof": "oas"},
                                {"cov_structure": "diag"},
                                {"cov_scale": "auto", "mean_strength": "auto"},
                                {"class_alpha": 2.0, "cov_target": "isotropic"}])
def test_one_component_equals_qda(kw):
    """predictive="plugin" (the default): QDA's MAP plug-in rule (``bg.QDA()``) to
    rounding."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    mix = bg.MixtureDA(n_components=1, predictive="plugin", **kw).fit(X, y)
    qda = bg.QDA(**kw).fit(X, y)
    np.testing.assert_allclose(mix.predict_proba(X), qda.predict_proba(X), rtol=0,
                               atol=1e-10)
    np.testing.assert_allclose(mix.predict_joint_log_proba(X),
                               qda.predict_joint_log_proba(X), rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(mix.means_[:, 0], qda.means_, atol=1e-10)
    np.testing.assert_allclose(mix.covariances_[:, 0], np.stack(qda.covariance_), atol=1e-10)


@pytest.mark.parametrize("kw", [{}, {"cov_dof": None}, {"cov_structure": "diag"},
                                {"class_alpha": 2.0, "cov_target": "isotropic"},
                                {"class_prior": [0.2, 0.3, 0.5]}])
def test_one_component_posterior_predictive_equals_conjugate_qda(kw):
    """predictive="posterior" with one component is QDA's closed-form
    posterior predictive (``method="conjugate"``: Student-t, E[pi]) to rounding, while
    the parameters stay the MAP's."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    mix = bg.MixtureDA(n_components=1, predictive="posterior", **kw).fit(X, y)
    qda = bg.QDA(method="conjugate", draws=5, chains=1, random_state=0, **kw).fit(X, y)
    np.testing.assert_allclose(mix.predict_proba(X), qda.predict_proba(X), rtol=0,
                               atol=1e-10)
    np.testing.assert_allclose(mix.predict_joint_log_proba(X),
                               qda.predict_joint_log_proba(X), rtol=1e-12, atol=1e-10)
    plug = bg.QDA(**kw).fit(X, y)
    np.testing.assert_allclose(mix.means_[:, 0], plug.means_, atol=1e-10)
    counts = np.bincount(y)
    alpha = kw.get("class_alpha", 1.0)
    expected = kw.get("class_prior", (counts + alpha) / (counts.sum() + 3 * alpha))
    np.testing.assert_allclose(mix.class_prior_, expected, rtol=1e-12)


def test_posterior_predictive_against_student_t(map_fit, blobs):
    """predictive="posterior" of a two-component class, computed here independently in
    the units of X: responsibilities r_nm from scipy's normal densities at the MAP, the
    Normal-Inverse-Wishart posterior of each component's r-weighted rows under the
    class's component prior (kappa_n = kappa0 + N_m, nu_n = nu0 + N_m, m_n, Psi_n), its
    multivariate Student-t predictive (scipy.stats.multivariate_t, nu_n - d + 1 degrees
    of freedom, shape Psi_n (kappa_n + 1) / (kappa_n (nu_n - d + 1))), weights
    E[w_m] = (N_m + 1) / (N + 2) and class prior E[pi_k] = (N_k + 1) / (N + 2)."""
    X, y = blobs
    Xt = X[::7]
    d = X.shape[1]
    out = []
    for k, M in enumerate((2, 1)):
        Xk = X[y == k]
        p = map_fit.component_prior_[k]
        w, mu, cov = map_fit.weights_[k, :M], map_fit.means_[k, :M], map_fit.covariances_[k, :M]
        logs = np.stack([np.log(w[m]) + stats.multivariate_normal(mu[m], cov[m]).logpdf(Xk)
                         for m in range(M)], axis=1)
        R = np.exp(logs - logsumexp(logs, axis=1, keepdims=True))
        terms = []
        for m in range(M):
            r = R[:, m]
            N = r.sum()
            xbar = r @ Xk / N
            S = (Xk - xbar).T @ ((Xk - xbar) * r[:, None])
            kappa, nu = p["kappa0"] + N, p["nu0"] + N
            loc = (p["kappa0"] * p["m0"] + N * xbar) / kappa
            diff = xbar - p["m0"]
            Psi = p["Psi0"] + S + p["kappa0"] * N / kappa * np.outer(diff, diff)
            df = nu - d + 1
            t = stats.multivariate_t(loc, Psi * (kappa + 1) / (kappa * df), df=df)
            terms.append(np.log((N + 1.0) / (Xk.shape[0] + M)) + t.logpdf(Xt))
        pi = (np.sum(y == k) + 1.0) / (y.size + 2.0)
        out.append(np.log(pi) + logsumexp(np.stack(terms), axis=0))
    expected = np.stack(out, axis=1)
    np.testing.assert_allclose(map_fit.predict_joint_log_proba(Xt), expected, rtol=1e-9)
    proba = np.exp(expected - logsumexp(expected, axis=1, keepdims=True))
    np.testing.assert_allclose(map_fit.predict_proba(Xt), proba, atol=1e-10)
    np.testing.assert_allclose(map_fit.score_samples(Xt), logsumexp(expected, axis=1),
                               rtol=1e-9)


def test_posterior_predictive_is_less_confident_than_the_plugin(map_fit, plugin_fit, blobs):
    """Same mode, heavier tails: far from the data the predictive density (Student-t
    components) is far above the plug-in's (Gaussian); near the data the
    probabilities agree closely."""
    X, _ = blobs
    np.testing.assert_allclose(map_fit.means_, plugin_fit.means_, atol=1e-12)
    np.testing.assert_allclose(map_fit.predict_proba(X), plugin_fit.predict_proba(X),
                               atol=0.05)
    far = np.array([[12.0, -8.0], [-9.0, 14.0]])
    assert np.all(map_fit.predict_joint_log_proba(far)
                  > plugin_fit.predict_joint_log_proba(far))
    # class 1's prior has nu0 ~ 3.8 (its Student-t is heavy); class 0's components got
    # nu0 = 1e6 from the evidence (their Student-t's are nearly Gaussian)
    assert np.all(map_fit.score_samples(far) > plugin_fit.score_samples(far) + 40)


def test_one_component_auto_on_gaussian_classes():
    """One Gaussian per class: "auto" (BIC) keeps one component, so it is QDA."""
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(0, 1, (150, 3)), rng.normal(2, 1.5, (150, 3))])
    y = np.repeat([0, 1], 150)
    mix = bg.MixtureDA(random_state=0).fit(X, y)
    assert mix.n_components_.tolist() == [1, 1]
    np.testing.assert_allclose(mix.predict_proba(X), bg.QDA().fit(X, y).predict_proba(X),
                               atol=1e-10)
    post = bg.MixtureDA(predictive="posterior", random_state=0).fit(X, y)
    assert post.n_components_.tolist() == [1, 1]
    qda = bg.QDA(method="conjugate", draws=5, chains=1).fit(X, y)
    np.testing.assert_allclose(post.predict_proba(X), qda.predict_proba(X), atol=1e-10)
    assert mix.bic_.shape == (2, 5) and np.argmax(mix.bic_[0]) == 0


# ------------------------------------------------------------------------- EM
def test_em_matches_sklearn_gaussian_mixture():
    """A weak prior (nu0 = d + 2, tiny scale and mean strength) and many rows: the MAP is
    the MLE up to O(1/N); weights, means, covariances and responsibilities match
    scikit-learn's GaussianMixture fitted on the class's rows."""
    rng = np.random.default_rng(0)
    X0 = np.vstack([rng.normal([0, 0], [1.0, 0.5], (1200, 2)),
                    rng.normal([6, 3], [0.7, 1.2], (2800, 2))])
    X1 = rng.normal([0, 6], 1.0, (500, 2))
    X, y = np.vstack([X0, X1]), np.repeat([0, 1], [4000, 500])
    mix = bg.MixtureDA(n_components=[2, 1], cov_dof=None, cov_scale=1e-6, mean_strength=1e-6,
                       random_state=0).fit(X, y)
    gm = GaussianMixture(2, covariance_type="full", tol=1e-8, random_state=0).fit(X0)
    order = np.argsort(gm.means_[:, 0])
    mine = np.argsort(mix.means_[0, :, 0])
    np.testing.assert_allclose(mix.weights_[0, mine], gm.weights_[order], atol=1e-4)
    np.testing.assert_allclose(mix.means_[0, mine], gm.means_[order], atol=1e-3)
    # the MAP covariance divides by N_m + nu0 + d + 2 instead of N_m
    N = mix.weights_[0, mine] * 4000
    d = 2
    scaled = mix.covariances_[0, mine] * ((N + (d + 2) + d + 2) / N)[:, None, None]
    np.testing.assert_allclose(scaled, gm.covariances_[order], rtol=2e-3, atol=2e-4)
    resp = mix._family.responsibilities(
        mix._frame.internal(X0), mix._params, np.zeros(4000, dtype=int))
    np.testing.assert_allclose(resp[:, mine], gm.predict_proba(X0)[:, order], atol=1e-3)


def test_em_fixed_point_is_the_closed_form_map(map_fit, blobs):
    """At convergence, the MAP equations hold: with the responsibilities r_nm of the fit,
    mu_m = (kappa0 m0 + N_m xbar_m) / (kappa0 + N_m) and
    Sigma_m = (Psi0 + S_m + kappa0 N_m/(kappa0 + N_m) (xbar_m - m0)(...)^T) / (nu0 + N_m + d + 2)
    (Normal-Inverse-Wishart joint mode), w_m = N_m / N (weight_alpha = 1); computed here
    in the units of X from scipy densities and the class's component prior in user
    units."""
    X, y = blobs
    Xk = X[y == 0]
    p = map_fit.component_prior_[0]  # the prior of class 0's two components
    w, mu, cov = map_fit.weights_[0], map_fit.means_[0], map_fit.covariances_[0]
    logs = np.stack([np.log(w[m]) + stats.multivariate_normal(mu[m], cov[m]).logpdf(Xk)
                     for m in range(2)], axis=1)
    R = np.exp(logs - logsumexp(logs, axis=1, keepdims=True))
    d = X.shape[1]
    for m in range(2):
        r = R[:, m]
        N = r.sum()
        xbar = r @ Xk / N
        S = (Xk - xbar).T @ ((Xk - xbar) * r[:, None])
        kappa = p["kappa0"] + N
        mean = (p["kappa0"] * p["m0"] + N * xbar) / kappa
        diff = xbar - p["m0"]
        Psi = p["Psi0"] + S + p["kappa0"] * N / kappa * np.outer(diff, diff)
        np.testing.assert_allclose(mu[m], mean, atol=1e-4)
        np.testing.assert_allclose(cov[m], Psi / (p["nu0"] + N + d + 2), rtol=1e-3, atol=1e-5)
        np.testing.assert_allclose(w[m], N / Xk.shape[0], atol=1e-4)
    assert map_fit.converged_.all()


def test_em_starts_are_reproducible(blobs):
    X, y = blobs
    a = bg.MixtureDA(n_components=3, random_state=5).fit(X, y)
    b = bg.MixtureDA(n_components=3, random_state=5).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


# ------------------------------------------------------------------- densities
def _mixture_logpdf(X, pi, weights, means, covs):
    """log p(x, y = k) by scipy.stats, (n, K)."""
    out = []
    for k in range(len(pi)):
        terms = [np.log(weights[k, m]) + stats.multivariate_normal(means[k, m], covs[k, m])
                 .logpdf(X) for m in range(weights.shape[1]) if weights[k, m] > 0]
        out.append(np.log(pi[k]) + logsumexp(np.stack(terms), axis=0))
    return np.stack(out, axis=1)


def test_map_densities_match_scipy(plugin_fit, blobs):
    X, _ = blobs
    fit = plugin_fit
    expected = _mixture_logpdf(X[:50], fit.class_prior_, fit.weights_, fit.means_,
                               fit.covariances_)
    np.testing.assert_allclose(fit.predict_joint_log_proba(X[:50]), expected, rtol=1e-10)
    np.testing.assert_allclose(fit.score_samples(X[:50]), logsumexp(expected, axis=1),
                               rtol=1e-10)
    proba = np.exp(expected - logsumexp(expected, axis=1, keepdims=True))
    np.testing.assert_allclose(fit.predict_proba(X[:50]), proba, atol=1e-12)


def test_gibbs_predictive_is_the_mean_over_draws(gibbs_fit, blobs):
    """predict_joint_log_proba = log mean_s p(x, y = k | theta_s), each term by scipy
    from the draws in idata_ (units of X)."""
    X, _ = blobs
    post = gibbs_fit.idata_.posterior.stack(s=("chain", "draw"))
    pi = post["pi"].values.T
    W = post["weights"].transpose("s", ...).values
    MU = post["mu"].transpose("s", ...).values
    COV = post["cov"].transpose("s", ...).values
    pick = np.arange(0, pi.shape[0], 7)  # a subset of draws, with the estimator's
    sub = [_mixture_logpdf(X[:20], pi[s], W[s], MU[s], COV[s]) for s in pick]
    expected = logsumexp(np.stack(sub), axis=0) - np.log(len(pick))
    thin = bg.MixtureDA(n_components=[2, 1], method="gibbs")
    thin.__dict__.update(gibbs_fit.__dict__)
    thin._params = {k: v[pick] for k, v in gibbs_fit._params.items()}
    thin._log_pi_draws = gibbs_fit._log_pi_draws[pick]
    np.testing.assert_allclose(thin.predict_joint_log_proba(X[:20]), expected, rtol=1e-10)


# -------------------------------------------------------------------- Gibbs
def test_gibbs_posterior_near_truth(gibbs_fit):
    """Well separated blobs: posterior means of the (relabeled) components near the
    truth, weights near 0.3 / 0.7, and every draw's covariance positive definite."""
    order = np.argsort(gibbs_fit.means_[0, :, 0])
    np.testing.assert_allclose(gibbs_fit.means_[0, order], [[0, 0], [5, 5]], atol=0.25)
    np.testing.assert_allclose(gibbs_fit.weights_[0, order], [0.3, 0.7], atol=0.06)
    np.testing.assert_allclose(gibbs_fit.covariances_[0, order[0]], 0.36 * np.eye(2),
                               atol=0.15)
    cov = gibbs_fit.idata_.posterior["cov"].values
    assert np.all(np.linalg.eigvalsh(cov.reshape(-1, 2, 2)) > 0)
    assert set(gibbs_fit.idata_.groups()) >= {"posterior", "log_likelihood", "observed_data",
                                              "sample_stats"}
    assert gibbs_fit.idata_.posterior["mu"].dims == ("chain", "draw", "class", "component",
                                                     "feature")


def test_gibbs_one_component_is_the_conjugate_posterior():
    """M = 1: no latent labels, so each sweep is an exact draw from the NIW posterior:
    the posterior means of mu and Sigma match QDA's closed-form conjugate posterior
    (m_k and Psi_k / (nu_k - d - 1)) within Monte Carlo error."""
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(1, 2, (40, 2))])
    y = np.repeat([0, 1], 40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        mix = bg.MixtureDA(n_components=1, method="gibbs", draws=1000, tune=5, chains=2,
                           cov_dof=None, random_state=0).fit(X, y)
    qda = bg.QDA(method="conjugate", cov_dof=None, draws=5, chains=1).fit(X, y)
    post = qda._posterior
    frame = qda._frame
    m_user = frame.user_loc(post["m"])
    cov_mean = frame.user_cov(post["Psi"] / (post["nu"] - 2 - 1)[:, None, None])
    mu_draws = mix.idata_.posterior["mu"].values[..., 0, :]  # chain, draw, class, d
    se = mu_draws.reshape(-1, 2, 2).std(axis=0) / np.sqrt(2000)
    np.testing.assert_array_less(np.abs(mix.means_[:, 0] - m_user), 5 * se)
    np.testing.assert_allclose(mix.covariances_[:, 0], cov_mean, rtol=0.08)



def gibbs_rank(X0: np.ndarray, rng, *, M: int, draws: int, prior: dict, seed: int,
               coord: int, truth: float) -> int:
    """SBC rank of a true class mean E[x_coord | k=0] = sum_m w_m mu_m among the draws of
    ``MixtureDA(method="gibbs")`` fitted to class 0's rows ``X0`` (n, d) (M components,
    the simulated prior) and a second class of standard normal rows, required to fit."""
    n, d = X0.shape
    X, y = np.vstack([X0, rng.normal(0.0, 1.0, size=(n, d))]), np.repeat([0, 1], n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        fit = bg.MixtureDA(n_components=[M, 1], method="gibbs", draws=draws, tune=30,
                           chains=1, n_init=1, component_prior="qda", random_state=seed,
                           **prior).fit(X, y)
    post = fit.idata_.posterior
    mean_draws = (post["weights"][0, :, 0] * post["mu"][0, :, 0, :, coord]).sum("component")
    return int((mean_draws.values < truth).sum())

def test_gibbs_calibration_small_sbc():
    """Simulation-based calibration (Talts et al. 2018), small: theta from the (fixed)
    prior, data from theta, the rank of the true label-invariant class mean
    E[x | k] = sum_m w_m mu_m among the posterior draws; the ranks must look uniform
    (a chi-square test over 4 bins at the 0.1% level: gross errors only).
    ``component_prior="qda"``: every component gets exactly the simulated prior (the
    default "evidence" rescales and re-resolves the prior of several components)."""
    M, n, draws = 2, 30, 39  # one dimension
    nu0, kappa0, psi0 = 4.0, 0.5, 1.0
    prior = {"mean_prior": [0.0], "mean_strength": kappa0, "cov_target": [psi0 / (nu0 - 2)],
             "cov_dof": nu0, "cov_scale": 1.0}
    rng = np.random.default_rng(11)
    ranks = []
    for rep in range(40):
        w = rng.dirichlet(np.ones(M))
        sig2 = psi0 / rng.chisquare(nu0, size=M)  # IW(psi0, nu0) in one dimension
        mu = rng.normal(0.0, np.sqrt(sig2 / kappa0))
        z = rng.choice(M, size=n, p=w)
        X0 = rng.normal(mu[z], np.sqrt(sig2[z]))[:, None]
        ranks.append(gibbs_rank(X0, rng, M=M, draws=draws, prior=prior, seed=rep,
                                coord=0, truth=float(w @ mu)))
    counts = np.bincount(np.asarray(ranks) * 4 // (draws + 1), minlength=4)
    assert stats.chisquare(counts).pvalue > 1e-3, counts


def test_component_priors(blobs):
    """"mclust": nu0 = d + 2 and E[Sigma] = S0 / M^(2/d), S0 QDA's target (QDA's
    Psi0 / (nu0 - d - 1)); "qda": QDA's resolved prior for every component; one-component
    classes get QDA's prior whatever the option."""
    X, y = blobs
    d = X.shape[1]
    qda_prior = bg.MixtureDA(n_components=1).fit(X, y).component_prior_[0]
    S0 = qda_prior["Psi0"] / (qda_prior["nu0"] - d - 1)
    mc = bg.MixtureDA(n_components=[3, 1], component_prior="mclust", random_state=0).fit(X, y)
    assert mc.component_prior_[0]["nu0"] == d + 2
    np.testing.assert_allclose(mc.component_prior_[0]["Psi0"], S0 / 3 ** (2 / d), rtol=1e-12)
    for fit in (mc, bg.MixtureDA(n_components=[3, 1], component_prior="qda",
                                 random_state=0).fit(X, y)):
        np.testing.assert_allclose(fit.component_prior_[1]["Psi0"], qda_prior["Psi0"],
                                   rtol=1e-12)
        assert fit.component_prior_[1]["nu0"] == qda_prior["nu0"]


# ----------------------------------------------------------- multimodal classes
def test_interleaved_blobs_qda_fails_mixture_succeeds():
    X, y = interleaved(60, 0)
    X_test, y_test = interleaved(200, 1)
    qda = bg.QDA().fit(X, y).score(X_test, y_test)
    mix = bg.MixtureDA(random_state=0).fit(X, y)
    acc = mix.score(X_test, y_test)
    assert qda < 0.8 and acc > 0.95, (qda, acc)
    assert mix.n_components_.tolist() == [3, 3]
    # QDA's class prior for the components (nu0 = 1e6 by QDA's evidence here) fails
    qda_prior = bg.MixtureDA(n_components=3, component_prior="qda", random_state=0)
    assert qda_prior.fit(X, y).score(X_test, y_test) < 0.8


# --------------------------------------------------------------- capabilities
def test_sample_save_load_and_intervals(gibbs_fit, map_fit, plugin_fit, blobs, tmp_path):
    X, _ = blobs
    for fit in (map_fit, plugin_fit, gibbs_fit):
        Xs, ys = fit.sample(40, random_state=0)
        assert Xs.shape == (40, 2) and set(ys) <= {0, 1}
        Xs0, _ = fit.sample(400, classes=0, random_state=1)
        # class 0 is a 0.3 / 0.7 mixture of blobs at (0, 0) and (5, 5)
        assert 0.2 < np.mean(Xs0[:, 0] < 2.5) < 0.4
        path = tmp_path / f"{fit.method_}_{fit.predictive}.nc"
        fit.save(path)
        np.testing.assert_array_equal(bg.load(path).predict_proba(X), fit.predict_proba(X))
    interval = gibbs_fit.predict_proba_interval(X[:3])
    assert interval.dims == ("obs", "class", "hdi")
    assert gibbs_fit.predict_proba_draws(X[:3]).shape == (2, 60, 3, 2)


def test_loo_compare_uncertainty_and_replicates(gibbs_fit, blobs):
    """PSIS-LOO on idata_, bg.compare against one component per class (the mixture
    wins on a class made of two blobs), the uncertainty decomposition and posterior
    predictive replicates."""
    import arviz as az

    X, y = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Pareto k and ESS notes of the short chains
        loo = az.loo(gibbs_fit.idata_)
        one = bg.MixtureDA(n_components=1, method="gibbs", draws=60, tune=5, chains=2,
                           random_state=0).fit(X, y)
        table = bg.compare({"mixture": gibbs_fit, "qda": one})
    assert np.isfinite(loo.elpd_loo)
    assert table.index[0] == "mixture"
    u = gibbs_fit.predict_uncertainty(X[:4])
    np.testing.assert_allclose(u["total"], u["aleatoric"] + u["epistemic"], atol=1e-12)
    idata = gibbs_fit.sample_posterior_predictive(random_state=0)
    assert idata.posterior_predictive["x"].shape == (2, 60, X.shape[0], 2)


def test_model_only_with_kept_rows(map_fit, gibbs_fit, blobs):
    """A point fit keeps no rows, so it has no ``model_`` (``build_model(X, y)`` builds
    one); a Gibbs fit keeps them and has one."""
    import pymc as pm

    assert not hasattr(map_fit, "model_")
    with pytest.raises(AttributeError, match="build_model"):
        map_fit.model_
    assert isinstance(gibbs_fit.model_, pm.Model)
    assert isinstance(map_fit.build_model(*blobs), pm.Model)


# ------------------------------------------------------------- method="mcmc"
MCMC_KW = {"draws": 250, "tune": 250, "chains": 2, "progressbar": False}


@pytest.fixture(scope="module")
def mcmc_fit(blobs):
    X, y = blobs
    with warnings.catch_warnings():  # short chains: an ESS warning may come
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        return bg.MixtureDA(n_components=[2, 1], method="mcmc", random_state=2,
                            **MCMC_KW).fit(X, y)


@pytest.fixture(scope="module")
def long_gibbs_fit(blobs):
    X, y = blobs
    return bg.MixtureDA(n_components=[2, 1], method="gibbs", draws=1000, tune=100,
                        chains=2, random_state=3).fit(X, y)


def _mc_close(a, b, names, z=4.0):
    """Posterior means of ``names`` in two idata agree within z Monte Carlo standard
    errors of their difference (entries constant in both, the padding, skipped)."""
    import arviz as az

    for name in names:
        ma, mb = (i.posterior[name].mean(("chain", "draw")).values for i in (a, b))
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sa, sb = (np.nan_to_num(az.mcse(i.posterior[[name]])[name].values)
                      for i in (a, b))
        err = np.sqrt(sa**2 + sb**2)
        assert np.all(np.abs(ma - mb) <= z * err + 1e-9), (name, ma, mb, err)


def test_mcmc_agrees_with_gibbs(mcmc_fit, long_gibbs_fit):
    """Two samplers of the same posterior (NUTS with the labels summed out, data
    augmentation): the relabeled posterior means of pi, the weights, means and
    covariances agree within Monte Carlo error, and NUTS converged."""
    import arviz as az

    _mc_close(mcmc_fit.idata_, long_gibbs_fit.idata_, ["pi", "weights", "mu", "cov"])
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rhat = az.rhat(mcmc_fit.idata_, var_names=["pi", "weights", "mu"])
    assert max(float(np.nanmax(rhat[v].values)) for v in rhat.data_vars) < 1.05
    assert int(mcmc_fit.idata_.sample_stats["diverging"].sum()) == 0
    # the component order is the MAP's (pivot) after relabeling
    np.testing.assert_allclose(mcmc_fit.weights_[0], long_gibbs_fit.weights_[0], atol=0.03)


def test_mcmc_one_component_is_the_conjugate_posterior(blobs):
    """n_components=1: the mixture model is QDA's; NUTS agrees with QDA's exact conjugate
    posterior (i.i.d. draws) within Monte Carlo error."""
    X, y = blobs
    with warnings.catch_warnings():  # short chains: an ESS warning may come
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        mix = bg.MixtureDA(n_components=1, method="mcmc", random_state=4,
                           **MCMC_KW).fit(X, y)
    qda = bg.QDA(method="conjugate", draws=2000, chains=2, random_state=0).fit(X, y)
    _mc_close(mix.idata_, qda.idata_.rename({"mu": "mu", "cov": "cov"}), ["pi"])
    for name in ("mu", "cov"):
        a = mix.idata_.posterior[name].values[:, :, :, 0]  # (chain, draw, class, ...)
        b = qda.idata_.posterior[name].values
        tol = 4 * np.sqrt(a.std((0, 1)) ** 2 / 200 + b.std((0, 1)) ** 2 / 4000) + 1e-9
        assert np.all(np.abs(a.mean((0, 1)) - b.mean((0, 1))) <= tol), name
        # the posterior spread too (within 25%: short chains)
        np.testing.assert_allclose(a.std((0, 1)), b.std((0, 1)), rtol=0.25, atol=1e-6)
    np.testing.assert_allclose(mix.predict_proba(X[:20]), qda.predict_proba(X[:20]),
                               atol=0.02)


def test_mcmc_model_and_idata(mcmc_fit, blobs):
    """model_ is the pm.Model of the documented variables; its log-density of x at a
    point is the mixture density by scipy.stats; idata_ has the groups of the other
    posterior fits."""
    import pymc as pm

    X, y = blobs
    model = mcmc_fit.model_
    assert isinstance(model, pm.Model)
    free = {rv.name for rv in model.free_RVs}
    assert free == {"pi", "weights_0", "component_mu", "component_cov_bartlett_diag_sq",
                    "component_cov_bartlett_lower"}
    assert {"weights", "mu", "cov", "component_cov"} <= set(model.named_vars)
    assert model.named_vars_to_dims["mu"] == ("class", "component", "feature")
    assert list(model.coords["class_component"]) == ["0,0", "0,1", "1,0"]
    point = model.initial_point()
    rng = np.random.default_rng(0)
    point = {name: value + 0.2 * rng.normal(size=value.shape) for name, value in point.items()}
    outs = model.replace_rvs_by_values([model["weights"], model["mu"], model["cov"]])
    w, mu, cov = model.compile_fn(outs, inputs=model.value_vars,
                                  on_unused_input="ignore")(point)
    logp_x = model.compile_logp(vars=[model["x"]], sum=False)(point)[0]
    pi = np.ones(2)  # log pi cancels: compare x's term only
    expected = _mixture_logpdf(X, pi, w, mu, cov)[np.arange(len(y)), y]
    np.testing.assert_allclose(logp_x, expected, rtol=1e-8)
    assert set(mcmc_fit.idata_.groups()) >= {"posterior", "log_likelihood", "sample_stats",
                                            "observed_data"}
    assert mcmc_fit.idata_.posterior["cov"].dims == ("chain", "draw", "class", "component",
                                                     "feature", "feature_bis")
    assert "relabeled" in mcmc_fit.idata_.sample_stats
    assert mcmc_fit.idata_.log_likelihood["xy"].shape == (2, 250, X.shape[0])
    assert mcmc_fit.method_ == "mcmc"
    prior = mcmc_fit.sample_prior_predictive(draws=20, random_state=0)
    assert prior.prior_predictive["x"].shape == (1, 20, X.shape[0], 2)


def test_mcmc_rows_loglik_matches_scipy(mcmc_fit, blobs):
    """The NUTS model's per-row mixture log-likelihood (on the precision factors) equals
    the mixture density by scipy.stats at a point of the prior, for full and diagonal
    covariances (internal frame: the log-density there differs by the frame's constant
    log-Jacobian only, so compare in the internal frame)."""
    import pymc as pm

    from bayesgen.families.mixture import pymc as mpymc
    from bayesgen.inference.model import model_coords

    X, y = blobs
    for structure in ("full", "diag"):
        fit = bg.MixtureDA(n_components=[2, 1], cov_structure=structure,
                           random_state=0).fit(X, y)
        Z = fit._frame.internal(X)
        with pm.Model(coords=model_coords(fit.fitted_, 0)) as model:
            params = fit._family.pymc_params(fit._prior)
            ll = mpymc.rows_loglik(params, Z, y, np.ones(len(y)), fit.n_components_)
        point = model.initial_point()
        for name, value in point.items():
            point[name] = value + 0.1 * np.random.default_rng(1).normal(size=value.shape)
        outs = model.replace_rvs_by_values([ll, params["weights"], params["mu"],
                                            params["cov"]])
        got, w, mu, cov = model.compile_fn(outs, inputs=model.value_vars,
                                  on_unused_input="ignore")(point)
        expected = _mixture_logpdf(Z, np.ones(2), w, mu, cov)[np.arange(len(y)), y].sum()
        np.testing.assert_allclose(got, expected, rtol=1e-9)
        # NUTS's start: the unconstrained values of the EM mode map back onto it
        init = mpymc.start(model, fit._params, fit._prior, None)
        w, mu, cov = model.compile_fn(outs[1:], inputs=model.value_vars,
                                      on_unused_input="ignore")(init)
        for got, key in ((w, "weights"), (mu, "mu"), (cov, "cov")):
            np.testing.assert_allclose(got, fit._params[key], rtol=1e-6, atol=1e-9)


def test_mcmc_capabilities(mcmc_fit, long_gibbs_fit, blobs, tmp_path):
    """Intervals, PSIS-LOO with Pareto k through bg.compare, sample, score_samples,
    save/load."""
    import arviz as az

    X, y = blobs
    interval = mcmc_fit.predict_proba_interval(X[:3])
    assert interval.dims == ("obs", "class", "hdi")
    p = mcmc_fit.predict_proba(X[:3])
    assert np.all(interval.sel(hdi="lower").values <= p + 0.05)
    assert mcmc_fit.predict_proba_draws(X[:3]).shape == (2, 250, 3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Pareto k notes of short chains
        loo = az.loo(mcmc_fit.idata_, pointwise=True)
        table = bg.compare({"mcmc": mcmc_fit, "gibbs": long_gibbs_fit})
    assert np.isfinite(loo.elpd_loo) and loo.pareto_k.shape == (X.shape[0],)
    # two samplers of one posterior: the same elpd within its standard error
    assert abs(table.loc["mcmc", "elpd_loo"] - table.loc["gibbs", "elpd_loo"]) < \
        table["se"].max() / 4
    # score_samples: log-mean-exp over draws of the mixture densities (scipy)
    post = mcmc_fit.idata_.posterior.stack(s=("chain", "draw"))
    pick = np.arange(0, 500, 25)
    per_draw = np.stack([logsumexp(_mixture_logpdf(
        X[:5], post["pi"].values[:, s], post["weights"].values[..., s],
        post["mu"].values[..., s], post["cov"].values[..., s]), axis=1) for s in pick])
    thin = bg.MixtureDA(n_components=[2, 1], method="mcmc")
    thin.__dict__.update(mcmc_fit.__dict__)
    thin._params = {k: v[pick] for k, v in mcmc_fit._params.items()}
    thin._log_pi_draws = mcmc_fit._log_pi_draws[pick]
    np.testing.assert_allclose(thin.score_samples(X[:5]),
                               logsumexp(per_draw, axis=0) - np.log(pick.size), rtol=1e-9)
    Xs, _ = mcmc_fit.sample(400, classes=0, random_state=1)
    assert 0.2 < np.mean(Xs[:, 0] < 2.5) < 0.4
    path = tmp_path / "mcmc.nc"
    mcmc_fit.save(path)
    loaded = bg.load(path)
    np.testing.assert_array_equal(loaded.predict_proba(X), mcmc_fit.predict_proba(X))
    assert loaded.method_ == "mcmc"


def test_partial_fit_absent_and_posterior_only_methods(map_fit, blobs):
    assert not hasattr(map_fit, "partial_fit")
    with pytest.raises(ValueError):
        map_fit.predict_proba_draws(blobs[0][:2])


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("kw, match", [
    ({"n_components": 0}, "n_components"),
    ({"n_components": [2, 2, 2]}, "n_components"),
    ({"n_components": [2.5, 1]}, "n_components"),
    ({"method": "conjugate"}, "method"),
    ({"method": "mle"}, "method"),
    ({"method": "mcmc", "sampler": "stan"}, "sampler"),
    ({"weight_alpha": 0.0}, "weight_alpha"),
    ({"cov_structure": "spherical"}, "cov_structure"),
    ({"n_init": 0}, "n_init"),
    ({"cov_dof": 1.0}, "cov_dof"),
])
def test_bad_parameters(blobs, kw, match):
    X, y = blobs
    with pytest.raises(ValueError, match=match):
        bg.MixtureDA(**kw).fit(X, y)


def test_bad_data(blobs, map_fit):
    X, y = blobs
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"MixtureDA.*missing entries"):  # map, gibbs take gaps
        bg.MixtureDA(method="mcmc").fit(Xn, y)
    Xi = X.copy()
    Xi[0, 0] = np.inf
    with pytest.raises(ValueError, match="inf"):
        bg.MixtureDA().fit(Xi, y)
    with pytest.raises(ValueError, match="class"):
        bg.MixtureDA().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="distinct rows"):
        bg.MixtureDA(n_components=4).fit(X[[0, 1, 2, 300, 301, 302]], y[[0, 1, 2, 300, 301, 302]])
    with pytest.raises(ValueError, match="features"):
        map_fit.predict(X[:, :1])
    yu = y.astype(float)
    yu[0] = np.nan
    with pytest.raises(ValueError, match="unlabeled"):
        bg.MixtureDA().fit(X, yu)


# ---------------------------------------------------------- scikit-learn checks
@parametrize_with_checks(_mixture_instances())
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)  # 20 draws on purpose
        check(estimator)


# NUTS compiles a program per data shape, the mixture's likelihood is per row (its shape
# grows with N) and the checks use many shapes: minutes of compilation, so .ci/run runs
# these once as a step of their own (ci_step), not inside the README's test command
@pytest.mark.slow
@pytest.mark.ci_step
@parametrize_with_checks([bg.MixtureDA(method="mcmc", max_components=2, n_init=1, draws=30,
                                       tune=30, chains=1, progressbar=False,
                                       random_state=0)],
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible_mcmc(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)  # 30 draws on purpose
        check(estimator)
