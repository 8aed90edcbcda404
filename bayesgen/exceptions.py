"""Warning classes of bayesgen, and the helper that attributes them to the user's line.

Every warning bayesgen issues is a subclass of :class:`BayesgenWarning` (itself a
``UserWarning``), so all of them can be filtered at once::

    import warnings
    import bayesgen as bg

    warnings.simplefilter("ignore", bg.BayesgenWarning)   # all of bayesgen's warnings
    warnings.simplefilter("error", bg.ConvergenceWarning)  # fail on poor MCMC convergence

Warnings are attributed to the first stack frame outside the bayesgen package (and
outside scikit-learn's mixin plumbing, e.g. ``ClassifierMixin.score``), i.e. to the
user's own line, whatever the depth of the call inside bayesgen.
"""

from __future__ import annotations

import os
import sys
import warnings

# ConvergenceWarning is made on first access by the module __getattr__ below
__all__ = ["BayesgenWarning", "ConvergenceWarning", "DataWarning", "warn"]  # noqa: F822


class BayesgenWarning(UserWarning):
    """Base class of every warning issued by bayesgen."""


class DataWarning(BayesgenWarning):
    """The data make a result degenerate or unavailable: test rows with zero likelihood
    under every class (their probabilities fall back to the class prior), a posterior
    predictive statistic undefined on the data, a pointwise log-likelihood table too
    large to store in ``idata_``, or importance weights of the uncertainty
    decomposition with a small effective sample size (rows far from the data)."""


def _convergence_warning() -> type[Warning]:
    """The class :class:`ConvergenceWarning`, made on first use: it subclasses
    scikit-learn's ``sklearn.exceptions.ConvergenceWarning`` too (so filters written for
    scikit-learn's iterative estimators catch it), and importing scikit-learn is left
    until a model needs it (``import bayesgen`` stays light)."""
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

    class ConvergenceWarning(BayesgenWarning, SklearnConvergenceWarning):
        """An iterative fit may not have converged. ``method="mcmc"``: R-hat > 1.01, bulk
        or tail ESS < 400, divergent transitions, or R-hat not computable with one chain;
        EM (missing entries, unlabeled rows): ``max_iter`` reached. The message says what
        to try (more ``tune``/``draws``/``chains``, a higher ``target_accept``, a larger
        ``max_iter``). A subclass of both :class:`BayesgenWarning` and scikit-learn's
        ``ConvergenceWarning``."""

    ConvergenceWarning.__module__ = __name__
    return ConvergenceWarning


def __getattr__(name: str):
    """PEP 562: ``ConvergenceWarning`` is created on first access (see
    :func:`_convergence_warning`) and then kept as a module attribute."""
    if name == "ConvergenceWarning":
        value = _convergence_warning()
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _sklearn_plumbing() -> tuple[str, ...]:
    """Files of scikit-learn's mixins that only forward calls to bayesgen's methods
    (``score``, ``fit_transform``, the ``set_output`` wrapper)."""
    from importlib.util import find_spec

    spec = find_spec("sklearn")  # its location, without importing it (1.5 s)
    if spec is None or spec.origin is None:  # pragma: no cover - a dependency
        return ()
    root = os.path.dirname(os.path.abspath(spec.origin))
    return (os.path.join(root, "base.py"), os.path.join(root, "utils", "_set_output.py"))


_SKIP_FILES = _sklearn_plumbing()


def _is_internal(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_PACKAGE_DIR + os.sep) or path in _SKIP_FILES


def warn(message: str, category: type[Warning] = BayesgenWarning) -> None:
    """``warnings.warn(message, category)`` attributed to the user's calling line.

    Parameters
    ----------
    message : str
        What happened and what to try.
    category : subclass of BayesgenWarning
    """
    # stacklevel=1 would name this line, 2 our caller, ...: climb past bayesgen's frames
    frame = sys._getframe(1)
    level = 2
    while frame.f_back is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
