"""Unlabeled rows: semi-supervised fits of every method (internal).

Owns the semi-supervised fit of a batch whose unlabeled rows
:mod:`bayesgen.data.labels` split off: EM for ``"mle"``/``"map"`` (:mod:`.em`; kernel
bandwidths :mod:`.kernel`), data augmentation for ``"conjugate"`` (:mod:`.augmentation`,
whose Rao-Blackwellised posterior is an inference mixture posterior) and the mixture
likelihood and start of the NUTS model for ``"mcmc"`` (:mod:`.nuts`, extra terms of the
statistics model), all through the family protocol (responsibilities are weights on
the same sufficient statistics; the unlabeled-row hooks of
:mod:`bayesgen.families.semi_hooks`). Nothing below this package imports it: it plugs
into :mod:`bayesgen.inference` through arguments.

May import: :mod:`bayesgen.inference`, :mod:`bayesgen.families`, :mod:`bayesgen.data`,
:mod:`bayesgen.utils`, :mod:`bayesgen.exceptions`. Not its peers
(:mod:`bayesgen.scale`, :mod:`bayesgen.diagnostics`, :mod:`bayesgen.decide`).
"""
