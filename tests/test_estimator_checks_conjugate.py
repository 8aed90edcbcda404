"""scikit-learn's estimator checks (`parametrize_with_checks`) on every estimator with
``method="conjugate"`` (KernelNB has no conjugate prior); the rest, and the reasons of
the expected failures, are in tests/test_estimator_checks.py and tests/sklearn_checks.py.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from tests.sklearn_checks import _conjugate_instances, _expected_failures


@parametrize_with_checks(_conjugate_instances(), expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)
