"""NUTS likelihood of LDA/QDA with missing entries, on the (pattern, class) groups.

For every group g (:mod:`.patterns`) with observed coordinates o, class k, weighted
count n_g, observed mean xbar_g and scatter S_g = R_g^T R_g (R_g from the eigen-
decomposition, computed once), the observed-data log-likelihood is, without its
constant -n_g |o| log(2 pi) / 2::

    -n_g/2 log|Sigma_oo| - 1/2 tr(Sigma_oo^-1 S_g) - n_g/2 r^T Sigma_oo^-1 r
      = -n_g sum_i log L_ii - 1/2 || L^-1 [R_g^T, sqrt(n_g) r] ||_F^2

with r = xbar_g - mu_{k,o} and L the Cholesky factor of Sigma_oo. Groups are batched
through the padded covariance D Sigma D + (I - D) (D = diag(o)): one batched Cholesky
factorisation and one batched triangular solve of shape (G, d, d + 1) per gradient, so
the cost grows with the number of groups (patterns x classes), not with the rows. Every
number of the data enters as a float array (the masks too), so the compile-once JAX
NUTS path (:mod:`bayesgen.inference.jax_nuts`) lifts it into an input: a refit with as many
groups reuses the compiled program.

New rows with missing entries (the unlabeled rows of a semi-supervised NUTS fit,
:mod:`bayesgen.semi.nuts`) enter through their Gaussian marginals
N(x_{n,o}; mu_{k,o}, Sigma_{k,oo}) per row and class (:func:`rows_loglik`).
"""

from __future__ import annotations

import numpy as np

from bayesgen.families.gaussian_stats import one_hot
from bayesgen.families.mvn import patterns as pat
from bayesgen.families.mvn.missing import patterns


def stats_loglik(family, params: dict, stats: dict):
    """The summed observed-data log-likelihood of the groups (module docstring), a
    scalar PyTensor expression of ``params["mu"]`` and ``params["cov"]``."""
    import pytensor.tensor as pt
    from pytensor.tensor.linalg import cholesky, solve_triangular

    groups = stats["groups"]
    n_classes = stats["count"].size
    G, d = groups["mean"].shape
    D = groups["obs"].astype(np.float64)
    onehot = one_hot(groups["cls"], 1.0, n_classes)
    R = pat.scatter_root(groups["scatter"])[0]  # R^T R = S
    n = groups["count"]
    cov = params["cov"]
    if family.tied:
        cov_g = pt.broadcast_to(cov, (G, d, d))
    else:
        cov_g = pt.tensordot(pt.as_tensor(onehot), cov, axes=[[1], [0]])
    pad = np.eye(d) * (1.0 - D)[:, None, :]
    Soo = cov_g * pt.as_tensor(D[:, :, None] * D[:, None, :]) + pt.as_tensor(pad)
    L = cholesky(Soo, lower=True)
    mu_g = pt.dot(pt.as_tensor(onehot), params["mu"])
    r = pt.as_tensor(D) * (pt.as_tensor(groups["mean"]) - mu_g) * pt.as_tensor(np.sqrt(n)[:, None])
    rhs = pt.concatenate([pt.as_tensor(np.swapaxes(R, -1, -2)), r[:, :, None]], axis=-1)
    sol = solve_triangular(L, rhs, lower=True, b_ndim=2)
    log_diag = pt.log(pt.diagonal(L, axis1=-2, axis2=-1)).sum(-1)
    return -pt.sum(pt.as_tensor(n) * log_diag) - 0.5 * pt.sum(sol**2)


def rows_loglik(family, params: dict, Z: np.ndarray, n_classes: int):
    """log N(z_{n,o}; mu_{k,o}, Sigma_{k,oo}) of every row and class as a PyTensor
    (m, K) expression, rows in the order of ``Z``; 0 for a row with nothing observed.

    Rows are grouped by missingness pattern (:func:`bayesgen.families.mvn.missing.
    patterns`); per pattern, the observed block of every class covariance is factorised
    once (batched over the classes) and all the pattern's rows are solved in one
    triangular solve: ``-1/2 [|o| log 2 pi + log|Sigma_oo| + ||L^-1 (x_o - mu_o)||^2]``.
    """
    import pytensor.tensor as pt
    from pytensor.tensor.linalg import cholesky, solve_triangular

    Z = np.asarray(Z, dtype=np.float64)
    mu, cov = params["mu"], params["cov"]
    blocks, order = [], []
    for rows, o in patterns(np.isnan(Z)):
        order.append(rows)
        if o.size == 0:  # nothing observed: likelihood 1 under every class
            blocks.append(pt.zeros((rows.size, n_classes)))
            continue
        Xo = pt.as_tensor(Z[np.ix_(rows, o)])  # (n_p, |o|)
        mu_o = mu[:, o]  # (K, |o|)
        diff = Xo[None, :, :] - mu_o[:, None, :]  # (K, n_p, |o|)
        cov_o = cov[o][:, o] if family.tied else cov[:, o][:, :, o]
        L = cholesky(pt.broadcast_to(cov_o, (n_classes, o.size, o.size)), lower=True)
        sol = solve_triangular(L, diff.transpose(0, 2, 1), lower=True, b_ndim=2)
        quad = (sol**2).sum(1)  # (K, n_p)
        logdet = 2.0 * pt.log(pt.diagonal(L, axis1=-2, axis2=-1)).sum(-1)  # (K,)
        block = -0.5 * (quad + logdet[:, None] + o.size * pat.LOG_2PI)
        blocks.append(block.T)
    stacked = pt.concatenate(blocks, axis=0)
    return stacked[np.argsort(np.concatenate(order))]
