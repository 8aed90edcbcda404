"""Input into arrays (internal).

Owns the checks of X, y, weights, priors and loss; the unlabeled entries of y;
DataFrames (column kinds, category tables); scipy.sparse input; missing values (masks,
the infinity check); and the per-feature affine frame that real-valued statistics are
computed in.

May import: :mod:`bayesgen.utils`, :mod:`bayesgen.exceptions`.
"""
