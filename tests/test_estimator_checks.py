"""scikit-learn's own estimator checks (`parametrize_with_checks`) with method="map"."""

from sklearn.utils.estimator_checks import parametrize_with_checks

import bayesgen as bg


@parametrize_with_checks(
    [
        bg.LDA(method="map"),
        bg.QDA(method="map"),
        bg.GaussianNB(method="map"),
        bg.MultinomialNB(method="map"),
        bg.PoissonNB(method="map"),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
