"""The scikit-learn estimators (internal; the classes are public as ``bayesgen.LDA``, ...).

Owns the public classifier classes, their constructor parameters and their validation,
the shared estimator that turns a fit into fitted state (``method_``, ``classes_``,
the parameters or the posterior) and every ``predict*`` method, LDA's projection,
saving and loading (``save`` / ``bayesgen.load``), and the stack of conjugate classifiers
weighted by their exact leave-one-out class probabilities (``bayesgen.StackedClassifier``).

May import: :mod:`bayesgen.decide`, :mod:`bayesgen.diagnostics`, :mod:`bayesgen.semi`,
:mod:`bayesgen.scale`, :mod:`bayesgen.plots`, :mod:`bayesgen.inference`,
:mod:`bayesgen.families`, :mod:`bayesgen.data`, :mod:`bayesgen.utils`,
:mod:`bayesgen.exceptions`. Imported only by :mod:`bayesgen` and :mod:`bayesgen.cli`.
"""
