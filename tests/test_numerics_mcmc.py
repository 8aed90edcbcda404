"""NUTS runs in the internal frame: features at scale 1e12, 1e-12 or shifted by 1e9
converge as on iris itself, and ``idata_``'s posterior is reported in the units of X."""

import warnings

import arviz as az
import numpy as np
import pytest
from sklearn.datasets import load_iris

import bayesgen as bg

pytestmark = pytest.mark.slow

TRANSFORMS = {"x1e12": (1e12, 0.0), "x1e-12": (1e-12, 0.0), "+1e9": (1.0, 1e9)}


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("name", ["GaussianNB", "QDA"])
def test_nuts_converges_in_any_units(name, transform):
    X, y = load_iris(return_X_y=True)
    a, b = TRANSFORMS[transform]
    Xt = a * X + b
    cls = getattr(bg, name)
    est = cls(method="mcmc", draws=1000, tune=1000, chains=2, random_state=1,
              progressbar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # includes the convergence warning
        est.fit(Xt, y)
    post = est.idata_.posterior
    rhat = az.rhat(post[est._var_names()])
    assert max(float(rhat[v].max()) for v in est._var_names()) <= 1.01
    assert int(est.idata_.sample_stats["diverging"].sum()) == 0
    # the posterior is in the units of X: its means match the exact conjugate posterior
    exact = cls(method="conjugate", draws=1000, chains=2, random_state=1).fit(Xt, y)
    for var in est._family.param_dims:
        mcmc_mean = post[var].mean(("chain", "draw")).values
        ref = exact.idata_.posterior[var]
        sd = ref.std(("chain", "draw")).values
        assert np.all(np.abs(mcmc_mean - ref.mean(("chain", "draw")).values) <= 0.2 * sd + 1e-12
                      * np.abs(mcmc_mean)), var
    np.testing.assert_allclose(est.predict_proba(Xt), exact.predict_proba(Xt), atol=0.05)
