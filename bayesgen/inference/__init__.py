"""From sufficient statistics to fitted models and predictions (internal).

Owns: a batch of rows read into statistics, the class prior, closed-form point fits'
companions, the conjugate posterior and its i.i.d. draws, NUTS on the statistics model
(numpyro or PyMC), ``arviz.InferenceData``, the pointwise log-likelihood, exact LOO,
the exact evidence, prior and posterior predictive sampling, log p(x), and the scores
of the Bayes rule in the fit's affine frame. Every step reaches a family only through
:class:`bayesgen.families.protocol.Family`.

May import: :mod:`bayesgen.families`, :mod:`bayesgen.data`, :mod:`bayesgen.utils`,
:mod:`bayesgen.exceptions`.
"""
