"""bayesgen: Bayesian generative classifiers (LDA, QDA, naive Bayes) with uncertainty.

Each classifier is a generative model y ~ Categorical(pi), pi ~ Dirichlet, x | y from
a likelihood family with its conjugate prior, fitted by closed-form MLE or MAP.
"""

from bayesgen.compare import compare
from bayesgen.estimators import LDA, QDA, GaussianNB
from bayesgen.exceptions import BayesgenWarning, ConvergenceWarning, DataWarning
from bayesgen.io import load
from bayesgen.naive_bayes import (
    BernoulliNB,
    CategoricalNB,
    KernelNB,
    MixedNB,
    MultinomialNB,
    PoissonNB,
)
from bayesgen.streaming import merge

__version__ = "0.1.0"


#: attributes imported on first use (PEP 562): they need ArviZ, PyMC or matplotlib,
#: which a user of the point methods (mle/map) never loads
_LAZY = {
    "diagnostics": ("bayesgen.diagnostics", None),
    "plot_compare": ("bayesgen.diagnostics", "plot_compare"),
    "plot_ppc": ("bayesgen.diagnostics", "plot_ppc"),
    "ppc_pvalues": ("bayesgen.diagnostics", "ppc_pvalues"),
    "plots": ("bayesgen.plots", None),
}


def __getattr__(name: str):
    """Import the attributes of :data:`_LAZY` on first use."""
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = importlib.import_module(module)
        if attr is not None:
            value = getattr(value, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'bayesgen' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "LDA",
    "QDA",
    "BayesgenWarning",
    "BernoulliNB",
    "CategoricalNB",
    "ConvergenceWarning",
    "DataWarning",
    "GaussianNB",
    "KernelNB",
    "MixedNB",
    "MultinomialNB",
    "PoissonNB",
    "__version__",
    "compare",
    "diagnostics",
    "load",
    "merge",
    "plot_compare",
    "plot_ppc",
    "plots",
    "ppc_pvalues",
]
