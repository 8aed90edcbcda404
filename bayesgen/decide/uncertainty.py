"""Uncertainty decomposition: total = aleatoric + epistemic, per row.

For a fitted posterior and a row x, y and theta are jointly distributed as
p(y, theta | x, D) ∝ p(x, y | theta) p(theta | D) (the row is evidence about theta);
the decomposition of the predictive entropy (Houlsby et al. 2011), in nats::

    total      H[y | x, D]                        = H( p(y | x, D) )
    aleatoric  E_{theta | x, D} H[y | x, theta]
    epistemic  I(y; theta | x, D)                 = total - aleatoric

**Conjugate fits: exact draws, no weights.** p(theta | x, D) = sum_k p(y=k | x, D)
p(theta | D, (x, y=k)), each term the fit's posterior updated with the row (x, k)::

    aleatoric = sum_k p(y=k | x, D) mean_s H( p(y | x, theta_s^(k)) ),
    theta_s^(k) i.i.d. from p(theta | D, (x, y=k)),  s = 1..S',

S' = min(draws of the fit, :data:`EXACT_DRAWS`) (or ``max_draws``), with common random
numbers for every row; ``ess`` reports S'. Classes below 1e-12 probability are left
out. epistemic is not clipped (it can be slightly negative near 0), so total =
aleatoric + epistemic to rounding.

**Where weights remain** (``method="mcmc"``, fits by data augmentation, rows whose
missing entries need augmentation, rows beyond the frame's float range), the draws of
p(theta | D) get self-normalised weights w_s ∝ p(x | theta_s)::

    aleatoric = sum_s w_s H( p(y | x, theta_s) ),

and for MCMC ``total`` is the entropy of sum_s w_s p(y | x, theta_s) (``predict_proba``
there). The Kish size ``ess`` = (sum_s w_s)^2 / sum_s w_s^2 is returned, and a
:class:`bayesgen.DataWarning` is issued when it is below :data:`ESS_WARN` (or a tenth
of the draws, below 1,000 draws) for some row. Point methods raise ``ValueError``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from scipy.special import entr

from bayesgen.data import sparse
from bayesgen.inference import conjugate, posterior, scoring, statistics
from bayesgen.utils.logspace import normalise, normalised_proba
from bayesgen.utils.random import rng_from

#: Below this Kish effective sample size of a row's importance weights (or a tenth of
#: the draws, when there are fewer than 1,000), :func:`decompose` warns
#: (:class:`bayesgen.DataWarning`).
ESS_WARN = 100

#: Draws per class of the exact conjugate decomposition (``max_draws`` overrides it).
EXACT_DRAWS = 1000

#: A class whose predictive probability is below this is left out of the exact
#: aleatoric term (its contribution is below this times log K).
NEGLIGIBLE = 1e-12


class Decomposition(NamedTuple):
    """Per-row uncertainty (arrays of shape (n,), nats), the predictive (n, K) and the
    effective number of draws behind each row's aleatoric term (n,): the i.i.d. draws
    of the exact conjugate decomposition, or the Kish size of the importance weights."""

    total: np.ndarray
    aleatoric: np.ndarray
    epistemic: np.ndarray
    proba: np.ndarray
    ess: np.ndarray


def entropy(proba: np.ndarray) -> np.ndarray:
    """Shannon entropy in nats of each row of ``proba`` (..., K): -sum_k p log p."""
    return entr(np.asarray(proba, dtype=float)).sum(axis=-1)


def predictive_proba(estimator, Xv: np.ndarray) -> np.ndarray:
    """``predict_proba`` of rows already validated
    (:func:`bayesgen.inference.statistics.validate_predict`)."""
    fit = estimator.fitted_
    scores = scoring.scores(fit, Xv, full=False)
    return normalised_proba(scores, fit.class_log_prior, fit.who, overwrite=True)


def predictive_log_proba(estimator, Xv: np.ndarray) -> np.ndarray:
    """``predict_log_proba`` of rows already validated
    (:func:`bayesgen.inference.statistics.validate_predict`)."""
    return normalise_joint(estimator, scoring.scores(estimator.fitted_, Xv, full=False))


def normalise_joint(estimator, log_joint: np.ndarray) -> np.ndarray:
    """log p(y=k | x) of joint (or discriminant) log scores (n, K), with the advice of
    :func:`bayesgen.inference.scoring.zero_likelihood_advice` for rows of zero
    likelihood under every class."""
    fit = estimator.fitted_
    advice = scoring.zero_likelihood_advice(fit.method, getattr(estimator, "alpha", None))
    return normalise(log_joint, fit.class_log_prior, fit.who, advice=advice)


def _check_max_draws(max_draws: int) -> None:
    if int(max_draws) != max_draws or max_draws < 1:
        raise ValueError(f"max_draws must be a positive integer or None; got {max_draws!r}.")


def _draw_indices(estimator, max_draws: int | None) -> np.ndarray | None:
    n_draws = estimator.fitted_.log_pi_draws.shape[0]
    if max_draws is None or max_draws >= n_draws:
        return None
    _check_max_draws(max_draws)
    return np.unique(np.linspace(0, n_draws - 1, int(max_draws)).round().astype(int))


class DrawTerms(NamedTuple):
    """Per-draw terms of one chunk of m rows under S draws (see :func:`draw_terms`)."""

    E: np.ndarray  #: (K, S, m) unnormalised class probabilities; p(y=k | x, theta_s) = E_k / Z
    Z: np.ndarray  #: (S, m)
    H: np.ndarray  #: (S, m) entropy H(p(y | x, theta_s)), nats
    log_w: np.ndarray  #: (S, m) log p(x | theta_s) + a per-row constant (-inf: impossible)


def draw_terms(lj: np.ndarray, log_pi: np.ndarray) -> DrawTerms:
    """Per-draw class probabilities, entropies and log weights of per-draw joints (S, m, K).

    Works on the classes as K contiguous (S, m) slabs: NumPy reduces a short last axis
    about ten times slower than it adds slabs. A draw under which a row is impossible
    (every class -inf) gets the class probabilities pi_s and log weight -inf; a row
    impossible under every draw gets equal weights (log weight 0 for every draw).
    """
    D = np.moveaxis(lj, 2, 0).copy()  # (K, S, m)
    top = D.max(axis=0)  # (S, m)
    impossible = ~np.isfinite(top)
    if impossible.any():  # a draw under which the row is impossible: its pi, weight 0
        fill = np.broadcast_to(log_pi.T[:, :, None], D.shape)
        D[:, impossible] = fill[:, impossible]
        top = D.max(axis=0)
    D -= top
    # exp(-800) is 0.0: a floor keeps 0 * log 0 at 0 (classes impossible under a draw)
    np.maximum(D, -800.0, out=D)
    E = np.exp(D)
    Z = E.sum(axis=0)  # (S, m); p_k = E_k / Z
    np.multiply(E, D, out=D)  # E_k D_k
    # H(p) = log Z - sum_k p_k D_k, D_k = log E_k
    H = np.log(Z) - D.sum(axis=0) / Z
    log_w = np.where(impossible, -np.inf, top + np.log(Z))  # log p(x | theta_s) + const
    every = ~np.isfinite(log_w).any(axis=0)  # impossible under every draw: equal weights
    if every.any():
        log_w[:, every] = 0.0
    return DrawTerms(E, Z, H, log_w)


def _weights(log_w: np.ndarray) -> np.ndarray:
    """exp(log_w) normalised over axis 0 (the draws); equal weights where all are -inf."""
    top = log_w.max(axis=0)
    top = np.where(np.isfinite(top), top, 0.0)
    w = np.exp(log_w - top)
    total = w.sum(axis=0)
    empty = total <= 0
    if np.any(empty):
        w[..., empty] = 1.0
        total = np.where(empty, w.shape[0], total)
    return w / total


def _chunk_terms(lj: np.ndarray, log_pi: np.ndarray):
    """(aleatoric (m,), weighted mean p (m, K), Kish ESS (m,)) of one chunk of per-draw
    joints (S, m, K), the draws weighted by w_s ∝ p(x | theta_s)."""
    E, Z, H, log_w = draw_terms(lj, log_pi)
    w = _weights(log_w)
    aleatoric = (w * H).sum(axis=0)
    ess = 1.0 / np.square(w).sum(axis=0)
    w /= Z
    mean = np.stack([(w * E[k]).sum(axis=0) for k in range(E.shape[0])], axis=1)
    return aleatoric, mean, ess


def decompose(estimator, X: Any, *, max_draws: int | None = None) -> Decomposition:
    """Arrays of :func:`decompose_uncertainty` for rows X of a fitted posterior.

    Chunked over rows: memory is about
    :data:`bayesgen.inference.posterior.CHUNK_BUDGET` doubles whatever the number of rows.
    """
    posterior.check_posterior(estimator, "decompose_uncertainty")
    return decompose_rows(estimator, statistics.validate_predict(estimator, X), max_draws)


def decompose_rows(estimator, Xv: np.ndarray, max_draws: int | None = None, *,
                   exact: bool = True, warn_ess: bool = True) -> Decomposition:
    """:func:`decompose` of rows already validated
    (:func:`bayesgen.inference.statistics.validate_predict`).

    ``exact=False``: weight the fit's draws for every row, also of a conjugate fit
    (what BALD ranks pools with, :mod:`bayesgen.decide.active`: one pass over the
    draws for all rows). ``warn_ess``: warn about a low effective sample size.
    """
    posterior.check_posterior(estimator, "decompose_uncertainty")
    fit = estimator.fitted_
    draws = _draw_indices(estimator, max_draws)
    n, K = Xv.shape[0], fit.classes.size
    aleatoric, ess = np.full(n, np.nan), np.full(n, np.nan)
    weighted = np.ones(n, dtype=bool)
    if exact and conjugate.exact_given_row(fit):
        proba = predictive_proba(estimator, Xv)  # the closed-form posterior predictive
        size = _exact_size(estimator, max_draws)
        weighted = _exact_aleatoric(estimator, Xv, proba, size, aleatoric)
        ess[~weighted] = size
    if weighted.any():
        rows = np.flatnonzero(weighted)
        sub = Xv if rows.size == n else Xv[rows]
        log_pi = fit.log_pi_draws if draws is None else fit.log_pi_draws[draws]
        mean = np.empty((rows.size, K))
        alea, w_ess = np.empty(rows.size), np.empty(rows.size)
        for chunk, lj in scoring.iter_log_joint_draws(fit, sub, draws):
            with np.errstate(divide="ignore", invalid="ignore"):
                alea[chunk], mean[chunk], w_ess[chunk] = _chunk_terms(lj, log_pi)
        aleatoric[rows], ess[rows] = alea, w_ess
        if estimator.method_ != "conjugate":
            proba = mean  # MCMC's predict_proba: the weighted mean of the draws
        elif rows.size == n:
            proba = predictive_proba(estimator, Xv)
        if warn_ess:
            _warn_low_ess(estimator, w_ess, log_pi.shape[0])
    total = entropy(proba)
    return Decomposition(total, aleatoric, total - aleatoric, proba, ess)


def _exact_size(estimator, max_draws: int | None) -> int:
    """Draws per class of the exact decomposition: ``max_draws`` (validated like
    :func:`_draw_indices`), else min(draws of the fit, :data:`EXACT_DRAWS`)."""
    n_draws = estimator.fitted_.log_pi_draws.shape[0]
    if max_draws is not None:
        _check_max_draws(max_draws)
    return int(min(n_draws, EXACT_DRAWS if max_draws is None else max_draws))


def _exact_aleatoric(estimator, Xv: Any, proba: np.ndarray, size: int,
                     out: np.ndarray) -> np.ndarray:
    """The exact conjugate aleatoric term of every row that has one, written into
    ``out`` (module docstring); returns the mask of the rows left to the weights (far
    rows, rows whose missing entries need data augmentation)."""
    fit = estimator.fitted_
    Z, _, near = scoring.split_rows(fit, Xv)
    family = fit.family
    seed = int(rng_from(estimator.random_state).integers(2**63))
    left = ~near
    dense = not sparse.is_sparse(Z)
    if not dense:
        Z = Z.tocsr()
    for i in np.flatnonzero(near):
        row = Z[i:i + 1]
        value = 0.0
        for k in np.flatnonzero(proba[i] >= NEGLIGIBLE):
            draws = conjugate.draws_given_row(fit, row, int(k), size, seed)
            if draws is None:  # the row's missing entries need data augmentation
                left[i] = True
                break
            log_pi, params = draws
            lj = family.log_lik(row, params) + log_pi[:, None, :]  # (S, 1, K), internal
            with np.errstate(divide="ignore", invalid="ignore"):
                H = draw_terms(lj, log_pi).H[:, 0]
            value += proba[i, k] * H.mean()
        if not left[i]:
            out[i] = value
    return left


def _warn_low_ess(estimator, ess: np.ndarray, n_draws: int) -> None:
    """:class:`bayesgen.DataWarning` when some row's Kish ESS is below the threshold
    (:data:`ESS_WARN`, or a tenth of the draws when fewer than 1,000)."""
    threshold = min(ESS_WARN, 0.1 * n_draws)
    low = ess < threshold
    if not low.any():
        return
    from bayesgen.exceptions import DataWarning, warn

    how = ("the posterior is sampled by MCMC" if estimator.method_ == "mcmc" else
           "the posterior has no closed form for these rows (data augmentation, "
           "unlabeled rows or far rows)")
    warn(
        f"{type(estimator).__name__}: the uncertainty decomposition weights the posterior "
        f"draws by p(x | theta) because {how}; for {int(low.sum())} of {ess.size} rows "
        f"the weights' effective sample size is below {threshold:g} (smallest "
        f"{float(ess.min()):.3g} of {n_draws} draws), so their aleatoric and epistemic "
        "parts rest on a few draws (rows far from the training data). See the 'ess' "
        "variable; method='conjugate' decomposes exactly where the posterior is conjugate.",
        DataWarning,
    )


def decompose_uncertainty(estimator, X: Any, *, max_draws: int | None = None,
                          as_dataset: bool = True):
    """Total, aleatoric and epistemic uncertainty of the predicted label, per row.

    Parameters
    ----------
    estimator : fitted bayesgen classifier
        With a posterior (``method_`` ``"conjugate"`` or ``"mcmc"``); point methods
        raise ``ValueError``.
    X : array-like or DataFrame of shape (n, d)
        Rows (missing entries allowed where the estimator allows them).
    max_draws : int, optional
        Use at most this many posterior draws: evenly spaced over the chains where the
        draws are weighted (``None``: all of them), draws per class of the exact
        conjugate decomposition (``None``: :data:`EXACT_DRAWS`). Cost is linear in the
        draws.
    as_dataset : bool, default=True
        Return an ``xarray.Dataset`` (else a :class:`Decomposition` of NumPy arrays).

    Returns
    -------
    xarray.Dataset or Decomposition
        Variables ``total``, ``aleatoric``, ``epistemic`` (dims ``obs``, nats),
        ``proba`` (dims ``obs``, ``class``: ``predict_proba``) and ``ess`` (dims
        ``obs``: the i.i.d. draws per class of an exact conjugate decomposition, else
        the Kish effective sample size of the row's importance weights), coords ``obs`` (the
        DataFrame's index, else 0..n-1) and ``class`` (= ``classes_``), as the
        estimator's ``idata_`` names them. ``total = aleatoric + epistemic`` per row;
        formulas in :mod:`bayesgen.decide.uncertainty`.

    Warns
    -----
    bayesgen.DataWarning
        Where the draws are weighted (MCMC, data augmentation, far rows) and some row's
        effective sample size is below :data:`ESS_WARN`.
    """
    out = decompose(estimator, X, max_draws=max_draws)
    if not as_dataset:
        return out
    import xarray as xr

    index = getattr(X, "index", None)
    obs = np.asarray(index) if index is not None and len(index) == out.total.size \
        else np.arange(out.total.size)
    classes = [c.item() if isinstance(c, np.generic) else c for c in estimator.classes_]
    units = {"units": "nats"}
    return xr.Dataset(
        {"total": ("obs", out.total, units), "aleatoric": ("obs", out.aleatoric, units),
         "epistemic": ("obs", out.epistemic, units),
         "proba": (("obs", "class"), out.proba),
         "ess": ("obs", out.ess, {"long_name": "effective number of posterior draws"})},
        coords={"obs": obs, "class": classes},
        attrs={"bayesgen_estimator": type(estimator).__name__,
               "bayesgen_method": estimator.method_},
    )
