"""Simulation-based calibration of the conjugate posteriors (validation/sbc.py).

Under an exact posterior the rank of the true value among L posterior draws is uniform
on 0..L (Talts et al. 2018); the uniformity tests are scipy's chi-square and KS tests.
The deliberately wrong posteriors (variance x 2 and x 1/2) show the check can fail.
The ``*_scaled`` specs fix the prior hyper-parameters at non-default values
(``cov_scale``, ``mean_strength``, ``cov_dof``; ``var_scale``, ``var_dof``), as do the
diagonal and spherical covariance structures of LDA and QDA (``mvn_*_diag``,
``mvn_*_spherical``), and a truth drawn from another prior than the estimator's must
fail.
"""

from __future__ import annotations

import numpy as np
import pytest

from validation import sbc

N_DRAWS = 99
LEVEL = 1e-3


def _p_values(result):
    return {r["summary"]: (r["chi2_p"], r["ks_p"]) for r in sbc.summarize(result)}


@pytest.fixture(scope="module")
def gaussian_wide():
    """GaussianNB SBC with every posterior summary's variance doubled (wrong)."""
    spec = sbc.SPECS["gaussian"]()
    return sbc.run_sbc(spec, n_reps=600, n_obs=30, n_draws=N_DRAWS, seed=3, inflate=2.0)


def test_uniformity_test_accepts_uniform_and_rejects_humped_ranks():
    rng = np.random.default_rng(0)
    uniform = rng.integers(0, N_DRAWS + 1, size=1000)
    assert min(sbc.uniformity(uniform, N_DRAWS)) > LEVEL
    humped = np.floor(rng.beta(2.0, 2.0, size=1000) * (N_DRAWS + 1)).astype(int)
    assert max(sbc.uniformity(humped, N_DRAWS)) < LEVEL
    with pytest.raises(ValueError, match="ranks must lie"):
        sbc.uniformity(np.array([0, N_DRAWS + 1]), N_DRAWS)


@pytest.mark.parametrize("family", ["gaussian", "bernoulli", "exponential"])
def test_conjugate_posterior_is_calibrated(family):
    result = sbc.run_sbc(sbc.SPECS[family](), n_reps=200, n_obs=30, n_draws=N_DRAWS, seed=11)
    for name, r in result.ranks.items():
        assert r.shape == (200,) and r.min() >= 0 and r.max() <= N_DRAWS, name
    for name, (p_chi2, p_ks) in _p_values(result).items():
        assert p_chi2 > LEVEL and p_ks > LEVEL, (family, name, p_chi2, p_ks)


DIAGONAL = ["mvn_lda_diag", "mvn_lda_spherical", "mvn_qda_diag", "mvn_qda_spherical"]
SCALED = ["gaussian_scaled", "mvn_lda_scaled", "mvn_qda_scaled", *DIAGONAL]


@pytest.fixture(scope="module", params=SCALED)
def scaled_sbc(request):
    """SBC of a posterior under non-default prior hyper-parameters (200 replications)."""
    return sbc.run_sbc(sbc.SPECS[request.param](), n_reps=200, n_obs=30, n_draws=N_DRAWS,
                       seed=11)


