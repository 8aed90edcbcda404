"""bayesgen: Bayesian generative classifiers (LDA, QDA, naive Bayes) with uncertainty.

Each classifier is a generative model y ~ Categorical(pi), pi ~ Dirichlet, x | y from
a likelihood family with its conjugate prior, fitted by closed-form MLE or MAP.
"""

from bayesgen._version import __version__
from bayesgen.exceptions import BayesgenWarning, DataWarning

#: attributes imported on first use (PEP 562), so that ``import bayesgen`` loads
#: neither scikit-learn, SciPy, PyMC, ArviZ nor matplotlib: the estimators (scikit-learn
#: and SciPy, about 1.5 s), the diagnostics and plots (ArviZ, PyMC, matplotlib)
_LAZY = {
    "ConvergenceWarning": ("bayesgen.exceptions", "ConvergenceWarning"),
    "LDA": ("bayesgen.estimators.discriminant", "LDA"),
    "QDA": ("bayesgen.estimators.discriminant", "QDA"),
    "GaussianNB": ("bayesgen.estimators.naive_bayes", "GaussianNB"),
    "BernoulliNB": ("bayesgen.estimators.naive_bayes", "BernoulliNB"),
    "CategoricalNB": ("bayesgen.estimators.naive_bayes", "CategoricalNB"),
    "KernelNB": ("bayesgen.estimators.naive_bayes", "KernelNB"),
    "MixedNB": ("bayesgen.estimators.naive_bayes", "MixedNB"),
    "MultinomialNB": ("bayesgen.estimators.naive_bayes", "MultinomialNB"),
    "PoissonNB": ("bayesgen.estimators.naive_bayes", "PoissonNB"),
    "ExponentialNB": ("bayesgen.estimators.naive_bayes", "ExponentialNB"),
    "MixtureDA": ("bayesgen.estimators.mixture", "MixtureDA"),
    "StackedClassifier": ("bayesgen.estimators.stacking", "StackedClassifier"),
    "compare": ("bayesgen.diagnostics.compare", "compare"),
    "decompose_uncertainty": ("bayesgen.decide.uncertainty", "decompose_uncertainty"),
    "acquisition_scores": ("bayesgen.decide.active", "acquisition_scores"),
    "select_queries": ("bayesgen.decide.active", "select_queries"),
    "risk_coverage_curve": ("bayesgen.plots.risk_coverage", "risk_coverage_curve"),
    "load": ("bayesgen.estimators.persistence", "load"),
    "merge": ("bayesgen.estimators.streaming", "merge"),
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
    "ExponentialNB",
    "GaussianNB",
    "KernelNB",
    "MixedNB",
    "MixtureDA",
    "MultinomialNB",
    "PoissonNB",
    "StackedClassifier",
    "__version__",
    "acquisition_scores",
    "compare",
    "decompose_uncertainty",
    "diagnostics",
    "load",
    "merge",
    "plot_compare",
    "plot_ppc",
    "plots",
    "ppc_pvalues",
    "risk_coverage_curve",
    "select_queries",
]
