"""Observed rows with missing entries (NaN in the training X) in ``model_``.

For the factorised families ``model_`` integrates every missing entry out exactly: the
observed ``x`` (dims ``obs, feature``) holds X with its NaN and its log-density is
sum_{(n, j) observed} log p(x_nj | y_n, theta_j) (a missing entry's factor integrates
to 1), the observed-data likelihood every method fits. Unlike PyMC's automatic
imputation there are no latent (for discrete families, discrete) variables, so
``compile_logp()`` takes the parameters only, NUTS runs as without gaps and no
``ImputationWarning`` is raised; the forward sampler draws complete rows. The rows are
a float64 constant with NaN (not a NumPy array, which PyMC would impute), so a discrete
``x`` is float64 when X has gaps, int64 otherwise."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bayesgen.utils.heavy import import_pymc


def has_gaps(X) -> bool:
    """Whether the (dense) ``X`` holds a NaN (a missing entry)."""
    X = np.asarray(X)
    return X.dtype.kind == "f" and bool(np.isnan(X).any())


def observed_constant(X):
    """``X`` (float64, with its NaN) as a PyTensor constant for ``observed=``: PyMC
    imputes NaN in NumPy data, never in a tensor."""
    import pytensor.tensor as pt

    return pt.as_tensor_variable(np.asarray(X, dtype=np.float64))


def masked(value, logp_of: Callable):
    """Elementwise ``logp_of(value)`` with 0 (the factor 1) at the missing (NaN)
    entries; ``logp_of`` sees 0 there, so neither its value nor its gradient is NaN."""
    import pytensor.tensor as pt

    missing = pt.isnan(value)
    return pt.switch(missing, 0.0, logp_of(pt.switch(missing, 0.0, value)))


#: kind: the PyMC distribution (its name in the model graph: ``x ~ Normal``), its
#: parameters' names and a NumPy draw (float64) given the parameters
_KINDS = {
    "bernoulli": ("Bernoulli", ("p",),
                  lambda rng, p, size: rng.binomial(1, p, size=size).astype(np.float64)),
    "poisson": ("Poisson", ("mu",),
                lambda rng, mu, size: rng.poisson(mu, size=size).astype(np.float64)),
    "exponential": ("Exponential", ("lam",),
                    lambda rng, lam, size: rng.exponential(1.0 / lam, size=size)),
    "normal": ("Normal", ("mu", "sigma"),
               lambda rng, mu, sigma, size: rng.normal(mu, sigma, size=size)),
}


def observed(kind: str, name: str, params: list, X, dims: tuple[str, str]) -> None:
    """``x_nj ~ kind(params[n, j])`` on the entries of ``X`` (n, d) that are not NaN, as
    one elementwise float64 ``pm.CustomDist`` ``name`` with ``dims`` (drawn as ``kind`` in
    ``pm.model_to_graphviz``). ``kind``: "bernoulli", "poisson", "exponential" or
    "normal" (PyMC's log-densities); ``params``: its parameters, each (n, d)."""
    pm = import_pymc()

    dist, names, draw = _KINDS[kind]

    def logp(value, *theta):
        return masked(value, lambda v: pm.logp(
            getattr(pm, dist).dist(**dict(zip(names, theta, strict=True))), v))

    def random(*theta, rng=None, size=None):
        return draw(rng, *theta, size=size)

    pm.CustomDist(name, *params, logp=logp, random=random, dtype="float64",
                  observed=observed_constant(X), dims=dims, class_name=dist)


def check_whole(X: np.ndarray, who: str) -> None:
    """``ValueError`` if an observed (non-NaN) entry of X is not a whole number: a
    Poisson likelihood is only defined on counts (the point methods accept weights)."""
    values = X[~np.isnan(X)]
    if values.size and not np.array_equal(values, np.floor(values)):
        raise ValueError(
            f"{who}.model_ is the generative model of whole-number counts, but this fit's "
            "X has non-integer values (term weights, accepted by method='mle'/'map'). "
            "Round X to counts and refit to build model_."
        )
