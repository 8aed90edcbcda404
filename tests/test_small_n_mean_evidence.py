"""The class-mean evidence of validation/small_n_mean_evidence.py against independent
references: the plug-in objective against the library's NIW evidence
(bayesgen.families.mvn.niw_evidence.log_marginal_likelihood, m0 the overall mean), the
flat-m0 objective against that evidence integrated over m0 by quadrature, and the
plug-in kappa0 choice against ``LDA(mean_strength="auto")``'s."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import integrate

import bayesgen as bg
from bayesgen.families import gaussian_stats as gstats
from bayesgen.families.mvn.niw_evidence import log_marginal_likelihood
from validation.small_n_mean_evidence import _objective, evidence_kappa

KAPPAS = (0.05, 0.7, 9.0)


def _data(d: int, counts: tuple[int, ...], seed: int):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(counts)), counts)
    X = rng.normal(size=(y.size, d)) * np.linspace(0.5, 2.0, d) + 0.8 * y[:, None]
    return X, y


def _library(X, y, m0, kappa0, nu0, S0) -> float:
    """log p(X | y) of the library's NIW (tied) at prior mean m0."""
    K = int(y.max()) + 1
    stats = gstats.scatter_stats(X, y, np.ones(y.size), K, tied=True)
    d = X.shape[1]
    prior = {"m0": np.atleast_1d(m0).astype(float), "kappa0": kappa0, "nu0": nu0,
             "Psi0": (nu0 - d - 1.0) * S0}
    return log_marginal_likelihood(stats, prior, tied=True)


@pytest.mark.parametrize("counts", [(6, 6), (4, 9, 5)])
def test_plug_in_objective_matches_library_evidence(counts):
    """Differences over kappa0 of the plug-in F equal those of the library's evidence
    with m0 the overall mean (identity Psi0 scale: X already whitened by S0 = I)."""
    X, y = _data(3, counts, 0)
    nu0 = 6.5
    F = _objective(X, y, nu0 - 4.0, nu0, flat=False)
    lib = [_library(X, y, X.mean(axis=0), k, nu0, np.eye(3)) for k in KAPPAS]
    ours = [F(np.log(k)) for k in KAPPAS]
    np.testing.assert_allclose(np.diff(ours), np.diff(lib), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("counts", [(5, 7), (4, 6, 3)])
def test_flat_m0_objective_matches_quadrature_over_m0(counts):
    """Flat prior on m0: log of the library's evidence integrated over m0 (d = 1,
    adaptive quadrature), up to a constant free of kappa0."""
    X, y = _data(1, counts, 1)
    nu0 = 4.0
    F = _objective(X, y, nu0 - 2.0, nu0, flat=True)
    centre = X.mean()
    lib = []
    for k in KAPPAS:
        peak = _library(X, y, centre, k, nu0, np.eye(1))
        value, _ = integrate.quad(
            lambda m, k=k, peak=peak: np.exp(_library(X, y, m, k, nu0, np.eye(1)) - peak),
            -np.inf, np.inf, epsabs=0, epsrel=1e-11, limit=200)
        lib.append(peak + np.log(value))
    ours = [F(np.log(k)) for k in KAPPAS]
    np.testing.assert_allclose(np.diff(ours), np.diff(lib), rtol=1e-7, atol=1e-7)


def test_choices_match_the_library():
    """Where the evidence's kappa0 is interior, the study's plug-in choice is the
    library's ``mean_strength="auto"`` with ``mean_prior`` the overall mean (the plug-in
    evidence), and its flat-m0 choice is LDA's ``mean_strength="auto"`` (cov_dof and
    cov_scale fixed)."""
    X, y = _data(4, (15, 15), 2)
    few = {"method": "conjugate", "draws": 20, "chains": 1, "progressbar": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nu0 = float(bg.LDA(**few).fit(X, y).prior_search_["cov_dof"])
        plug = bg.LDA(mean_strength="auto", cov_dof=nu0, cov_scale=1.0,
                      mean_prior=X.mean(axis=0), **few).fit(X, y)
        flat = bg.LDA(mean_strength="auto", cov_dof=nu0, cov_scale=1.0, **few).fit(X, y)
    library = plug.prior_search_.get("mean_strength_unbounded",
                                     plug.prior_search_["mean_strength"])
    assert 1e-3 < library < 1e3
    np.testing.assert_allclose(evidence_kappa(X, y, nu0, flat=False), library, rtol=1e-4)
    assert flat.prior_search_["mean_evidence"] == "flat-m0"
    np.testing.assert_allclose(evidence_kappa(X, y, nu0, flat=True),
                               flat.prior_search_["mean_strength"], rtol=1e-4)
