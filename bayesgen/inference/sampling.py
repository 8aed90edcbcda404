"""``sample``: draws ``(X_new, y_new)`` from a fitted classifier's generative model
(the plug-in model for point methods, the posterior predictive for posterior methods),
what the estimators' ``sample`` method returns
(:meth:`bayesgen.estimators.base.GenerativeClassifier.sample`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesgen.data import tables
from bayesgen.inference import scoring
from bayesgen.utils.random import legacy_rng


def sample(fit, class_prior: np.ndarray, n: int, classes: Any = None,
           random_state: Any = None):
    """Draw ``(X_new, y_new)`` from the generative model of ``fit``
    (:class:`bayesgen.inference.fitted.Fit`; ``class_prior`` its point pi, (K,)).

    Point methods sample the plug-in model; posterior methods sample the posterior
    predictive (a posterior draw per row, then y and x given it). ``classes``: None
    draws y from the class prior; one label gives n rows of that class; a sequence of
    n labels fixes y row by row. Returns ``X_new`` (n, d) (a DataFrame holding the
    values of text columns, if fitted on any) and ``y_new`` (n,) from the classes.
    """
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative integer; got {n!r}.")
    rng = legacy_rng(random_state)
    source = {**fit.params, **fit.family.sample_inputs(fit.stats)}  # non-random extras
    if fit.is_posterior:
        # posterior predictive: one posterior draw per row, then y and x given it
        random = fit.family.param_dims
        pick = rng.integers(0, fit.log_pi_draws.shape[0], size=n)
        pi = np.exp(fit.log_pi_draws[pick])
        if classes is None:
            u = rng.uniform(size=(n, 1))
            y = np.minimum((np.cumsum(pi, axis=1) < u).sum(axis=1), pi.shape[1] - 1)
        else:
            y = _sample_classes(fit.classes, class_prior, n, classes, rng)
        params = {
            k: (v[pick] if k in random else np.broadcast_to(v, (n, *np.shape(v))))
            for k, v in source.items()
        }
    else:
        y = _sample_classes(fit.classes, class_prior, n, classes, rng)
        params = {k: np.broadcast_to(v, (n, *np.shape(v))) for k, v in source.items()}
    X_new = scoring.to_user_rows(fit, fit.family.sample(params, y, rng))
    return tables.to_user(fit.columns, fit.feature_names, X_new), fit.classes[y]


def _sample_classes(known: np.ndarray, class_prior: np.ndarray, n: int, classes: Any,
                    rng: np.random.Generator) -> np.ndarray:
    """Class indices (n,) into ``known``: from the class prior, one label repeated, or n
    labels."""
    if classes is None:
        return rng.choice(known.size, size=n, p=class_prior)
    labels = np.atleast_1d(np.asarray(classes, dtype=object))
    if labels.size == 1:
        labels = np.repeat(labels, n)
    if labels.shape != (n,):
        raise ValueError(f"classes must be one label or {n} labels; got {labels.size}.")
    position = {label.item() if isinstance(label, np.generic) else label: k
                for k, label in enumerate(known)}
    unknown = sorted({str(v) for v in labels if v not in position})
    if unknown:
        raise ValueError(f"classes contains labels not seen in fit: {unknown}.")
    return np.array([position[v] for v in labels], dtype=np.intp)
