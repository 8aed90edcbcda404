"""``cov_dof="oas"``: the prior strength from the Oracle Approximating Shrinkage intensity.

References: scikit-learn's ``sklearn.covariance.oas`` (the posterior mean covariance of
LDA equals its shrunk estimate in the target's coordinates), repeated rows for weights,
one fit against streaming and merged fits, and rescaled data.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.covariance import oas

import bayesgen as bg
from bayesgen.families.mvn.niw_evidence import C_BOUNDS


def _data(d: int = 6, n_per_class: int = 9, seed: int = 0, K: int = 3):
    """Collinear features in mixed units with an offset, fewer rows than features per
    class for d > n_per_class."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n_per_class)
    A = np.eye(d) + 0.8 * np.tri(d, k=-1)
    X = rng.normal(size=(y.size, d)) @ A.T + 1.2 * y[:, None]
    return 1.7e9 + X * np.logspace(-3, 3, d), y


def _within(X, y):
    """Rows centred at their class mean, and the pooled within-class variances."""
    centred = X - np.stack([X[y == k].mean(0) for k in range(y.max() + 1)])[y]
    return centred, (centred ** 2).sum(0) / y.size


def test_lda_posterior_mean_is_sklearns_oas_estimate():
    """kappa0 -> 0: E[Sigma | X] = (c S0 + S) / (c + N) is scikit-learn's OAS estimate
    of the pooled within-class covariance (target mu I in standardised coordinates)."""
    X, y = _data()
    est = bg.LDA(cov_dof="oas", mean_strength=1e-12, method="conjugate", draws=10,
                 chains=1, random_state=0).fit(X, y)
    centred, var = _within(X - X[0], y)  # exact shift first: no cancellation
    sd = np.sqrt(var)
    shrunk, delta = oas(centred / sd, assume_centered=True)
    np.testing.assert_allclose(est.prior_search_["oas_shrinkage"], [delta], rtol=1e-6)
    d = X.shape[1]
    post = est._posterior
    mean_cov = post["Psi"] / (post["nu"] - d - 1.0)
    scale = est._frame.scale if est._frame is not None else np.ones(d)
    np.testing.assert_allclose(mean_cov * np.outer(scale, scale), shrunk * np.outer(sd, sd),
                               rtol=1e-7, atol=1e-12 * np.outer(sd, sd).max())


def test_qda_strength_is_the_count_weighted_mean_of_the_classes():
    X, y = _data(seed=1)
    X = X - X[0]  # exact shift: the reference below has no frame against cancellation
    y = y.copy()
    y[:4] = 1  # unequal class sizes
    est = bg.QDA(cov_dof="oas").fit(X, y)
    _, var = _within(X, y)
    sd = np.sqrt(var)
    strengths, counts = [], []
    for k in range(3):
        rows = X[y == k]
        _, delta = oas((rows - rows.mean(0)) / sd, assume_centered=True)
        strengths.append(rows.shape[0] * delta / (1 - delta))
        counts.append(rows.shape[0])
    d = X.shape[1]
    np.testing.assert_allclose(est.prior_search_["cov_dof"] - d - 1,
                               np.average(strengths, weights=counts), rtol=1e-6)
    assert len(est.prior_search_["oas_shrinkage"]) == 3


