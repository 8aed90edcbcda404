"""PyMC hooks, coordinates and training log-likelihood of
:class:`bayesgen.families.mixed.family.MixedFamily` (MixedNB): every part adds its
variables under its prefix with renamed dims (``gaussian0_mu``, observed
``gaussian0_x``, a kernel part's ``kernel1_x_loglik``); there is no single ``x``. The
pointwise log-likelihood (:func:`train_log_lik`) sums the parts' own (a kernel part's
leave-one-out terms, the others' ``log_lik`` at each row's class)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from bayesgen.data import sparse

_BUDGET = 10_000_000  # values of a part's log_lik block in train_log_lik (~80 MB)


def rename(prefix: str, dim: str) -> str:
    """A part's dim in the composite: ``class`` is shared, every other dim is prefixed."""
    return dim if dim == "class" else f"{prefix}_{dim}"


def part_hooks(family, params: dict | None = None, dims: dict | None = None,
               prefix: str = "") -> Iterator[tuple[dict, dict | None, str, dict]]:
    """Per part: ``(part, its params or None, prefix + "{part prefix}_", its dims)``.

    ``dims`` are the composite's (default ``family.param_dims``); a part gets the
    entries of its own parameters under their unprefixed names.
    """
    dims = dims or family.param_dims
    parts = family.resolved_parts()
    subs = family.split(params) if params is not None else [None] * len(parts)
    for part, sub in zip(parts, subs, strict=True):
        pre = part["prefix"]
        part_dims = {key: dims[f"{pre}_{key}"] for key in part["family"].param_dims}
        yield part, sub, f"{prefix}{pre}_", part_dims


def pymc_params(family, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
    """Every part's prior in the current model, variables named ``{part prefix}_{name}``
    (``gaussian0_mu``, dims ``("class", "gaussian0_feature")``); returns the namespaced
    params."""
    return family.namespaced(
        [
            part["family"].pymc_params(pr, prefix=pre, dims=part_dims)
            for (part, _, pre, part_dims), pr in zip(
                part_hooks(family, None, dims, prefix), prior["parts"], strict=True
            )
        ]
    )


def observed(family, params: dict, X, y, *, prefix: str = "",
             dims: dict | None = None) -> None:
    """Each part observes its column slice of X given the same ``y``, under its own name
    (``gaussian0_x``, a kernel part's ``kernel1_x_loglik`` potential)."""
    X = np.asarray(X)
    for part, sub, pre, part_dims in part_hooks(family, params, dims, prefix):
        part["family"].pymc_observed(sub, part_columns(X, part), y, prefix=pre, dims=part_dims)


def stats_loglik(family, params: dict, stats: dict):
    """Sum of the parts' statistics log-likelihoods (a PyTensor scalar)."""
    return sum(
        part["family"].pymc_stats_loglik(sub, s)
        for (part, sub, _, _), s in zip(part_hooks(family, params), stats["parts"], strict=True)
    )


def fixed_params(family, stats: dict) -> dict:
    """Namespaced non-random params of the parts that have them (kernel parts)."""
    return family.namespaced(
        [
            q["family"].fixed_params(s) if q["family"].capabilities.fixed_params else {}
            for q, s in zip(family.resolved_parts(), stats["parts"], strict=True)
        ]
    )


def coords(family, dims: dict | None = None) -> dict[str, list]:
    """Coordinates of the renamed dims: ``{prefix_feature: column names}`` for every part,
    plus each part's own ``coords(dims)`` given its renamed dims (e.g.
    ``categorical2_category``), named as in ``param_dims``."""
    out: dict[str, list] = {}
    for part, _, _, part_dims in part_hooks(family, None, dims):
        if part["family"].capabilities.coords:
            out.update(part["family"].coords(dims=part_dims))
        out.pop("class", None)
        out[f"{part['prefix']}_feature"] = family.part_features(part)
    return out


def train_log_lik(family, X: np.ndarray, y: np.ndarray, params: dict) -> np.ndarray:
    """log p(x_n | y_n, theta) of the training rows, (..., n): the sum over parts of their
    ``train_log_lik`` or, for parts without one, :func:`log_lik_at_class`."""
    y = np.asarray(y, dtype=np.intp)
    total = None
    for part, sub in zip(family.resolved_parts(), family.split(params), strict=True):
        fam, Xp = part["family"], part_columns(X, part)
        if fam.capabilities.train_log_lik:
            term = fam.train_log_lik(Xp, y, sub)
        else:
            term = log_lik_at_class(fam, Xp, y, sub)
        total = term if total is None else total + term
    return total


def log_lik_at_class(family, X: np.ndarray, y: np.ndarray, params: dict) -> np.ndarray:
    """``family.log_lik(X, params)[..., n, y_n]``, (..., n), rows in blocks of at most
    ``_BUDGET`` values of log_lik's output (one row first, for the leading draw dims)."""
    first = family.log_lik(X[:1], params, full=True)
    lead, n_classes = first.shape[:-2], first.shape[-1]
    out = np.empty((*lead, X.shape[0]))
    step = max(1, _BUDGET // max(1, int(np.prod(lead)) * n_classes))
    for start in range(0, X.shape[0], step):
        rows = np.arange(start, min(start + step, X.shape[0]))
        block = family.log_lik(X[rows], params, full=True)
        out[..., rows] = block[..., np.arange(rows.size), y[rows]]
    return out


def part_columns(X, part: dict):
    """A part's columns of X: sparse X stays sparse for a part whose family takes it
    (multinomial, Poisson, Bernoulli), and is densified on the columns of the others."""
    return sparse.columns(X, part["columns"], dense=not part["family"].capabilities.sparse)
