"""The posterior mode and the Laplace approximation in the unconstrained space.

NUTS (:mod:`bayesgen.inference.jax_nuts`) starts at the mode and samples
x = W^-1 (z - mode), W W^T the inverse of the negative Hessian there. NumPy on the
host, given the compiled log density and gradient of the flattened unconstrained
vector; the Hessian is the central difference of the exact gradient (no second-order
program to compile).

Newton's method (:func:`newton_mode`)
    Steps solve with the negative Hessian A, its eigenvalues replaced by their absolute
    values (floored at :data:`EIGEN_FLOOR` times the largest), halved until the log
    density rises by at least 1e-4 of the predicted gain g^T A^-1 g (Armijo); stops
    when that gain falls below :data:`NEWTON_TOL`, no step rises, or after
    :data:`NEWTON_MAX_ITER` steps.

Difference steps
    Column j is (g(z + h_j e_j) - g(z - h_j e_j)) / (2 h_j), symmetrised (2 D gradients
    in one batched call), h_j = :data:`FD_REL` times the posterior sd of z_j
    (:data:`FD_FIRST` before one is known).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: Newton's method: at most this many steps; stop when the squared Newton decrement
#: falls below the tolerance (log-density units)
NEWTON_MAX_ITER = 100
NEWTON_TOL = 1e-10
#: eigenvalues of the negative Hessian floored at this fraction of the largest
EIGEN_FLOOR = 1e-12
#: difference step, as a fraction of the posterior standard deviation of the coordinate
FD_REL = 1e-3
#: difference step before a standard deviation is known
FD_FIRST = 1e-5


@dataclass(frozen=True)
class Laplace:
    """The mode and the whitening of a log density (flattened unconstrained space).

    Attributes
    ----------
    start : ndarray (D,)
        Where Newton's method started.
    mode : ndarray (D,)
        The mode (``start`` when no finite point was found).
    W : ndarray (D, D), or () for W = 1
        W W^T = A^-1, A the negative Hessian at the mode with its eigenvalues made
        positive (the Laplace covariance where the log density is concave); the
        identity when no finite point was found; the scalar 1 when no Hessian was
        formed (a caller's choice for large D).
    ok : bool
        The mode is finite and the negative Hessian there positive definite.
    iterations : int
        Newton steps taken.
    """

    start: np.ndarray
    mode: np.ndarray
    W: np.ndarray
    ok: bool
    iterations: int

    @property
    def cov(self) -> np.ndarray:
        """The Laplace covariance W W^T, (D, D)."""
        if self.W.ndim == 2:
            return self.W @ self.W.T
        return np.eye(self.mode.size) * float(self.W) ** 2


def hessian(grads: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """The Hessian (D, D) from the gradients ``grads`` (2 D, D) at z + h_j e_j (rows
    0..D-1) and z - h_j e_j (rows D..2D-1), ``steps`` = h (D,): central differences,
    symmetrised."""
    dim = steps.size
    H = (grads[:dim] - grads[dim:]).T / (2.0 * steps)[None, :]
    return 0.5 * (H + H.T)


def _metric(H: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eigen-decomposition of A = -H: (raw eigenvalues, eigenvalues made positive, V)."""
    lam, V = np.linalg.eigh(-H)
    floor = max(EIGEN_FLOOR * float(np.max(np.abs(lam))), np.finfo(float).tiny)
    return lam, np.maximum(np.abs(lam), floor), V


def newton_mode(values_and_grads: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                x0: np.ndarray) -> Laplace:
    """The mode of a log density from ``x0`` and its Laplace whitening (module
    docstring).

    Parameters
    ----------
    values_and_grads : callable
        ``X (2 D + 1, D) -> (log densities (2 D + 1,), gradients (2 D + 1, D))``, the
        log density at a batch of points (one compiled call per batch); non-finite
        values are allowed (outside the support), they are never stepped to. Each
        Newton step makes two calls: the gradients around the current point (the
        Hessian) and the log density at 2 D + 1 step lengths 1, 1/2, 1/4, ... at once
        (the line search).
    x0 : ndarray (D,)

    Returns
    -------
    Laplace
    """
    x0 = np.asarray(x0, dtype=np.float64)
    dim = x0.size

    def call(X):
        values, grads = values_and_grads(X)
        return np.asarray(values, dtype=np.float64), np.asarray(grads, dtype=np.float64)

    def around(x, steps):  # log density and gradient at x, Hessian at x
        values, grads = call(np.vstack([x + np.diag(steps), x - np.diag(steps), x]))
        return values[-1], grads[-1], hessian(grads[:-1], steps)

    lengths = 0.5 ** np.arange(2 * dim + 1)
    x = x0
    steps = np.full(dim, FD_FIRST)
    fx, g, H = around(x, steps)
    iterations = 0
    found = bool(np.isfinite(fx) and np.all(np.isfinite(g)) and np.all(np.isfinite(H)))
    while found:
        lam_raw, lam, V = _metric(H)
        sd = np.sqrt(np.einsum("ij,j,ij->i", V, 1.0 / lam, V))
        step = V @ ((V.T @ g) / lam)
        gain = float(g @ step)
        if not gain >= NEWTON_TOL or iterations >= NEWTON_MAX_ITER:
            break
        f_new, _ = call(x[None, :] + lengths[:, None] * step[None, :])
        rises = np.isfinite(f_new) & (f_new >= fx + 1e-4 * lengths * gain)
        if not rises.any():
            break  # no step raises the log density: as high as it gets
        x_new = x + lengths[np.argmax(rises)] * step
        steps = np.clip(FD_REL * sd, 1e-12, 1e-3)
        f_next, g_next, H_next = around(x_new, steps)
        if not (np.isfinite(f_next) and np.all(np.isfinite(g_next))
                and np.all(np.isfinite(H_next))):
            break
        x, fx, g, H = x_new, f_next, g_next, H_next
        iterations += 1
    if not found:
        return Laplace(x0, x0, np.eye(dim), False, iterations)
    return Laplace(x0, x, V / np.sqrt(lam)[None, :], bool(np.all(lam_raw > 0)), iterations)
