"""QDA's ``cov_target="pooled"``: class covariances partially pooled towards LDA's.

References: LDA's own conjugate posterior mean of the shared covariance (the target),
the limits of the pooling strength (nu0 -> infinity gives LDA's covariance in every
class), the evidence maximised over a brute-force grid of fixed strengths, refits for
exact LOO, and one fit against streaming and merged fits.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone

import bayesgen as bg
from bayesgen.inference import exact_loo


def _data(d: int = 3, n_per_class: int = 12, seed: int = 0, K: int = 3):
    """Classes with different covariances (scaled, rotated copies) and offset units."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n_per_class)
    A = np.eye(d) + 0.6 * np.tri(d, k=-1)
    X = rng.normal(size=(y.size, d)) @ A.T * (1.0 + 0.5 * y[:, None])
    return 1e3 + 40.0 * (X + 1.5 * y[:, None]), y


def _target(est) -> np.ndarray:
    """S0 of the fitted QDA's prior in the units of X: Psi0 / ((nu0 - d - 1) s)."""
    prior, d = est._prior, est.n_features_in_
    S0 = prior["Psi0"] / ((prior["nu0"] - d - 1.0) * est.prior_search_["cov_scale"])
    scale = est._frame.scale if est._frame is not None else np.ones(d)
    return S0 * np.outer(scale, scale)


def test_target_is_ldas_posterior_mean_covariance():
    """S_pool = (c D + sum_k B_k) / (c + N) is exactly the posterior mean of LDA's shared
    covariance under LDA's evidence-chosen prior (same D, kappa0, cov_dof="auto")."""
    X, y = _data()
    qda = bg.QDA(cov_target="pooled").fit(X, y)
    lda = bg.LDA(cov_dof="auto", method="conjugate", draws=10, chains=1,
                 random_state=0).fit(X, y)
    prior, post = lda._prior, lda._posterior
    d = X.shape[1]
    mean_cov = post["Psi"] / (post["nu"] - d - 1.0)
    scale = lda._frame.scale if lda._frame is not None else np.ones(d)
    np.testing.assert_allclose(_target(qda), mean_cov * np.outer(scale, scale), rtol=1e-9)
    assert prior["nu0"] > d + 1


def test_strong_pooling_limit_is_the_pooled_covariance():
    """nu0 -> infinity: every class covariance of the MAP equals the target."""
    X, y = _data(seed=1)
    est = bg.QDA(cov_target="pooled", cov_dof=1e9).fit(X, y)
    target = _target(est)
    for cov in est.covariance_:
        np.testing.assert_allclose(cov, target, rtol=1e-6)
    weak = bg.QDA(cov_target="pooled", cov_dof=X.shape[1] + 1.001).fit(X, y)
    separate = bg.QDA(cov_dof=X.shape[1] + 1.001).fit(X, y)
    for a, b in zip(weak.covariance_, separate.covariance_, strict=True):  # nu0 -> d + 1
        np.testing.assert_allclose(a, b, rtol=0.05)


def test_auto_strength_is_the_evidence_argmax_over_a_grid():
    X, y = _data(seed=2)
    auto = bg.QDA(cov_target="pooled").fit(X, y)
    d = X.shape[1]
    grid = d + 1.0 + np.logspace(-1.5, 4, 60)
    values = [bg.QDA(cov_target="pooled", cov_dof=nu0).fit(X, y).prior_search_["log_evidence"]
              for nu0 in grid]
    assert auto.prior_search_["log_evidence"] >= max(values) - 1e-8
    best = grid[int(np.argmax(values))]
    assert abs(np.log(auto.prior_search_["cov_dof"] - d - 1) - np.log(best - d - 1)) < 0.2


