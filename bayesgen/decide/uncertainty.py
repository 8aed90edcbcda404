r"""Uncertainty decomposition: total = aleatoric + epistemic, per row.

For a fitted posterior (``method="conjugate"`` or ``"mcmc"``) with draws theta_s,
s = 1..S, and a row x, the label y and the parameters theta are jointly distributed as
p(y, theta | x, D) ∝ p(x, y | theta) p(theta | D): in a generative classifier the row
x itself is evidence about theta. The decomposition of the predictive entropy is
that of this joint (Houlsby et al. 2011, "Bayesian active learning by disagreement")::

    total      H[y | x, D]                 = H( p(y | x, D) )
    aleatoric  E_{theta | x, D} H[y | x, theta]  = sum_s w_s H( p(y | x, theta_s) )
    epistemic  I(y; theta | x, D)          = total - aleatoric

with the draws weighted by w_s ∝ p(x | theta_s) = sum_k p(x, y=k | theta_s) (self-
normalised importance weights from p(theta | D) to p(theta | x, D)). The weighted mean
sum_s w_s p(y | x, theta_s) is exactly the posterior predictive p(y | x, D) of
``predict_proba`` (the posterior mean of the joint normalised over classes), so the
three numbers describe the probabilities the estimator predicts. Entropies are in nats
(at most log K).

``total`` is the entropy of ``predict_proba``: for ``method="conjugate"`` the closed-form
posterior predictive (Rao-Blackwellised, no Monte Carlo error); for ``"mcmc"`` the
weighted mean of the draws (then epistemic >= 0 holds exactly, by the concavity of the
entropy). For ``"conjugate"`` the aleatoric term is the Monte Carlo estimate from the
i.i.d. draws, so epistemic = total - aleatoric carries its Monte Carlo error
(O(1/sqrt(S))) and can be slightly negative where it is near 0; it is not clipped,
so that total = aleatoric + epistemic holds to rounding in every row.

Point methods (``"mle"``, ``"map"``) have no posterior: their epistemic part is not
defined, and :func:`decompose_uncertainty` raises ``ValueError``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from scipy.special import entr

from bayesgen.inference import scoring
from bayesgen.utils.logspace import normalise, normalised_proba


class Decomposition(NamedTuple):
    """Per-row uncertainty (arrays of shape (n,), nats) and the predictive (n, K)."""

    total: np.ndarray
    aleatoric: np.ndarray
    epistemic: np.ndarray
    proba: np.ndarray


def entropy(proba: np.ndarray) -> np.ndarray:
    """Shannon entropy in nats of each row of ``proba`` (..., K): -sum_k p log p."""
    return entr(np.asarray(proba, dtype=float)).sum(axis=-1)


def predictive_proba(estimator, Xv: np.ndarray) -> np.ndarray:
    """``predict_proba`` of rows already validated (``estimator._check_X_predict``)."""
    scores = estimator._scores(Xv, full=False)
    return normalised_proba(scores, estimator.class_log_prior_, type(estimator).__name__,
                            overwrite=True)


def predictive_log_proba(estimator, Xv: np.ndarray) -> np.ndarray:
    """``predict_log_proba`` of rows already validated (``estimator._check_X_predict``)."""
    scores = estimator._scores(Xv, full=False)
    return normalise(scores, estimator.class_log_prior_, type(estimator).__name__,
                     advice=estimator._zero_likelihood_advice())


def _draw_indices(estimator, max_draws: int | None) -> np.ndarray | None:
    n_draws = estimator._log_pi_draws.shape[0]
    if max_draws is None or max_draws >= n_draws:
        return None
    if int(max_draws) != max_draws or max_draws < 1:
        raise ValueError(f"max_draws must be a positive integer or None; got {max_draws!r}.")
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


def _chunk_terms(lj: np.ndarray, log_pi: np.ndarray):
    """(aleatoric (m,), weighted mean p (m, K)) of one chunk of per-draw joints (S, m, K)."""
    E, Z, H, log_w = draw_terms(lj, log_pi)
    w = np.exp(log_w - log_w.max(axis=0))
    w /= w.sum(axis=0)
    aleatoric = (w * H).sum(axis=0)
    w /= Z
    mean = np.stack([(w * E[k]).sum(axis=0) for k in range(E.shape[0])], axis=1)
    return aleatoric, mean


def decompose(estimator, X: Any, *, max_draws: int | None = None) -> Decomposition:
    """Arrays of :func:`decompose_uncertainty` for rows X of a fitted posterior.

    Chunked over rows: memory is about
    :data:`bayesgen.inference.posterior.CHUNK_BUDGET` doubles whatever the number of rows.
    """
    estimator._check_posterior("decompose_uncertainty")
    return decompose_rows(estimator, estimator._check_X_predict(X), max_draws)


def decompose_rows(estimator, Xv: np.ndarray, max_draws: int | None = None) -> Decomposition:
    """:func:`decompose` of rows already validated (``estimator._check_X_predict``)."""
    estimator._check_posterior("decompose_uncertainty")
    draws = _draw_indices(estimator, max_draws)
    log_pi = estimator._log_pi_draws if draws is None else estimator._log_pi_draws[draws]
    n, K = Xv.shape[0], estimator.classes_.size
    aleatoric, mean = np.empty(n), np.empty((n, K))
    for rows, lj in scoring.iter_log_joint_draws(estimator, Xv, draws):
        with np.errstate(divide="ignore", invalid="ignore"):
            aleatoric[rows], mean[rows] = _chunk_terms(lj, log_pi)
    if estimator.method_ == "conjugate":
        proba = predictive_proba(estimator, Xv)  # the closed-form posterior predictive
    else:
        proba = mean
    total = entropy(proba)
    return Decomposition(total, aleatoric, total - aleatoric, proba)


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
        Use at most this many posterior draws, evenly spaced over the chains (cost is
        linear in the draws; ``None``: all of them).
    as_dataset : bool, default=True
        Return an ``xarray.Dataset`` (else a :class:`Decomposition` of NumPy arrays).

    Returns
    -------
    xarray.Dataset or Decomposition
        Variables ``total``, ``aleatoric``, ``epistemic`` (dims ``obs``, nats) and
        ``proba`` (dims ``obs``, ``class``: ``predict_proba``), coords ``obs`` (the
        DataFrame's index, else 0..n-1) and ``class`` (= ``classes_``), as the
        estimator's ``idata_`` names them. ``total = aleatoric + epistemic`` per row;
        formulas in :mod:`bayesgen.decide.uncertainty`.
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
         "proba": (("obs", "class"), out.proba)},
        coords={"obs": obs, "class": classes},
        attrs={"bayesgen_estimator": type(estimator).__name__,
               "bayesgen_method": estimator.method_},
    )
