"""Leave-one-out with a category seen in one training row only.

Without that row the refit does not know the category, so it cannot score the row: the
leave-one-out keeps the fit's categories, which is the refit with them declared
(``min_categories``). Checked against brute-force refits for MixedNB, whose Gaussian
part's data-dependent prior sends it through the per-row refit
(:mod:`bayesgen.inference.loo_refit`), and for CategoricalNB (closed-form downdates),
with and without weights.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

import bayesgen as bg
from bayesgen.inference import exact_loo

N, K, RARE, C = 20, 2, 3, 4  # row RARE holds code 3, the others 0..2


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(K), N // K)
    codes = rng.permutation(np.arange(N) % 3).astype(float)
    codes[RARE] = 3.0
    X = np.column_stack([rng.normal(size=N) + y, rng.normal(size=N), codes])
    return X, y


def _mixed(declared: bool):
    options = {"min_categories": C} if declared else {}
    return bg.MixedNB(families=[("gaussian", [0, 1]), ("categorical", [2], options)])


CASES = {
    "MixedNB": (_mixed, slice(None)),
    "CategoricalNB": (lambda declared: bg.CategoricalNB(
        min_categories=C if declared else None), slice(2, 3)),
}


def _conjugate(est):
    return clone(est).set_params(method="conjugate", draws=10, chains=1, random_state=0)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_loo_with_a_category_of_one_row_is_the_declared_refit(name, weighted):
    make, cols = CASES[name]
    X, y = _data()
    X = X[:, cols]
    w = np.random.default_rng(1).uniform(0.5, 2.0, N) if weighted else None
    X_test = X[[0, 5, 12]]
    fitted = _conjugate(make(False)).fit(X, y, w)
    joint, _ = exact_loo.loo_log_joint(fitted, X, y, w)
    at = exact_loo.loo_log_joint_at(fitted, exact_loo.training_rows(fitted, X, y, w), X_test)
    for i in range(N):
        keep = np.arange(N) != i
        wk = None if w is None else w[keep]
        plain = _conjugate(make(False)).fit(X[keep], y[keep], wk)
        if i == RARE:  # the refit as constructed cannot score the row: declare the code
            with pytest.raises(ValueError, match="not one of the"):
                plain.predict_joint_log_proba(X[i:i + 1])
            plain = _conjugate(make(True)).fit(X[keep], y[keep], wk)
        np.testing.assert_allclose(joint[i], plain.predict_joint_log_proba(X[i:i + 1])[0],
                                   rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(at[i], plain.predict_joint_log_proba(X_test),
                                   rtol=1e-10, atol=1e-10)
