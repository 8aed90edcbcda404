"""Constructor parameters: their constraints and their validation at fit.

Every estimator declares ``_parameter_constraints`` (scikit-learn's machinery) from the
tables below, and :func:`check_params` validates them all at the start of ``fit``,
whatever the method (``InvalidParameterError``, a ``ValueError`` naming the parameter).
Checks that need the data (lengths K or d, ``cov_dof > d + 1``) stay where the data are.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import (
    Hidden,
    Interval,
    StrOptions,
    validate_parameter_constraints,
)

from bayesgen.data.validation import METHODS
from bayesgen.inference.jax_nuts import CHAIN_METHODS
from bayesgen.inference.mcmc import SAMPLERS

#: finite and > 0
POSITIVE = Interval(Real, 0, None, closed="neither")
#: finite (both ends open, so +-inf and NaN are rejected)
FINITE = Interval(Real, None, None, closed="neither")

#: parameters shared by every estimator
COMMON: dict[str, list] = {
    "method": [StrOptions(set(METHODS))],
    "class_alpha": [POSITIVE, "array-like"],
    "class_prior": ["array-like", None],
    "draws": [Interval(Integral, 1, None, closed="left")],
    "tune": [Interval(Integral, 0, None, closed="left")],
    "chains": [Interval(Integral, 1, None, closed="left")],
    "sampler": [StrOptions(set(SAMPLERS))],
    "chain_method": [StrOptions(set(CHAIN_METHODS))],
    "target_accept": [Interval(Real, 0, 1, closed="neither")],
    "progressbar": ["boolean", StrOptions({"auto"})],
    "random_state": ["random_state", np.random.Generator],
    "loss": ["array-like", None],
    "unlabeled": "no_validation",  # any label value, or None
    "unlabeled_weight": [Interval(Real, 0, 1, closed="both")],
    # scikit-learn's n_jobs: None, -1 (all cores), -2 (all but one), ... or >= 1; not 0
    "n_jobs": [Interval(Integral, None, -1, closed="right"),
               Interval(Integral, 1, None, closed="left"), None],
}

_ALPHA = [POSITIVE, "array-like"]
_DIVISOR = [StrOptions({"n", "unbiased"})]
_MEAN_PRIOR = ["array-like", FINITE, None]

#: hyper-parameters of each family (also the keys of MixedNB's per-part options)
FAMILIES: dict[str, dict[str, list]] = {
    "gaussian": {
        "mean_prior": _MEAN_PRIOR,
        "mean_strength": [POSITIVE],
        "var_prior": ["array-like", POSITIVE, None],
        "var_dof": [StrOptions({"auto"}), Interval(Real, 2, None, closed="neither")],
        "var_scale": [StrOptions({"auto"}), None, Interval(Real, 0, None, closed="neither")],
        "divisor": _DIVISOR,
    },
    "mvn": {
        "mean_prior": _MEAN_PRIOR,
        "mean_strength": [StrOptions({"auto"}), POSITIVE],
        "cov_target": [StrOptions({"pooled", "isotropic"}), "array-like", POSITIVE, None],
        # nu0 > d + 1 >= 2; the bound with d is checked once d is known
        "cov_dof": [StrOptions({"auto", "oas", "sample"}), None,
                    Interval(Real, 2, None, closed="neither")],
        "cov_scale": [StrOptions({"auto", "sample"}), None,
                      Interval(Real, 0, None, closed="neither")],
        "divisor": _DIVISOR,
        "cov_prior_form": [StrOptions({"niw", "lkj"})],
        "cov_structure": [StrOptions({"full", "diag", "spherical", "auto", "average"})],
        # deprecated names of cov_target and cov_prior_form (0.2, removed in 0.3)
        "cov_prior": [Hidden(StrOptions({"deprecated"})), StrOptions({"pooled", "isotropic"}),
                      "array-like", POSITIVE, None],  # deprecated cov_target
        "covariance_prior": [Hidden(StrOptions({"deprecated"})),  # deprecated
                             StrOptions({"niw", "lkj"})],  # deprecated cov_prior_form
    },
    "bernoulli": {"alpha": _ALPHA, "binarize": [None, FINITE]},
    "multinomial": {"alpha": _ALPHA},
    "categorical": {
        "alpha": _ALPHA,
        "min_categories": [None, Interval(Real, 1, None, closed="left"), "array-like"],
    },
    "poisson": {
        "alpha": _ALPHA,  # >= 1 checked by the family, whose message says why
        "rate_prior": ["array-like", POSITIVE, None],
    },
    "exponential": {
        "alpha": _ALPHA,  # >= 1 checked by the family, whose message says why
        "mean_prior": ["array-like", POSITIVE, None],
    },
    "kernel": {"bandwidth_sd": [POSITIVE]},
}

#: MixedNB's own parameters (the parts' options are checked against FAMILIES)
MIXED: dict[str, list] = {
    "families": [list, tuple, StrOptions({"auto"}), None],
    "overrides": [dict, None],
    "alpha": _ALPHA,
}


def constraints(family: str) -> dict[str, list]:
    """``_parameter_constraints`` of the estimator over ``family`` ("mixed" for MixedNB)."""
    own = MIXED if family == "mixed" else FAMILIES[family]
    return {**COMMON, **own}


def check_params(estimator: Any) -> str:
    """Validate every constructor parameter of ``estimator``; return its ``method``.

    Raises
    ------
    ValueError
        ``sklearn.utils._param_validation.InvalidParameterError`` (a ``ValueError``)
        naming the parameter, for a wrong type or range; a plain ``ValueError`` for a
        MixedNB part's options, or ``method="conjugate"`` on an estimator without a
        conjugate prior (KernelNB).
    """
    estimator._validate_params()
    who = type(estimator).__name__
    families = getattr(estimator, "families", None)
    # MixedNB's ``(name, columns, options)`` entries: the type/range of the options (the
    # layout itself is checked by the mixed family)
    for p, entry in enumerate(families if isinstance(families, list | tuple) else ()):
        if not (isinstance(entry, list | tuple) and len(entry) == 3):
            continue
        name, _, options = entry
        table = FAMILIES.get(name) if isinstance(name, str) else None
        if table is not None and isinstance(options, dict):
            known = {k: v for k, v in options.items() if k in table}
            validate_parameter_constraints(table, known,
                                           caller_name=f"{who} families[{p}] ({name!r})")
    method = estimator.method
    if method not in estimator._methods:
        raise ValueError(
            f"{who} has no conjugate prior, so its posterior has no closed form and "
            f"method={method!r} is not available; use method='mcmc' to sample it with "
            "NUTS, or 'mle'/'map' for point estimates."
        )
    return method
