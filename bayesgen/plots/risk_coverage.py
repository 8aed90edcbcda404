"""Risk-coverage curves of selective classification (answer the most confident rows,
abstain on the rest; Geifman and El-Yaniv 2017) and their plot.

A row's confidence is the smallest expected loss of its Bayes decision,
r(x) = min_j sum_i p(i | x) L[i, j] (0-1 loss: 1 - max_k p(k | x)); the reject rules
built on it are in :mod:`bayesgen.decide.reject`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesgen.plots.common import _axes
from bayesgen.utils.logspace import expected_loss


def risk_coverage_curve(y_index: np.ndarray, proba: np.ndarray,
                        loss: np.ndarray | None = None) -> dict:
    """Risk against coverage when answering the rows of smallest expected loss first.

    Parameters
    ----------
    y_index : ndarray of int, shape (n,)
        True class index of every row (into the columns of ``proba``).
    proba : ndarray of shape (n, K)
    loss : ndarray of shape (K, K), optional
        Loss matrix (0-1 loss, i.e. the error rate, when None).

    Returns
    -------
    dict
        ``coverage`` (m,) fractions of rows answered, ``risk`` (m,) mean realised loss
        of the answered rows, ``threshold`` (m,) the largest expected loss answered
        (one point per distinct expected loss, ties answered together), and ``aurc``,
        the area under the curve: the mean of the risk over the n prefixes (Geifman et
        al. 2019), at most the full-coverage risk for a useful ranking.
    """
    y_index = np.asarray(y_index)
    risk = expected_loss(proba, loss)
    decision = np.argmin(risk, axis=1)
    n = y_index.size
    best = risk[np.arange(n), decision]
    realised = _loss_matrix(loss, risk.shape[1])[y_index, decision]
    order = np.argsort(best, kind="stable")
    cum = np.cumsum(realised[order]) / np.arange(1, n + 1)
    sorted_best = best[order]
    last = np.flatnonzero(np.r_[sorted_best[1:] != sorted_best[:-1], True])
    return {"coverage": (last + 1) / n, "risk": cum[last], "threshold": sorted_best[last],
            "aurc": float(np.mean(cum))}


def _loss_matrix(loss: Any, n_classes: int) -> np.ndarray:
    """``loss`` as a float matrix; 0-1 loss when None."""
    return 1.0 - np.eye(n_classes) if loss is None else np.asarray(loss, dtype=float)


def _label_index(y_true: Any, classes: Any, n_columns: int) -> np.ndarray:
    y_true = np.asarray(y_true)
    classes = np.unique(y_true) if classes is None else np.asarray(classes)
    if classes.size != n_columns:
        raise ValueError(f"proba has {n_columns} columns but there are {classes.size} classes; "
                         "pass classes= in the column order of proba (e.g. estimator.classes_).")
    position = {c: k for k, c in enumerate(classes.tolist())}
    unknown = [v for v in dict.fromkeys(y_true.tolist()) if v not in position]
    if unknown:
        raise ValueError(f"y_true holds labels that are not in classes: {unknown[:5]}.")
    return np.array([position[v] for v in y_true.tolist()], dtype=np.intp)


def risk_coverage(y_true: Any, proba: Any, *, classes: Any = None, loss: Any = None, ax=None):
    """Risk-coverage plot: mean loss of the answered rows against the fraction answered.

    Parameters
    ----------
    y_true : array-like (n,)
    proba : array (n, K) or dict name -> array (n, K)
        Predicted probabilities (column order ``classes``); a dict compares models.
    classes : array-like (K,), optional
        Labels of the columns; default ``np.unique(y_true)``.
    loss : array (K, K), optional
        Loss matrix (``loss[i, j]``: truth i, decision j); the error rate when None.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
        One step curve per model (the rows answered in increasing expected loss), its
        area under the curve (AURC, :func:`risk_coverage_curve`) in the legend, and the
        risk of an oracle ranking (the errors abstained on first) as a dotted line of
        the first model.
    """
    sets = proba if isinstance(proba, dict) else {"model": proba}
    ax = _axes(ax)
    for i, (name, p) in enumerate(sets.items()):
        p = np.asarray(p, dtype=float)
        if p.ndim != 2 or p.shape[0] != np.asarray(y_true).shape[0]:
            raise ValueError(f"proba {name!r} must have shape (n_samples, n_classes); got "
                             f"{p.shape} for {np.asarray(y_true).shape[0]} labels.")
        y_index = _label_index(y_true, classes, p.shape[1])
        curve = risk_coverage_curve(y_index, p, loss)
        ax.step(curve["coverage"], curve["risk"], where="post", color=f"C{i}",
                label=f"{name} (AURC = {curve['aurc']:.3f})")
        if i == 0:  # the oracle: the same decisions, errors rejected first
            realised = np.sort(_loss_matrix(loss, p.shape[1])[
                y_index, np.argmin(expected_loss(p, loss), axis=1)])
            n = realised.size
            ax.plot(np.arange(1, n + 1) / n, np.cumsum(realised) / np.arange(1, n + 1),
                    ls=":", color="grey", label="oracle ranking")
    ax.set(xlim=(0, 1.01), xlabel="coverage (fraction of rows answered)",
           ylabel="risk (mean loss of answered rows)" if loss is not None
           else "risk (error rate of answered rows)",
           title="Risk-coverage (abstain on the least confident rows)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left", fontsize="small")
    return ax
