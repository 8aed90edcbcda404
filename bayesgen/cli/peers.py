"""The demo's reference classifiers: the scikit-learn models a user would pick instead.

Each peer is the strongest configuration of its kind that scikit-learn offers without
hand tuning, so that the demo's comparison is against what a user would really run:

- LDA: ``LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto")`` (Ledoit-Wolf
  shrinkage of the pooled covariance; it standardises internally);
- QDA: ``QuadraticDiscriminantAnalysis`` on standardised features with ``reg_param``
  (``solver="svd"``) or Ledoit-Wolf ``shrinkage`` (``solver="eigen"``) chosen by 5-fold
  cross-validated log loss;
- Gaussian naive Bayes: ``GaussianNB()`` with its default ``var_smoothing``;
- logistic regression on standardised features with ``C`` chosen by cross-validated
  log loss (the usual discriminative baseline);
- the count families: ``MultinomialNB(alpha=1)`` and ``BernoulliNB(alpha=1)`` (Laplace
  smoothing, scikit-learn's default; the same estimates as bayesgen's ``alpha=2`` MAP).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from sklearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from sklearn.exceptions import FitFailedWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

#: ``reg_param`` values tried for scikit-learn's QDA (0 is the plain MLE)
QDA_REG_PARAMS = (0.0, 0.01, 0.03, 0.1, 0.3, 0.5, 0.9)
#: inverse regularisation strengths tried for logistic regression
LOGISTIC_CS = (0.01, 0.1, 1.0, 10.0, 100.0)


class Peer(NamedTuple):
    """A scikit-learn reference: the bayesgen classifier it stands next to, a label for
    the method column, and ``factory(seed)`` building the unfitted estimator."""

    classifier: str
    method: str
    factory: Callable[[int], Any]


class Quiet:
    """Fit ``estimator`` with the warnings of failing cross-validation candidates muted.

    A candidate that cannot fit (scikit-learn's QDA with ``solver="svd"`` and no more
    rows per class than features) is scored NaN by :class:`GridSearchCV`, which warns
    once per candidate; the search then picks among the others. Any other warning is
    passed on. When every candidate fails, ``fit`` raises the ``ValueError`` of the
    search.
    """

    def __init__(self, estimator: Any) -> None:
        self.estimator = estimator

    def fit(self, X: np.ndarray, y: np.ndarray) -> Quiet:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FitFailedWarning)
            warnings.filterwarnings("ignore", message=".*scores are non-finite.*",
                                    category=UserWarning)
            self.estimator.fit(X, y)
        self.classes_ = self.estimator.classes_
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        return self.estimator.predict_proba(X)


def _folds(seed: int) -> StratifiedKFold:
    return StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)


def tuned_qda(seed: int) -> Quiet:
    """Standardised QDA, ``reg_param`` or Ledoit-Wolf shrinkage chosen by 5-fold CV log loss."""
    qda = make_pipeline(StandardScaler(), QuadraticDiscriminantAnalysis())
    grid = [
        {"quadraticdiscriminantanalysis__solver": ["svd"],
         "quadraticdiscriminantanalysis__reg_param": list(QDA_REG_PARAMS)},
        {"quadraticdiscriminantanalysis__solver": ["eigen"],
         "quadraticdiscriminantanalysis__shrinkage": ["auto"]},
    ]
    return Quiet(GridSearchCV(qda, grid, scoring="neg_log_loss", cv=_folds(seed)))


def tuned_logistic(seed: int) -> Quiet:
    """Standardised multinomial logistic regression, ``C`` chosen by 5-fold CV log loss."""
    logistic = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    grid = {"logisticregression__C": list(LOGISTIC_CS)}
    return Quiet(GridSearchCV(logistic, grid, scoring="neg_log_loss", cv=_folds(seed)))


GAUSSIAN_PEERS: list[Peer] = [
    Peer("LDA", "sklearn shrinkage",
         lambda s: LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto")),
    Peer("QDA", "sklearn tuned by CV", tuned_qda),
    Peer("GaussianNB", "sklearn", lambda s: GaussianNB()),
    Peer("LogisticRegression", "sklearn tuned by CV", tuned_logistic),
]

COUNT_PEERS: list[Peer] = [
    Peer("MultinomialNB", "sklearn alpha=1", lambda s: MultinomialNB(alpha=1.0)),
    Peer("BernoulliNB(binarize=7)", "sklearn alpha=1",
         lambda s: BernoulliNB(alpha=1.0, binarize=7.0)),
    Peer("LogisticRegression", "sklearn tuned by CV", tuned_logistic),
]
