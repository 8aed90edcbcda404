"""scikit-learn's estimator checks (`parametrize_with_checks`) on a short
``method="mcmc"`` run of GaussianNB, marked ``slow`` (NUTS compiles a program per data
shape); the rest, and the reasons of the expected failures, are in
tests/test_estimator_checks.py and tests/sklearn_checks.py.
"""

import warnings

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesgen as bg
from tests.sklearn_checks import _expected_failures


# NUTS compiles a program per data shape, and the checks use many shapes: about a minute
# of compilation per check on a busy 2-core machine, so this short run is marked slow
@pytest.mark.slow
@parametrize_with_checks([bg.GaussianNB(method="mcmc", draws=60, tune=60, chains=1,
                                        random_state=0, progressbar=False)],
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible_mcmc(estimator, check):
    with warnings.catch_warnings():
        # the short NUTS run warns that it may not have converged (as it should)
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        check(estimator)
