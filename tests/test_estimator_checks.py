"""scikit-learn's own estimator checks (`parametrize_with_checks`) with method="map"."""

from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesgen as bg

_NEGATIVE_BLOBS = (
    "the check scores make_blobs data that contains negative values, which count "
    "and duration families reject with a ValueError (scikit-learn's MultinomialNB has no "
    "decision_function, so it never meets this check)"
)


def _expected_failures(estimator):
    if isinstance(estimator, bg.MultinomialNB):
        return {"check_decision_proba_consistency": _NEGATIVE_BLOBS}
    if isinstance(estimator, bg.PoissonNB | bg.ExponentialNB):
        return {"check_decision_proba_consistency": _NEGATIVE_BLOBS}
    return {}


@parametrize_with_checks(
    [
        bg.LDA(method="map"),
        bg.QDA(method="map"),
        bg.GaussianNB(method="map"),
        bg.MultinomialNB(method="map"),
        bg.PoissonNB(method="map"),
        bg.ExponentialNB(method="map"),
        bg.KernelNB(method="map"),
    ],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
