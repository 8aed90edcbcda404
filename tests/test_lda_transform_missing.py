"""LDA.transform of rows with missing entries: the projection of the row's posterior
mean E[x | x_o] = sum_k p(k | x_o) (mu_km + S_mo S_oo^-1 (x_o - mu_ko)), computed here
by hand from the fitted attributes in user units."""

import numpy as np
import pytest
from sklearn.datasets import load_wine

import bayesgen as bg


@pytest.fixture(scope="module")
def fitted():
    X, y = load_wine(return_X_y=True)
    return bg.LDA(method="map").fit(X, y), X


def _by_hand(est, x):
    o = ~np.isnan(x)
    m = ~o
    S = est.covariance_
    proba = est.predict_proba(x[None])[0]
    filled = np.zeros(m.sum())
    for k, mu in enumerate(est.means_):
        cond = mu[m] + S[np.ix_(m, o)] @ np.linalg.solve(S[np.ix_(o, o)], x[o] - mu[o])
        filled += proba[k] * cond
    full = x.copy()
    full[m] = filled
    return (full - est.xbar_) @ est.scalings_[:, : est.transform(x[None]).shape[1]]


def test_rows_with_gaps_project_their_posterior_mean(fitted):
    est, X = fitted
    rows = X[[0, 70, 150]].copy()
    rows[0, [1, 5]] = np.nan
    rows[1, 0] = np.nan
    rows[2, 3:10] = np.nan
    got = est.transform(rows)
    for i in range(3):
        np.testing.assert_allclose(got[i], _by_hand(est, rows[i]), rtol=1e-9, atol=1e-9)


def test_complete_rows_unchanged_and_all_missing_row(fitted):
    est, X = fitted
    rows = X[:4].copy()
    rows[3] = np.nan
    got = est.transform(rows)
    np.testing.assert_array_equal(got[:3], est.transform(X[:3]))
    centre = est.class_prior_ @ est.means_  # nothing observed: sum_k p(k) mu_k
    np.testing.assert_allclose(got[3], (centre - est.xbar_) @ est.scalings_[:, : got.shape[1]],
                               rtol=1e-9, atol=1e-9)
    assert np.all(np.isfinite(got))
