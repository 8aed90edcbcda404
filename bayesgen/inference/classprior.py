"""The class prior: y ~ Categorical(pi), pi ~ Dirichlet(a).

Sufficient statistic: the weighted class counts N_k. With N = sum_k N_k,

- MLE:  pi_k = N_k / N
- MAP:  pi_k = (N_k + a_k - 1) / (N + sum_k a_k - K)   (the Dirichlet posterior mode)
- posterior: pi | y ~ Dirichlet(N + a)

A fixed class prior (the estimators' ``class_prior`` parameter) replaces all three: pi is
then known, the same in every method, constant over posterior draws and data (not a
random variable) in the PyMC models (:func:`pymc_pi`).
"""

from __future__ import annotations

import numpy as np

from bayesgen.utils.heavy import import_pymc


def mle(counts: np.ndarray) -> np.ndarray:
    """Maximum-likelihood class probabilities ``N_k / N``, shape (K,)."""
    return counts / counts.sum()


def map_estimate(counts: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Posterior mode of pi under Dirichlet(alpha): ``(N_k + a_k - 1) / (N + sum a - K)``.

    Raises ``ValueError`` where the mode is not in the simplex (a_k < 1 with N_k = 0
    makes the density unbounded at pi_k = 0).
    """
    numer = counts + (alpha - 1.0)  # (alpha - 1) first: exact for alpha = 1, tiny N_k
    if np.any(numer < 0):
        raise ValueError(
            "The MAP class prior needs N_k + class_alpha_k >= 1 for every class; with "
            "class_alpha < 1 a class with (nearly) no samples has its mode at the boundary. "
            "Use class_alpha >= 1 or method='conjugate'."
        )
    total = numer.sum()
    if total <= 0:
        raise ValueError("The MAP class prior is undefined: no samples and class_alpha=1.")
    return numer / total


def posterior(counts: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Dirichlet concentration of the posterior of pi: ``N + a``, shape (K,)."""
    return counts + alpha


def log_dirichlet(
    concentration: np.ndarray, size: int, rng: np.random.Generator
) -> np.ndarray:
    """Log of Dirichlet draws along the last axis, shape (size, *concentration.shape).

    Uses ``log G = log G' + log(U) / a`` with G' ~ Gamma(a + 1) (Marsaglia & Tsang's
    boost), which stays finite for small concentrations, then normalises with
    log-sum-exp.
    """
    from scipy.special import logsumexp

    a = np.asarray(concentration, dtype=np.float64)
    shape = (size, *a.shape)
    log_g = np.log(rng.standard_gamma(a + 1.0, size=shape)) + np.log(rng.uniform(size=shape)) / a
    return log_g - logsumexp(log_g, axis=-1, keepdims=True)


# ------------------------------------------------------------- fixed class prior
def log_density(log_pi: np.ndarray, alpha: np.ndarray) -> float:
    """log Dirichlet(pi; alpha) up to a constant: sum_k (alpha_k - 1) log pi_k (a term
    with alpha_k = 1 is 0, also at pi_k = 0)."""
    with np.errstate(invalid="ignore"):
        terms = np.where(alpha == 1.0, 0.0, (alpha - 1.0) * log_pi)
    return float(np.sum(terms))


def check_fixed(class_prior, n_classes: int) -> np.ndarray | None:
    """Validate the ``class_prior`` parameter: None, or K probabilities summing to 1.

    Parameters
    ----------
    class_prior : array-like of shape (K,) or None
        Fixed class probabilities in the order of ``classes_`` (sorted labels).
    n_classes : int
        K, the number of classes in the training labels.

    Returns
    -------
    ndarray of shape (K,) or None
        The probabilities as float64 (entries may be 0: that class is then never
        predicted).

    Raises
    ------
    ValueError
        Naming ``class_prior``: not numbers, wrong length, NaN/inf or negative entries,
        or a sum that differs from 1 by more than :data:`SUM_TOLERANCE`.
    """
    if class_prior is None:
        return None
    try:
        p = np.asarray(class_prior, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"class_prior must be {n_classes} probabilities (one per class, in the order "
            f"of classes_); got {class_prior!r}."
        ) from None
    if p.shape != (n_classes,):
        raise ValueError(
            f"class_prior must have one probability per class: shape ({n_classes},) in the "
            f"order of classes_ (sorted labels); got shape {p.shape}."
        )
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(
            f"class_prior must hold finite probabilities >= 0; got {p.tolist()}."
        )
    if abs(p.sum() - 1.0) > SUM_TOLERANCE:
        raise ValueError(
            f"class_prior must sum to 1 (within {SUM_TOLERANCE:g}); it sums to "
            f"{p.sum():.12g}. Divide it by its sum, e.g. class_prior=p / p.sum()."
        )
    return p


#: largest |sum(class_prior) - 1| accepted
SUM_TOLERANCE = 1e-8


def random_names(fit) -> list[str]:
    """``["pi"]`` when pi is a parameter (posterior summaries, convergence checks,
    trace plots), ``[]`` when ``class_prior`` fixes it (``idata_`` still holds the
    constant ``pi``)."""
    return ["pi"] if fit.fixed_pi is None else []


def point(method: str, counts: np.ndarray, alpha: np.ndarray,
          fixed: np.ndarray | None) -> np.ndarray:
    """Point estimate of pi for ``method`` "mle" or "map"; the fixed prior when given
    (then neither estimated nor smoothed)."""
    if fixed is not None:
        return fixed
    return mle(counts) if method == "mle" else map_estimate(counts, alpha)


def log_point(method: str, counts: np.ndarray, alpha: np.ndarray,
              fixed: np.ndarray | None) -> np.ndarray:
    """log of :func:`point`, computed as ``log(numerator) - log(total)``: finite for a
    class whose probability underflows float64 (weights 1e-300 against 1e300 give
    pi_k ~ 1e-600, whose log is -1381.6, not -inf). -inf only where pi_k is exactly 0."""
    point(method, counts, alpha, fixed)  # the checks (a MAP mode in the simplex)
    if fixed is not None:
        numer = np.asarray(fixed, dtype=np.float64)
    else:
        numer = counts if method == "mle" else counts + (alpha - 1.0)
    with np.errstate(divide="ignore"):
        return np.log(numer) - np.log(numer.sum())


def mean(log_pi: np.ndarray, fixed: np.ndarray | None) -> np.ndarray:
    """Posterior mean of pi from draws of log pi (S, K); exactly ``fixed`` when given."""
    return np.exp(log_pi).mean(axis=0) if fixed is None else fixed


def log_draws(counts: np.ndarray, alpha: np.ndarray, size: int, rng: np.random.Generator,
              fixed: np.ndarray | None = None) -> np.ndarray:
    """``size`` i.i.d. draws of log pi from its posterior Dirichlet(N + a), (size, K),
    or log ``fixed`` repeated when the class prior is fixed."""
    if fixed is not None:
        return log_constant(fixed, size)
    return log_dirichlet(posterior(counts, alpha), size, rng)


def log_constant(fixed: np.ndarray, size: int) -> np.ndarray:
    """``size`` identical "draws" of log pi, shape (size, K): the fixed prior as a
    posterior that does not move (-inf where pi_k = 0)."""
    with np.errstate(divide="ignore"):
        return np.broadcast_to(np.log(fixed), (size, fixed.size)).copy()


def pymc_pi(fit, *, data: bool = False):
    """pi in the current PyMC model: ``pi ~ Dirichlet(class_alpha_)`` (dims ``class``),
    or with a fixed ``class_prior`` the deterministic ``pi`` equal to it, not a random
    variable (``data=True``: through ``pm.Data("class_prior")``, so that ``model_``
    shows it as data)."""
    pm = import_pymc()
    import pytensor.tensor as pt

    fixed = fit.fixed_pi
    if fixed is None:
        return pm.Dirichlet("pi", a=fit.class_alpha, dims="class")
    value = pm.Data("class_prior", fixed, dims="class") if data else pt.as_tensor(fixed)
    return pm.Deterministic("pi", value, dims="class")


def pymc_loglik(fit, pi):
    """The statistics form of the labels' log-likelihood, sum_k N_k log pi_k; 0 (a
    constant that does not change the posterior of the other parameters, and avoids
    log 0 for a class with prior 0) when pi is fixed."""
    import pytensor.tensor as pt

    if fit.fixed_pi is not None:
        return pt.constant(0.0)
    return pt.sum(fit.class_count * pt.log(pi))


def var_names(fit) -> list[str]:
    """The random variables of a fit's posterior: ``pi`` (unless a fixed
    ``class_prior`` makes it known) and the family's parameters."""
    return [*random_names(fit), *fit.family.param_dims]
