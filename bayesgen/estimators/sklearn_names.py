"""scikit-learn's parameter names that bayesgen's estimators do not take, and what to
use instead.

A user porting ``LinearDiscriminantAnalysis(priors=..., shrinkage="auto")`` gets a
``TypeError`` that names the public estimator and the bayesgen equivalent, instead of
Python's bare "unexpected keyword argument" naming a private base class. Every
estimator's ``__init__`` is wrapped once, when its class is defined
(:func:`checked_init`, called from ``GenerativeClassifier.__init_subclass__``); the
wrapper keeps the signature (``inspect.signature`` follows ``__wrapped__``), so
scikit-learn's ``get_params`` / ``clone`` see the same parameters.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

#: scikit-learn parameter -> (the bayesgen parameters it maps to, the advice); the
#: advice is given where the estimator has one of those parameters (or none is needed)
SKLEARN_ONLY: dict[str, tuple[tuple[str, ...], str]] = {
    "priors": (("class_prior",), "class_prior= (fixed class probabilities, in the order "
               "of classes_), or class_alpha= (a Dirichlet prior on them, estimated from "
               "the data)"),
    "fit_prior": (("class_prior",), "class_prior=np.full(K, 1 / K) for fit_prior=False "
                  "(a fixed uniform prior); by default the class prior is estimated, as "
                  "with fit_prior=True"),
    "var_smoothing": (("var_prior", "var_dof"), "var_prior= and var_dof= (the "
                      "Normal-Inverse-Gamma prior keeps variances positive under "
                      "method='map' and the posterior methods); method='mle' is "
                      "var_smoothing=0"),
    "solver": ((), "none is needed: fits are closed-form from the sufficient statistics "
               "(method='mle', 'map', 'conjugate') or sampled by NUTS (method='mcmc')"),
    "shrinkage": (("cov_target", "cov_dof"), "cov_target= (the target the covariance is "
                  "shrunk towards) and cov_dof= (the strength; 'auto' chooses it by the "
                  "evidence)"),
    "reg_param": (("cov_target", "cov_dof"), "cov_target= and cov_dof= (the conjugate prior "
                  "regularises each covariance; cov_dof='auto' chooses the strength by "
                  "the evidence)"),
    "store_covariance": ((), "none is needed: covariance_ is always stored"),
    "force_alpha": (("alpha",), "alpha= as given: it is a Dirichlet/Beta concentration "
                    "(alpha=1 is no smoothing; scikit-learn's alpha=a is alpha=a+1 here "
                    "with method='map'), and any positive value is used"),
    "tol": ((), "none is needed: point fits are closed-form (EM, with missing entries or "
            "unlabeled rows, stops at max_iter= or when the objective stops rising)"),
}


def _message(who: str, name: str, valid: list[str]) -> str:
    listed = f"its parameters are {', '.join(valid)}"
    if name in SKLEARN_ONLY:
        needs, advice = SKLEARN_ONLY[name]
        if not needs or any(n in valid for n in needs):
            return (f"{who} has no parameter {name!r} (a scikit-learn parameter); "
                    f"bayesgen's equivalent: {advice}.")
        return (f"{who} has no parameter {name!r} (a scikit-learn parameter of another "
                f"estimator, with no counterpart in {who}); {listed}.")
    return f"{who} got an unexpected keyword argument {name!r}; {listed}."


def checked_init(init: Callable) -> Callable:
    """Wrap an estimator's ``__init__`` so that unknown keyword arguments raise a
    ``TypeError`` naming the public class (``type(self).__name__``) and, for
    scikit-learn-only names, the bayesgen equivalent (:data:`SKLEARN_ONLY`) where it has one."""
    if getattr(init, "_checks_names", False):
        return init
    signature = inspect.signature(init)
    accepted = {name for name, p in signature.parameters.items()
                if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)} - {"self"}

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        unknown = [name for name in kwargs if name not in accepted]
        if unknown:
            raise TypeError(_message(type(self).__name__, unknown[0], sorted(accepted)))
        if args:
            raise TypeError(f"{type(self).__name__} takes keyword arguments only, e.g. "
                            f"{type(self).__name__}(method='map'); got {len(args)} "
                            "positional argument(s).")
        init(self, **kwargs)

    __init__._checks_names = True
    return __init__