def test_scaled_prior_resolves_as_documented():
    """The fitted prior is the documented function of the non-default settings:
    Psi0 = (nu0 - d - 1) cov_scale S0, b0 = (nu0 - 2) var_scale s0 / 2."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(sbc.N_CLASSES), 10)
    X = rng.normal(size=(y.size, sbc.N_FEATURES))
    d = sbc.N_FEATURES
    S0 = np.array([[1.0, 0.3, 0.0], [0.3, 2.0, -0.4], [0.0, -0.4, 0.5]])
    for family in ("mvn_lda_scaled", "mvn_qda_scaled"):
        est = sbc.SPECS[family]().make_estimator(9, 0).fit(X, y)
        assert (est.mean_strength, est.cov_dof, est.cov_scale) == (2.0, d + 8, 5.0)
        assert est._prior["kappa0"] == 2.0 and est._prior["nu0"] == d + 8
        np.testing.assert_allclose(est._prior["Psi0"], 7 * 5.0 * S0)
    est = sbc.SPECS["gaussian_scaled"]().make_estimator(9, 0).fit(X, y)
    assert (est.mean_strength, est.var_dof, est.var_scale) == (2.0, 6.0, 0.2)
    np.testing.assert_allclose(est._prior["a0"], 3.0)
    np.testing.assert_allclose(est._prior["b0"], 4 * 0.2 * np.array([1.0, 0.5, 2.0]) / 2)


@pytest.mark.parametrize("family", DIAGONAL)
def test_diagonal_prior_resolves_as_documented(family):
    """The diagonal and spherical specs' estimators resolve the fixed non-default
    settings to (m0, kappa0 = 2, nu0 = 6, s = 0.5, s0), and the truth drawn by the spec
    has the documented prior moments: diagonal covariances with E[sigma2_j] = s s0_j,
    proportional to s0 for the spherical structure."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(sbc.N_CLASSES), 10)
    X = rng.normal(size=(y.size, sbc.N_FEATURES))
    spec = sbc.SPECS[family]()
    est = spec.make_estimator(9, 0).fit(X, y)
    assert est.cov_structure == family.rsplit("_", 1)[1]
    assert (est.mean_strength, est.cov_dof, est.cov_scale) == (2.0, 6.0, 0.5)
    assert set(est._prior) == {"m0", "kappa0", "nu0", "scale", "s0"}
    s0 = np.array([1.0, 2.0, 0.5])
    np.testing.assert_allclose(est._prior["s0"], s0)
    np.testing.assert_allclose(est._prior["m0"], [0.0, 1.0, -1.0])
    assert (est._prior["kappa0"], est._prior["nu0"], est._prior["scale"]) == (2.0, 6.0, 0.5)
    truths = [spec.draw_truth(rng) for _ in range(4000)]
    cov = np.stack([t["cov"] for t in truths])
    assert cov.shape[1:] == ((3, 3) if "lda" in family else (3, 3, 3))
    var = np.diagonal(cov, axis1=-2, axis2=-1)
    np.testing.assert_array_equal(cov, var[..., :, None] * np.eye(3))
    # InvGamma(3, 2 * 0.5 s0_j / 2): mean 0.5 s0_j, sd of the mean over 4000 draws ~1%
    np.testing.assert_allclose(var.reshape(-1, 3).mean(axis=0) / (0.5 * s0), 1.0, atol=0.06)
    if family.endswith("spherical"):
        np.testing.assert_allclose(var / s0, np.repeat((var / s0)[..., :1], 3, axis=-1))
    else:
        assert np.std(var[..., 0] / var[..., 1]) > 0.1
    draws = sbc.posterior_draws(est)
    post_var = np.diagonal(draws["cov"], axis1=-2, axis2=-1)
    np.testing.assert_array_equal(draws["cov"], post_var[..., :, None] * np.eye(3))


def test_qda_diag_ranks_are_gaussiannb_ranks():
    """QDA(cov_structure="diag") and GaussianNB are the same model. Both specs fix
    kappa0 = 2, nu0 = 6 and draw from the same random stream; their priors differ only by
    a per-feature affine map (m0, s s0), under which every rank is invariant. So the two
    independent implementations give identical ranks (up to rare ties)."""
    ranks = {name: sbc.run_sbc(sbc.SPECS[name](), n_reps=100, n_obs=30, n_draws=N_DRAWS,
                               seed=7).ranks for name in ("mvn_qda_diag", "gaussian_scaled")}
    pairs = {"pi_0": "pi_0", "mu_00": "mu_00", "mu_12": "mu_12",
             "log_cov_0_00": "log_var_00", "log_cov_2_11": "log_var_21"}
    for diag, gauss in pairs.items():
        same = ranks["mvn_qda_diag"][diag] == ranks["gaussian_scaled"][gauss]
        assert same.mean() >= 0.99, (diag, gauss, same.mean())


