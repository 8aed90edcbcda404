"""Small tools with no knowledge of models (internal).

Owns lazy imports of ArviZ/PyMC, log-space normalisation (log-sum-exp), random states,
thread pools for passes over large arrays, progress-bar settings, and one-dimensional
searches (:mod:`.search`).

May import: :mod:`bayesgen.exceptions` only.
"""
