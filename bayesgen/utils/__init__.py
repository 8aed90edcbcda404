"""Small tools with no knowledge of models (internal).

Owns lazy imports of ArviZ/PyMC, log-space normalisation (log-sum-exp), random states,
thread pools for passes over large arrays, and progress-bar settings.

May import: :mod:`bayesgen.exceptions` only.
"""