def test_scaled_prior_posterior_is_calibrated(scaled_sbc):
    assert min(r.min() for r in scaled_sbc.ranks.values()) >= 0
    for name, (p_chi2, p_ks) in _p_values(scaled_sbc).items():
        assert p_chi2 > LEVEL and p_ks > LEVEL, (scaled_sbc.family, name, p_chi2, p_ks)


@pytest.mark.parametrize("family", ["mvn_lda_scaled", "gaussian_scaled", *DIAGONAL])
def test_misspecified_prior_fails(family):
    """The estimator keeps its non-default prior, the truth comes from another one
    (``sbc.MISSPECIFIED``: the default prior, E[Sigma] = S0 instead of 5 S0 and
    E[sigma2] = s0 instead of 0.2 s0; for the diagonal structures, variances with a
    tenth of the prior mean): the ranks of the (co)variances pile up at one end."""
    wrong = sbc.misspecified(family)
    assert wrong.name == f"{family}_misspecified"
    for key, value in sbc.SPECS[family]().prior.items():  # the estimator's prior is kept
        np.testing.assert_array_equal(wrong.prior[key], value)
    p = _p_values(sbc.run_sbc(wrong, n_reps=100, n_obs=30, n_draws=N_DRAWS, seed=11))
    variance = [name for name in p if "var" in name or "cov" in name]
    assert len(variance) >= 2
    for name in variance:
        assert p[name][0] < LEVEL, (family, name, p[name])


def test_inflated_posterior_variance_is_detected(gaussian_wide):
    for name, (p_chi2, _) in _p_values(gaussian_wide).items():
        assert p_chi2 < LEVEL, (name, p_chi2)
    # too wide a posterior: true values rarely fall in the outer 10% of the draws
    for name, r in gaussian_wide.ranks.items():
        outer = np.mean((r < 10) | (r >= 90))
        assert outer < 0.12, (name, outer)


def test_deflated_posterior_variance_is_detected():
    spec = sbc.SPECS["bernoulli"]()
    result = sbc.run_sbc(spec, n_reps=300, n_obs=30, n_draws=N_DRAWS, seed=5, inflate=0.5)
    for name, (p_chi2, _) in _p_values(result).items():
        assert p_chi2 < LEVEL, (name, p_chi2)
    for name, r in result.ranks.items():  # too narrow: U-shaped ranks
        assert np.mean((r < 10) | (r >= 90)) > 0.3, name


def test_data_dependent_prior_is_refused():
    import bayesgen as bg

    spec = sbc.SPECS["gaussian"]()
    default_prior = sbc.FamilySpec(
        name="gaussian-default",
        make_estimator=lambda draws, seed: bg.GaussianNB(
            method="conjugate", class_alpha=sbc.CLASS_ALPHA, draws=draws, chains=1,
            random_state=seed,
        ),
        prior=spec.prior, draw_truth=spec.draw_truth, simulate=spec.simulate,
        summaries=spec.summaries,
    )
    with pytest.raises(RuntimeError, match="data-independent prior"):
        sbc.run_sbc(default_prior, n_reps=2, n_obs=30, n_draws=9)