def test_full_shrinkage_gives_the_largest_strength():
    """An isotropic scatter (W = mu I): OAS shrinks fully (delta = 1) and the strength is
    the top of the search range; a fit with fewer rows than features stays finite."""
    from bayesgen.families.mvn.shrinkage import oas_dof

    d = 5
    nu0, deltas = oas_dof({"count": np.array([4.0, 6.0]), "scatter": 10.0 * np.eye(d)},
                          np.eye(d), tied=True)
    assert deltas == [1.0]
    assert nu0 == pytest.approx(d + 1 + C_BOUNDS[1])
    X, y = _data(d=40, n_per_class=2, seed=2)
    est = bg.LDA(cov_dof="oas", method="conjugate", draws=10, chains=1).fit(X, y)
    assert 0.0 < est.prior_search_["oas_shrinkage"][0] <= 1.0
    assert np.all(np.isfinite(est.predict_proba(X)))


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_rescaling_and_offsets_do_not_change_predictions(cls):
    X, y = _data(seed=3)
    a = cls(cov_dof="oas", method="conjugate", draws=10, chains=1).fit(X, y)
    Xb = (X - 1.7e9) * 1e-4 + 3.0
    b = cls(cov_dof="oas", method="conjugate", draws=10, chains=1).fit(Xb, y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(Xb), rtol=1e-7,
                               atol=1e-12)


@pytest.mark.parametrize("cls", [bg.LDA, bg.QDA])
def test_streaming_merge_and_weights_equal_one_fit(cls):
    X, y = _data(seed=4)
    whole = cls(cov_dof="oas").fit(X, y)
    stream = cls(cov_dof="oas")
    for part in np.array_split(np.random.default_rng(1).permutation(y.size), 3):
        stream.partial_fit(X[part], y[part], classes=[0, 1, 2])
    halves = np.array_split(np.random.default_rng(2).permutation(y.size), 2)
    merged = bg.merge(*(cls(cov_dof="oas").fit(X[h], y[h]) for h in halves))
    for other in (stream, merged):
        np.testing.assert_allclose(other.prior_search_["cov_dof"],
                                   whole.prior_search_["cov_dof"], rtol=1e-8)
        np.testing.assert_allclose(other.predict_proba(X), whole.predict_proba(X), rtol=1e-7)
    w = np.where(np.arange(y.size) % 3 == 0, 2.0, 1.0)
    weighted = cls(cov_dof="oas").fit(X, y, sample_weight=w)
    repeated = cls(cov_dof="oas").fit(np.repeat(X, w.astype(int), axis=0),
                                      np.repeat(y, w.astype(int)))
    np.testing.assert_allclose(weighted.prior_search_["cov_dof"],
                               repeated.prior_search_["cov_dof"], rtol=1e-8)
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X),
                               rtol=1e-7)


@pytest.mark.parametrize("method", ["mle", "map", "conjugate"])
def test_every_point_and_conjugate_method_with_missing_entries(method):
    X, y = _data(d=4, n_per_class=15, seed=5)
    X[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    with warnings.catch_warnings():  # few data-augmentation draws: R-hat
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        est = bg.QDA(cov_dof="oas", method=method, draws=20, chains=1,
                     random_state=0).fit(X, y)
    assert np.all(np.isfinite(est.predict_proba(X)))
    if method != "mle":  # the MLE has no prior
        assert 0.0 <= min(est.prior_search_["oas_shrinkage"]) <= 1.0


def test_save_load_and_pooled_target(tmp_path):
    X, y = _data(seed=6)
    est = bg.QDA(cov_dof="oas", cov_target="pooled").fit(X, y)
    est.save(tmp_path / "m.bg")
    back = bg.load(tmp_path / "m.bg")
    assert back.prior_search_ == est.prior_search_
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))


@pytest.mark.slow
def test_mcmc_uses_the_oas_strength():
    X, y = _data(d=3, n_per_class=8, seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = bg.LDA(cov_dof="oas", method="mcmc", draws=50, tune=50, chains=1,
                     random_state=0, progressbar=False).fit(X, y)
    ref = bg.LDA(cov_dof="oas").fit(X, y)
    assert est._prior["nu0"] == pytest.approx(ref._prior["nu0"], rel=1e-12)
    assert np.all(np.isfinite(est.predict_proba(X)))


def test_bad_value_is_a_value_error():
    X, y = _data()
    with pytest.raises(ValueError, match="cov_dof"):
        bg.LDA(cov_dof="ledoit").fit(X, y)