def test_pooling_is_chosen_strong_when_classes_share_a_covariance():
    """Same covariance in every class: the evidence pools strongly; very different
    covariances: weakly."""
    rng = np.random.default_rng(3)
    y = np.repeat(np.arange(3), 40)
    shared = rng.normal(size=(y.size, 4)) + 3.0 * y[:, None]
    different = rng.normal(size=(y.size, 4)) * np.array([0.2, 1.0, 5.0])[y][:, None] \
        + 3.0 * y[:, None]
    strong = bg.QDA(cov_target="pooled").fit(shared, y).prior_search_["cov_dof"]
    weak = bg.QDA(cov_target="pooled").fit(different, y).prior_search_["cov_dof"]
    assert strong > 10 * weak


def test_scale_and_shift_equivariant():
    X, y = _data(seed=4)
    a = bg.QDA(cov_target="pooled", method="conjugate", draws=10, chains=1).fit(X, y)
    b = bg.QDA(cov_target="pooled", method="conjugate", draws=10, chains=1).fit(
        X * 1e-6 - 0.05, y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X * 1e-6 - 0.05),
                               rtol=1e-8, atol=1e-12)


def test_exact_loo_stays_exact():
    """LOO is the refit without the row: the pooled target, the prior mean and the
    evidence's strength are recomputed without it (refits of the same constructor)."""
    X, y = _data(d=2, n_per_class=5, seed=5, K=2)
    common = {"method": "conjugate", "draws": 10, "chains": 1, "random_state": 0}
    fitted = bg.QDA(cov_target="pooled", **common).fit(X, y)
    fixed = bg.QDA(cov_target="pooled", **common)
    brute = np.empty(y.size)
    for i in range(y.size):
        keep = np.arange(y.size) != i
        brute[i] = clone(fixed).fit(X[keep], y[keep]).predict_joint_log_proba(
            X[i:i + 1])[0, y[i]]
    np.testing.assert_allclose(exact_loo.pointwise(fitted), brute, rtol=0, atol=1e-8)


def test_streaming_merge_and_save_load_equal_one_fit(tmp_path):
    X, y = _data(seed=6)
    whole = bg.QDA(cov_target="pooled").fit(X, y)
    stream = bg.QDA(cov_target="pooled")
    for part in np.array_split(np.random.default_rng(1).permutation(y.size), 3):
        stream.partial_fit(X[part], y[part], classes=[0, 1, 2])
    halves = np.array_split(np.random.default_rng(2).permutation(y.size), 2)
    merged = bg.merge(*(bg.QDA(cov_target="pooled").fit(X[h], y[h]) for h in halves))
    whole.save(tmp_path / "m.bg")
    for other in (stream, merged, bg.load(tmp_path / "m.bg")):
        np.testing.assert_allclose(other.predict_proba(X), whole.predict_proba(X), rtol=1e-7)


@pytest.mark.parametrize("method", ["map", "conjugate"])
def test_missing_entries(method):
    X, y = _data(seed=7)
    X[np.random.default_rng(0).random(X.shape) < 0.15] = np.nan
    with warnings.catch_warnings():  # few data-augmentation draws: R-hat
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        est = bg.QDA(cov_target="pooled", method=method, draws=20, chains=1,
                     random_state=0).fit(X, y)
    assert np.all(np.isfinite(est.predict_proba(X)))
    assert np.all(np.linalg.eigvalsh(_target(est)) > 0)


@pytest.mark.slow
def test_mcmc_uses_the_pooled_prior():
    X, y = _data(d=2, n_per_class=8, seed=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = bg.QDA(cov_target="pooled", method="mcmc", draws=50, tune=50, chains=1,
                     random_state=0, progressbar=False).fit(X, y)
        ref = bg.QDA(cov_target="pooled", method="conjugate", draws=200, chains=1,
                     random_state=0).fit(X, y)
    np.testing.assert_allclose(est._prior["Psi0"], ref._prior["Psi0"], rtol=1e-12)
    assert np.all(np.isfinite(est.predict_proba(X)))


def test_bad_values_are_value_errors():
    X, y = _data()
    with pytest.raises(ValueError, match="LDA has a single pooled covariance"):
        bg.LDA(cov_target="pooled").fit(X, y)
    with pytest.raises(ValueError, match="cov_target"):
        bg.QDA(cov_target="shared").fit(X, y)
