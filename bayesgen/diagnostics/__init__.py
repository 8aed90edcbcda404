"""Posterior predictive checks and comparison plots for posterior estimators.

A posterior predictive check replicates the training set once per posterior draw s
(``y_rep ~ Categorical(pi_s)``, ``x_rep ~ p(x | y_rep, theta_s)``, see
:mod:`bayesgen.inference.predictive`) and asks whether a test statistic T of the observed data
looks typical among the replicated ones. Here T is computed per class k on the rows
whose class is k (observed rows with y = k; replicated rows with y_rep = k), so a
misspecified class-conditional model p(x | y = k) shows up in the row of that class
and feature.

The Bayesian p-value uses the mid-p convention for ties (discrete data):

    p = P(T_rep > T_obs) + 0.5 P(T_rep = T_obs),

estimated over the posterior draws for which T_rep is defined. Values near 0 or 1
mean the observed statistic is extreme under the fitted model.
"""

from __future__ import annotations

from bayesgen.diagnostics.ppc import class_frequency_ppc, feature_ppc_data, ppc_pvalues
from bayesgen.diagnostics.ppc_plots import plot_compare, plot_ppc

__all__ = [
    "class_frequency_ppc",
    "feature_ppc_data",
    "plot_compare",
    "plot_ppc",
    "ppc_pvalues",
]
