"""The scikit-learn estimator shared by every classifier.

A classifier is a class prior pi plus one likelihood *family* (see
:mod:`bayesgen.families`). This base class does the bookkeeping that is the same for
all of them: input validation, label encoding, sufficient statistics, dispatch on
``method``, the Bayes rule in log space, loss-based decisions and sampling from the
fitted generative model. Subclasses only say which family they use.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from bayesgen import classprior
from bayesgen._validation import (
    POSTERIOR_METHODS,
    check_concentration,
    check_loss,
    check_method,
    check_sample_weight,
    encode_labels,
)
from bayesgen.predict import decide, normalise


class GenerativeClassifier(ClassifierMixin, BaseEstimator):
    """Base class: y ~ Categorical(pi), pi ~ Dirichlet(class_alpha), x | y ~ family.

    Subclasses define ``_make_family(self, X=None)``, returning a configured family
    object (``X`` is the validated training matrix, given at fit time only), and set
    ``_methods`` (the ``method`` values they support).
    """

    _methods: tuple[str, ...] = ("mle", "map")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = bool(getattr(self._make_family(), "positive_only", False))
        return tags

    # -------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None):
        """Fit the generative model.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, d)
        y : array-like of shape (n,)
            Class labels (any hashable values, strings included).
        sample_weight : array-like of shape (n,), optional
            Non-negative weights; weight 2 is the same as a duplicated row.

        Returns
        -------
        self
        """
        method = check_method(self.method, self._methods)
        X, y = validate_data(self, X, y, dtype=np.float64)
        classes, y_index = encode_labels(y)
        n_classes = classes.size
        weights = check_sample_weight(sample_weight, X.shape[0])
        family = self._make_family(X)
        family.labels = classes
        X = family.check_X(X, method=method, who=type(self).__name__)
        stats = family.stats(X, y_index, weights, n_classes)
        counts = np.bincount(y_index, weights=weights, minlength=n_classes)
        class_alpha = check_concentration(self.class_alpha, n_classes, "class_alpha", "class")
        self._loss = check_loss(getattr(self, "loss", None), n_classes)

        self.classes_ = classes
        self.class_count_ = counts
        self.family_ = family
        self.stats_ = stats
        self.prior_ = family.prior(stats)
        self.class_alpha_ = class_alpha
        if method == "mle":
            pi = classprior.mle(counts)
            params = family.mle(stats)
        elif method == "map":
            pi = classprior.map_estimate(counts, class_alpha)
            params = family.map(stats, self.prior_)
        else:  # pragma: no cover - guarded by check_method
            raise ValueError(f"method={method!r} is not available for {type(self).__name__}.")
        self.params_ = params
        self.class_prior_ = pi
        with np.errstate(divide="ignore"):
            self.class_log_prior_ = np.log(pi)
        for name, value in family.attributes(params).items():
            setattr(self, name, value)
        return self

    # ------------------------------------------------------------ prediction
    def _check_X_predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "params_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.family_.check_X(X, method=self.method, who=type(self).__name__)

    def _scores(self, X: np.ndarray, full: bool) -> np.ndarray:
        """log p(x, y=k) (full=True) or the discriminant scores (full=False), (n, K)."""
        with np.errstate(divide="ignore"):
            return self.family_.log_lik(X, self.params_, full=full) + self.class_log_prior_

    def predict_joint_log_proba(self, X: Any) -> np.ndarray:
        """log p(x, y=k) for every row and class, shape (n, K)."""
        return self._scores(self._check_X_predict(X), full=True)

    def decision_function(self, X: Any) -> np.ndarray:
        """Discriminant functions delta_k(x): log p(x, y=k) up to terms equal across classes.

        For LDA ``x^T Sigma^-1 mu_k - mu_k^T Sigma^-1 mu_k / 2 + log pi_k``; for QDA
        ``-log|Sigma_k|/2 - (x - mu_k)^T Sigma_k^-1 (x - mu_k)/2 + log pi_k``.
        Returns (n, K), or (n,) = delta_1 - delta_0 for two classes (as scikit-learn).
        """
        scores = self._scores(self._check_X_predict(X), full=False)
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """log p(y=k | x), (n, K), normalised with log-sum-exp. Never NaN."""
        scores = self._scores(self._check_X_predict(X), full=False)
        return normalise(scores, self.class_log_prior_, type(self).__name__)

    def predict_proba(self, X: Any) -> np.ndarray:
        """p(y=k | x), (n, K); rows sum to 1, columns in the order of ``classes_``."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        """The Bayes decision: most probable class, or minimum expected ``loss``."""
        proba = self.predict_proba(X)
        return self.classes_[decide(proba, self._loss)]

    # -------------------------------------------------------------- sampling
    def sample(self, n: int, classes: Any = None, random_state: Any = None):
        """Draw ``(X_new, y_new)`` from the fitted generative model.

        Parameters
        ----------
        n : int
            Number of rows.
        classes : label, sequence of labels, or None
            None draws y from the class prior; one label gives n rows of that class;
            a sequence of n labels fixes y row by row.
        random_state : int, Generator or None

        Returns
        -------
        X_new : ndarray (n, d)
        y_new : ndarray (n,) of labels from ``classes_``
        """
        check_is_fitted(self, "params_")
        if not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"n must be a non-negative integer; got {n!r}.")
        rng = np.random.default_rng(check_random_state(random_state).randint(2**31))
        y = self._sample_classes(n, classes, rng)
        params = {k: np.broadcast_to(v, (n, *np.shape(v))) for k, v in self.params_.items()}
        return self.family_.sample(params, y, rng), self.classes_[y]

    def _sample_classes(self, n: int, classes: Any, rng: np.random.Generator) -> np.ndarray:
        if classes is None:
            return rng.choice(self.classes_.size, size=n, p=self.class_prior_)
        labels = np.atleast_1d(np.asarray(classes, dtype=self.classes_.dtype))
        if labels.size == 1:
            labels = np.repeat(labels, n)
        if labels.shape != (n,):
            raise ValueError(f"classes must be one label or {n} labels; got {labels.size}.")
        index = np.searchsorted(self.classes_, labels)
        index = np.clip(index, 0, self.classes_.size - 1)
        unknown = self.classes_[index] != labels
        if unknown.any():
            raise ValueError(
                f"classes contains labels not seen in fit: {sorted(set(labels[unknown]))}."
            )
        return index

    @property
    def _is_posterior(self) -> bool:
        return self.method in POSTERIOR_METHODS
