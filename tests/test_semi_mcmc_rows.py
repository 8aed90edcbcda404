"""The unlabeled rows' likelihood columns of semi-supervised NUTS, per family.

``bayesgen.semi.nuts.class_log_lik`` gives log p(x_n | y=k, theta) as an (m, K) PyTensor
expression from the family's PyMC pieces (its ``pymc_rows_loglik``); the mixture
potential needs it row by row.
Reference: the family's own NumPy ``log_lik`` (itself tested against scipy.stats), with
and without missing entries among the unlabeled rows (a missing entry drops its term).
CategoricalNB's observed distribution is one multivariate value whose ``pm.logp`` is a
total, so a per-row version is needed there (a total broadcast over rows was wrong).
"""

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import pytest

import bayesgen as bg
from bayesgen.inference import scoring
from bayesgen.inference.model import model_coords
from bayesgen.semi import nuts as _semi_mcmc

N, M = 60, 12


def _cases(rng):
    y = rng.integers(0, 2, N)
    codes = rng.integers(0, 3, (N, 3)).astype(float)
    values = np.choose(codes.astype(int), [3.0, 7.0, 11.0])
    frame = pd.DataFrame({
        "g": rng.normal(size=N) + y,
        "b": (rng.random(N) < 0.3 + 0.4 * y).astype(float),
        "p": rng.poisson(2 + 2 * y).astype(float),
        "c": values[:, 0],
    })
    mixed = [("gaussian", ["g"]), ("bernoulli", ["b"]), ("poisson", ["p"]),
             ("categorical", ["c"])]
    return y, {
        "gaussian": (bg.GaussianNB(method="map"), rng.normal(size=(N, 3)) + y[:, None]),
        "bernoulli": (bg.BernoulliNB(method="map"),
                      (rng.random((N, 3)) < 0.3 + 0.4 * y[:, None]).astype(float)),
        "poisson": (bg.PoissonNB(method="map"), rng.poisson(2 + 2 * y[:, None], (N, 3)) * 1.0),
        "multinomial": (bg.MultinomialNB(method="map"),
                        rng.poisson(2 + 2 * y[:, None], (N, 4)) * 1.0),
        "categorical codes": (bg.CategoricalNB(method="map"), codes),
        "categorical values": (bg.CategoricalNB(method="map"), values),
        "mixed": (bg.MixedNB(method="map", families=mixed), frame),
        "exponential": (bg.ExponentialNB(method="map"),
                        rng.exponential(1.0 + 2.0 * y[:, None], (N, 3))),
    }


CASES = list(_cases(np.random.default_rng(0))[1])


@pytest.mark.parametrize("gaps", [False, True])
@pytest.mark.parametrize("name", CASES)
def test_columns_equal_the_family_log_lik(name, gaps):
    rng = np.random.default_rng(1)
    y, cases = _cases(rng)
    est, X = cases[name]
    unl = np.asarray(X, dtype=float)[:M].copy()
    if gaps:
        unl[rng.random(unl.shape) < 0.3] = np.nan
        unl[0] = np.nan  # a row with nothing observed: every column 0
    if isinstance(X, pd.DataFrame):
        unl, X_fit = pd.DataFrame(unl, columns=X.columns), X.iloc[M:]
    else:
        X_fit = X[M:]
    est.fit(X_fit, y[M:])
    Z = scoring.internal(est, est._check_X_predict(unl))
    params = {k: pt.as_tensor(np.asarray(v)) for k, v in est._params.items()}
    with pm.Model(coords=model_coords(est, M)):
        columns = _semi_mcmc.class_log_lik(est, params, Z).eval()
    expected = est._family.log_lik(Z, est._params, full=True)
    assert columns.shape == (M, 2)
    np.testing.assert_allclose(columns, expected, rtol=1e-10, atol=1e-10)
    if gaps and name != "multinomial":
        np.testing.assert_array_equal(columns[0], 0.0)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayesgen.ConvergenceWarning")  # short chains
def test_nuts_fit_with_gaps_in_unlabeled_rows():
    """End to end: CategoricalNB and GaussianNB NUTS with unlabeled rows holding NaN
    (formerly a ValueError) run, and the class probabilities of the posterior are
    finite and close to the EM fit's."""
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 200)
    X = rng.normal(size=(200, 2)) + 2.0 * y[:, None]
    X[rng.random(X.shape) < 0.2] = np.nan
    labels = y.astype(object)
    labels[40:] = None
    em = bg.GaussianNB(method="map").fit(X, labels)
    nuts = bg.GaussianNB(method="mcmc", draws=300, tune=300, chains=2,
                         random_state=0).fit(X, labels)
    assert np.all(np.isfinite(nuts.predict_proba(X)))
    assert np.abs(nuts.theta_ - em.theta_).max() < 0.3
    codes = (X > 1.0).astype(float) + (X > 2.0)
    codes[np.isnan(X)] = np.nan
    cat = bg.CategoricalNB(method="mcmc", draws=200, tune=200, chains=2,
                           random_state=0).fit(codes, labels)
    assert np.all(np.isfinite(cat.predict_proba(codes)))
