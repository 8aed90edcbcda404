"""Statistics that arrive in pieces: ``partial_fit``, ``bayesgen.merge`` and Dask (internal).

Owns the additive pieces of statistics that batches, merged estimators and Dask chunks
reduce to, and the lazy Dask wrappers of the predict methods.

May import: :mod:`bayesgen.inference`, :mod:`bayesgen.families`, :mod:`bayesgen.data`,
:mod:`bayesgen.utils`, :mod:`bayesgen.exceptions`. Not its peers
(:mod:`bayesgen.semi`, :mod:`bayesgen.diagnostics`, :mod:`bayesgen.decide`).
"""
