"""``cov_dof="sample"`` / ``cov_scale="sample"``: the NIW hyper-parameters sampled by NUTS.

Reference: with a log-uniform hyper-prior on c = nu0 - d - 1, the marginal posterior of
log c is proportional to the closed-form evidence p(X | y, c) over the prior's range,
computed here on a fine grid (numerical integration), independently of the sampler.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesgen as bg
from bayesgen.families.mvn.niw_evidence import C_BOUNDS, log_marginal_likelihood

pytestmark = pytest.mark.slow


def _data(seed: int = 0, n_per_class: int = 30):
    """Two strongly correlated features (the evidence then rules out large c, the
    diagonal target) in offset units."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n_per_class)
    cov = np.array([[1.0, 0.9], [0.9, 1.0]])
    X = rng.normal(size=(y.size, 2)) @ np.linalg.cholesky(cov).T + 1.5 * y[:, None]
    return 300.0 + 20.0 * X, y


@pytest.fixture(scope="module")
def sampled():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        est = bg.LDA(method="mcmc", cov_dof="sample", draws=1000, tune=1000, chains=2,
                     random_state=0, progressbar=False).fit(X, y)
    return est, X, y


def test_strength_posterior_equals_the_evidence_over_the_hyper_prior(sampled):
    est, _, _ = sampled
    prior, stats = est._prior, est._stats
    S0, d = prior["hyper"]["S0"], 2
    log_c = np.linspace(*np.log(C_BOUNDS), 4001)
    log_ev = np.array([log_marginal_likelihood(
        stats, {**prior, "nu0": d + 1.0 + np.exp(v), "Psi0": np.exp(v) * S0}, tied=True)
        for v in log_c])
    weights = np.exp(log_ev - log_ev.max())
    weights /= weights.sum()
    exact_mean = float(np.sum(weights * log_c))
    exact_sd = float(np.sqrt(np.sum(weights * (log_c - exact_mean) ** 2)))
    draws = np.log(est.idata_.posterior["cov_dof"].values.ravel() - d - 1.0)
    import arviz as az

    ess = float(az.ess(np.log(est.idata_.posterior["cov_dof"] - d - 1.0)).to_array().item())
    assert abs(draws.mean() - exact_mean) < 4.0 * exact_sd / np.sqrt(ess)
    assert draws.std() == pytest.approx(exact_sd, rel=0.15)


def test_idata_reports_the_hyper_parameters_and_survives_save_load(sampled, tmp_path):
    est, X, _ = sampled
    post = est.idata_.posterior
    assert {"cov_dof", "cov_scale"} - set(post.data_vars) == {"cov_scale"}  # scale fixed
    assert post["cov_dof"].dims == ("chain", "draw")
    assert np.all(post["cov_dof"].values > 3.0)
    est.save(tmp_path / "m.bg")
    back = bg.load(tmp_path / "m.bg")
    np.testing.assert_array_equal(back.idata_.posterior["cov_dof"], post["cov_dof"])
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))


def test_evidence_is_refused(sampled):
    est, _, _ = sampled
    with pytest.raises(ValueError, match="hyper-prior"):
        bg.compare({"sampled": est, "fixed": bg.LDA().fit(*_data())}, ic="evidence")


def test_qda_with_both_sampled_and_prior_predictive():
    X, y = _data(seed=1, n_per_class=12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = bg.QDA(method="mcmc", cov_dof="sample", cov_scale="sample", draws=100,
                     tune=100, chains=1, random_state=0, progressbar=False).fit(X, y)
    post = est.idata_.posterior
    assert {"cov_dof", "cov_scale"} <= set(post.data_vars)
    assert np.all(np.isfinite(est.predict_proba(X)))
    prior = est.sample_prior_predictive(draws=50, random_state=0).prior
    assert np.all(prior["cov_dof"].values > 3.0)  # drawn from the hyper-prior
    assert np.ptp(np.log(prior["cov_scale"].values)) > 1.0


@pytest.mark.parametrize("kwargs", [{"method": "map"}, {"method": "conjugate"},
                                    {"method": "mcmc", "cov_prior_form": "lkj"}])
def test_needs_mcmc_with_the_niw_prior(kwargs):
    X, y = _data()
    with pytest.raises(ValueError, match="needs method='mcmc' and cov_prior_form='niw'"):
        bg.LDA(cov_dof="sample", **kwargs).fit(X, y)