@pytest.mark.parametrize("family", ["mvn_lda_spherical", "mvn_qda_scaled", "gaussian_scaled"])
def test_prior_check_is_in_the_units_of_x(family):
    """A feature whose spread is far below 1 moves the estimator's internal frame (its
    ``_prior`` is then in internal units); the check compares the prior in the units of
    X, which is still the spec's, and the posterior draws are in the units of X."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(sbc.N_CLASSES), 10)
    X = rng.normal(size=(y.size, sbc.N_FEATURES))
    X[:, 2] = -1.03 + 0.01 * rng.normal(size=y.size)
    spec = sbc.SPECS[family]()
    est = spec.make_estimator(20, 0).fit(X, y)
    assert not np.allclose(est._prior["m0"], spec.prior["m0"])  # internal frame moved
    sbc._check_prior(spec, est)
    mu = sbc.posterior_draws(est)["mu"][..., 2]  # internal units would be near 0
    assert abs(mu.mean() + 1.03) < 0.3, mu.mean()


@pytest.mark.parametrize("family", sorted(sbc.SPECS))
def test_every_family_spec_runs_with_its_explicit_prior(family):
    result = sbc.run_sbc(sbc.SPECS[family](), n_reps=3, n_obs=40, n_draws=9, seed=0)
    assert set(result.ranks) == set(sbc.SPECS[family]().summaries)
    for r in result.ranks.values():
        assert r.min() >= 0 and r.max() <= 9


def test_command_line_runs_a_misspecified_control(tmp_path, capsys):
    rows = sbc.main(["--family", "mvn_lda_spherical", "--misspecified", "--reps", "20",
                     "--draws", "19", "--bins", "10", "--out", str(tmp_path)])
    assert {r["family"] for r in rows} == {"mvn_lda_spherical_misspecified"}
    assert (tmp_path / "sbc_mvn_lda_spherical_misspecified.png").stat().st_size > 0
    assert "mvn_lda_spherical_misspecified (conjugate)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        sbc.main(["--all", "--misspecified", "--reps", "2"])
    with pytest.raises(ValueError, match="no mis-specified control for 'poisson'"):
        sbc.misspecified("poisson")


def test_command_line_writes_table_and_histogram(tmp_path, capsys):
    md = tmp_path / "res.md"
    rows = sbc.main(["--family", "poisson", "--reps", "20", "--draws", "19", "--bins", "10",
                     "--out", str(tmp_path), "--markdown", str(md)])
    assert {r["summary"] for r in rows} == {"pi_0", "log_rate_00", "log_rate_12"}
    assert (tmp_path / "sbc_poisson.png").stat().st_size > 0
    assert md.read_text().startswith("| family | method | summary | reps |")
    assert "log_rate_12" in capsys.readouterr().out


@pytest.mark.slow
def test_mcmc_posterior_under_a_scaled_prior_is_calibrated():
    """NUTS on the statistics model under ``var_dof=6, var_scale=0.2,
    mean_strength=2``: the sampled prior is the conjugate one (40 reps, a smoke test)."""
    result = sbc.run_sbc(sbc.SPECS["gaussian_scaled"](), n_reps=40, n_obs=30,
                         n_draws=N_DRAWS, seed=4, method="mcmc", thin=3, tune=300)
    assert result.method == "mcmc" and 1.0 <= result.max_rhat < 1.1
    for name, (p_chi2, p_ks) in _p_values(result).items():
        assert p_chi2 > LEVEL and p_ks > LEVEL, (name, p_chi2, p_ks)


@pytest.mark.slow
def test_mcmc_posterior_is_calibrated_on_a_small_sbc():
    """NUTS on the statistics model, thinned: ranks stay uniform (40 reps is a smoke
    test of the MCMC path; the full run is in validation/results_mcmc.md)."""
    result = sbc.run_sbc(sbc.SPECS["poisson"](), n_reps=40, n_obs=30, n_draws=N_DRAWS,
                         seed=2, method="mcmc", thin=3, tune=300)
    assert result.method == "mcmc" and 1.0 <= result.max_rhat < 1.1
    for name, (p_chi2, p_ks) in _p_values(result).items():
        assert p_chi2 > LEVEL and p_ks > LEVEL, (name, p_chi2, p_ks)


def test_configure_method_sets_nuts_up_for_thinned_draws():
    est = sbc.SPECS["gaussian"]().make_estimator(99, 0)
    assert sbc.configure_method(est, "conjugate", 99) is est and est.method == "conjugate"
    est = sbc.configure_method(est, "mcmc", 99, thin=5, tune=200, chains=2)
    assert (est.method, est.chains, est.draws, est.tune) == ("mcmc", 2, 250, 200)
    with pytest.raises(ValueError, match="method must be"):
        sbc.configure_method(est, "vi", 99)
