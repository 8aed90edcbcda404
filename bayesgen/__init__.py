"""bayesgen: Bayesian generative classifiers (LDA, QDA, naive Bayes) with uncertainty.

Each classifier is a generative model y ~ Categorical(pi), pi ~ Dirichlet, x | y from
a likelihood family with its conjugate prior, fitted by closed-form MLE or MAP.
"""

from bayesgen import diagnostics
from bayesgen.compare import compare
from bayesgen.diagnostics import plot_compare, plot_ppc, ppc_pvalues
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


def __getattr__(name: str):
    """``bg.plots`` is imported on first use (it imports matplotlib.pyplot)."""
    if name == "plots":
        import importlib

        return importlib.import_module("bayesgen.plots")
    raise AttributeError(f"module 'bayesgen' has no attribute {name!r}")

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
