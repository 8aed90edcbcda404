"""Unlabelled rows: semi-supervised fits of every method (internal).

Owns reading which rows are unlabelled into a fit's plan, EM for ``"mle"``/``"map"``,
data augmentation for ``"conjugate"`` and the mixture likelihood of the NUTS model for
``"mcmc"``, all through the family protocol (responsibilities are weights on the same
sufficient statistics).

May import: :mod:`bayesgen.inference`, :mod:`bayesgen.families`, :mod:`bayesgen.data`,
:mod:`bayesgen.utils`, :mod:`bayesgen.exceptions`. Not its peers
(:mod:`bayesgen.scale`, :mod:`bayesgen.diagnostics`, :mod:`bayesgen.decide`).
"""
