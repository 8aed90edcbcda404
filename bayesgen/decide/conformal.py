"""Conformal prediction sets of a fitted classifier.

A prediction set C(x) has finite-sample marginal coverage P(y in C(x)) >= 1 - alpha
over exchangeable calibration and test rows; ``confidence_level`` is 1 - alpha
(MAPIE's name). Nonconformity scores from p = ``predict_proba``:

- ``"lac"`` (Sadinle et al. 2019): s(x, k) = 1 - p_k(x);
- ``"aps"`` (Romano et al. 2020, non-randomised): s(x, k) = sum of p_j(x) over the
  classes j with p_j(x) >= p_k(x) (k included).

With calibration scores s_1..s_n the threshold q is the ceil((n + 1)(1 - alpha))-th
smallest s_i (+inf past n), and C(x) = {k : s(x, k) <= q}; scores are computed in log
space (:func:`nonconformity`). ``randomize=True`` uses smoothed p-values (Vovk et al.
2005), U ~ Uniform(0, 1) per (row, class)::

    p(x, k) = (#{i : s_i > s(x, k)} + U (#{i : s_i = s(x, k)} + 1)) / (n + 1),

C(x) = {k : p(x, k) > alpha}: coverage exactly 1 - alpha in expectation. Mondrian sets
take one threshold per class, so the coverage holds within every class.

Calibration scores:

- ``"split"`` (Lei et al. 2018): rows held out of the fit; coverage >= 1 - alpha in
  finite samples. Every estimator and method.
- ``"loo"``: the training rows scored by the exact leave-one-out predictive of a
  conjugate posterior (:func:`bayesgen.inference.exact_loo.loo_log_joint`), the test
  rows by the full posterior: the jackknife set of Barber et al. (2021), coverage
  1 - alpha up to O(1/n) for a stable fit. Needs ``method="conjugate"`` and a family
  with an exact leave-one-out.
- ``"jackknife+"`` (Barber et al. 2021; Romano, Sesia and Candes 2020, CV+): every
  training row i and every test row are scored by the posterior without row i
  (:func:`bayesgen.inference.exact_loo.loo_log_joint_at`, the refit's posterior)::

      k in C(x)  iff  #{i : R_i < s_i(x, k)} < (1 - alpha)(n + 1)

  with R_i = s_i(x_i, y_i): coverage >= 1 - 2 alpha in finite samples (Barber et al.
  2021, thm. 1), about 1 - alpha in practice (``validation/``). ``randomize=True``
  smooths the count as above; ``mondrian=True`` compares with class k's rows only.
  Cost: the family's hook, O(n m d) for naive Bayes (O(n m K d) for LDA), test rows in
  chunks of at most :data:`JACKKNIFE_BLOCK` / (n K) rows. Needs what ``"loo"`` needs.

A weighted row leaves the posterior with its whole weight and counts once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesgen.decide.uncertainty import normalise_joint, predictive_log_proba
from bayesgen.inference import exact_loo, statistics
from bayesgen.utils.deprecation import DEFAULT_CONFIDENCE_LEVEL, DEPRECATED, given, renamed
from bayesgen.utils.random import rng_from

SCORES = ("lac", "aps")
CALIBRATIONS = ("split", "loo", "jackknife+")
#: scores (training rows x test rows x classes) per chunk of test rows of jackknife+
JACKKNIFE_BLOCK = 2**21


def nonconformity(log_proba: np.ndarray, score: str = "lac") -> np.ndarray:
    """Nonconformity of every class of every row, (n, K), from log probabilities (n, K).

    ``"lac"``: -log p_k, an increasing function of 1 - p_k. ``"aps"``: -log of the
    mass of the classes strictly less probable than k (ties count as more probable, so
    the non-randomised set is conservative), an increasing function of the APS score
    sum_j p_j [p_j >= p_k] = 1 - that mass; +inf for the least probable class. Both
    give the sets of the scores in the module docstring, but are computed in log space:
    where p_k underflows ``1 - p_k`` to 1.0 (a confident model wrong on a calibration
    row) the scores still differ, so thresholds do not collapse to "every class".
    """
    _check_choice(score, SCORES, "score")
    log_proba = np.asarray(log_proba, dtype=float)
    if score == "lac":
        return -log_proba
    order = np.argsort(-log_proba, axis=1, kind="stable")
    lp = np.take_along_axis(log_proba, order, axis=1)
    n = lp.shape[0]
    # at_or_below[:, j] = log sum of the sorted p from position j to the end
    at_or_below = np.logaddexp.accumulate(lp[:, ::-1], axis=1)[:, ::-1]
    below = np.concatenate([at_or_below[:, 1:], np.full((n, 1), -np.inf)], axis=1)
    # ties: the mass below the last class of a run of equal probabilities
    below = np.take_along_axis(below, _tie_block_end(lp), axis=1)
    out = np.empty_like(log_proba)
    np.put_along_axis(out, order, -below, axis=1)
    return out


def _tie_block_end(sorted_p: np.ndarray) -> np.ndarray:
    """Index of the last column of each run of equal values in rows sorted descending."""
    n, K = sorted_p.shape
    end = np.broadcast_to(np.arange(K), (n, K)).copy()
    for j in range(K - 2, -1, -1):
        same = sorted_p[:, j] == sorted_p[:, j + 1]
        end[same, j] = end[same, j + 1]
    return end


def conformal_quantile(scores: np.ndarray, alpha: float) -> float:
    """The ceil((n + 1)(1 - alpha))-th smallest of n calibration scores; +inf when that
    rank exceeds n (too few rows for this alpha: the set is every class)."""
    scores = np.asarray(scores, dtype=float)
    n = scores.size
    rank = int(np.ceil((n + 1) * (1.0 - alpha) - 1e-12))
    if rank > n:
        return np.inf
    return float(np.partition(scores, rank - 1)[rank - 1]) if rank >= 1 else -np.inf


def thresholds(cal_scores: np.ndarray, y_index: np.ndarray, n_classes: int, alpha: float,
               mondrian: bool = False) -> np.ndarray:
    """One threshold per class, (K,): the conformal quantile of the true-class scores
    ``cal_scores[i, y_i]`` of all calibration rows, or (``mondrian``) of those of
    class k only."""
    true = cal_scores[np.arange(y_index.size), y_index]
    if not mondrian:
        return np.full(n_classes, conformal_quantile(true, alpha))
    return np.array([conformal_quantile(true[y_index == k], alpha) for k in range(n_classes)])


def smoothed_pvalues(cal_scores: np.ndarray, y_index: np.ndarray, test: np.ndarray,
                     rng: np.random.Generator, mondrian: bool = False) -> np.ndarray:
    """Smoothed conformal p-values (m, K) of the test scores ``test`` (m, K) against the
    true-class calibration scores (all rows, or with ``mondrian`` those of class k for
    column k): (#{s_i > s} + U (#{s_i = s} + 1)) / (n + 1), U ~ Uniform(0, 1)."""
    true = cal_scores[np.arange(y_index.size), y_index]
    uniform = rng.uniform(size=test.shape)
    out = np.empty(test.shape)
    groups = range(test.shape[1]) if mondrian else [None]
    for k in groups:
        ref = np.sort(true if k is None else true[y_index == k])
        cols = slice(None) if k is None else slice(k, k + 1)
        below_or_equal = np.searchsorted(ref, test[:, cols], side="right")
        equal = below_or_equal - np.searchsorted(ref, test[:, cols], side="left")
        greater = ref.size - below_or_equal
        out[:, cols] = (greater + uniform[:, cols] * (equal + 1)) / (ref.size + 1)
    return out


def _check_choice(value, options, name):
    if value not in options:
        raise ValueError(f"{name} must be one of {list(options)}; got {value!r}.")


def _check_level(value, name: str) -> np.ndarray:
    """``value`` (a number or 1-D sequence) as a float array in (0, 1), else ValueError."""
    values = np.atleast_1d(np.asarray(value, dtype=float))
    if values.ndim != 1 or not np.all((values > 0) & (values < 1)):
        raise ValueError(f"{name} must be a number (or 1-D list) in (0, 1); got {value!r}.")
    return values


def miscoverage(confidence_level: Any = DEFAULT_CONFIDENCE_LEVEL, alpha: Any = DEPRECATED,
                who: str = "predict_set") -> np.ndarray:
    """The miscoverage levels alpha = 1 - confidence_level, as a 1-D float array.

    ``1 - confidence_level`` is rounded to 12 decimals, so that ``confidence_level=0.9``
    gives exactly the float 0.1 and sets equal those of the deprecated ``alpha=0.1`` (a
    p-value k/(n + 1) can equal alpha exactly). ``alpha`` (deprecated since 0.2, removed
    in 0.3) is taken as given, with a ``FutureWarning``; both is a ``ValueError``.
    """
    if given(alpha):
        renamed(who, "alpha", alpha, "confidence_level", confidence_level,  # deprecated
                confidence_level is DEFAULT_CONFIDENCE_LEVEL, use="confidence_level=1 - alpha "
                f"(alpha={alpha!r}: confidence_level={_complement(alpha)!r})")
        return _check_level(alpha, "alpha")  # deprecated name, removed in 0.3
    return np.round(1.0 - _check_level(confidence_level, "confidence_level"), 12)


def _complement(value: Any) -> Any:
    """1 - value for a number or a sequence (the message's example), rounded."""
    try:
        out = np.round(1.0 - np.asarray(value, dtype=float), 12)
    except (TypeError, ValueError):
        return "1 - alpha"
    return out.item() if out.ndim == 0 else out.tolist()


def _label_index(estimator, y: Any) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y_calib must be 1-D; got shape {y.shape}.")
    position = {c: k for k, c in enumerate(estimator.classes_.tolist())}
    unknown = [v for v in dict.fromkeys(y.tolist()) if v not in position]
    if unknown:
        raise ValueError(f"y_calib holds labels that are not in classes_ "
                         f"{estimator.classes_.tolist()}: {unknown[:5]}.")
    return np.array([position[v] for v in y.tolist()], dtype=np.intp)


def calibration_scores(estimator, calibration: str = "split", X_calib: Any = None,
                       y_calib: Any = None, score: str = "lac"):
    """Nonconformity of the calibration rows (n, K) and their class indices (n,).

    ``"split"``: ``X_calib``, ``y_calib`` are rows held out of the fit, scored by
    ``predict_proba``. ``"loo"`` and ``"jackknife+"``: they are the training rows
    (optional when the fit kept them in ``idata_``), scored by the exact leave-one-out
    predictive.
    """
    _check_choice(calibration, CALIBRATIONS, "calibration")
    _check_choice(score, SCORES, "score")
    if calibration == "split":
        if X_calib is None or y_calib is None:
            raise ValueError(
                "calibration='split' needs X_calib and y_calib: labeled rows held out of "
                "the fit. Without a split, calibration='loo' uses the exact leave-one-out "
                "predictive of the training rows (method='conjugate').")
        y_index = _label_index(estimator, y_calib)
        log_proba = predictive_log_proba(estimator, statistics.validate_predict(estimator, X_calib))
        if log_proba.shape[0] != y_index.size:
            raise ValueError(f"X_calib has {log_proba.shape[0]} rows but y_calib has "
                             f"{y_index.size} labels.")
        return nonconformity(log_proba, score), y_index
    _check_exact_loo(estimator, calibration)
    log_joint, y_index = exact_loo.loo_log_joint(estimator, X_calib, y_calib)
    return nonconformity(normalise_joint(estimator, log_joint), score), y_index


def _check_exact_loo(estimator, calibration: str) -> None:
    if not exact_loo.supports(estimator):
        raise ValueError(
            f"calibration={calibration!r} needs the exact leave-one-out predictive: "
            f"{type(estimator).__name__} fitted with method={estimator.method_!r} has none "
            "(it needs method='conjugate', a family with a closed-form posterior, no "
            "unlabeled rows, and LDA/QDA/MultinomialNB without missing entries). Use "
            "calibration='split' with rows held out of the fit.")


def jackknife_plus_counts(estimator, X: np.ndarray, X_calib: Any = None, y_calib: Any = None,
                          score: str = "lac", mondrian: bool = False) -> tuple:
    """The jackknife+ comparison counts of validated test rows X (m, d), (m, K) each.

    Returns ``(less, greater, equal, n_ref)``: per test row j and class k, the numbers
    of reference training rows i with R_i < s_i(x_j, k), R_i > s_i(x_j, k) and
    R_i = s_i(x_j, k) (R_i the leave-one-out score of row i's own class, s_i that of the
    test row under the posterior without row i; the reference rows are every training
    row, or with ``mondrian`` those of class k), and n_ref (K,) their number (module
    docstring). Test rows in chunks of :data:`JACKKNIFE_BLOCK` / (n K) rows.
    """
    _check_exact_loo(estimator, "jackknife+")
    _check_choice(score, SCORES, "score")
    rows = exact_loo.training_rows(estimator, X_calib, y_calib)
    y_index = rows.y
    n, K = y_index.size, estimator.classes_.size
    own = nonconformity(normalise_joint(estimator, exact_loo.loo_log_joint_of(
        estimator.fitted_, rows)), score)[np.arange(n), y_index]
    ref = (np.eye(K, dtype=bool)[y_index] if mondrian
           else np.ones((n, K), dtype=bool))  # (n, K): row i is a reference for class k
    m = X.shape[0]
    less, greater, equal = (np.zeros((m, K), dtype=np.int64) for _ in range(3))
    step = max(1, JACKKNIFE_BLOCK // max(1, n * K))
    posteriors = exact_loo.loo_posteriors(estimator, rows)  # once for every chunk
    for start in range(0, m, step):
        chunk = slice(start, min(start + step, m))
        joint = exact_loo.loo_log_joint_at(estimator, rows, X[chunk], posteriors)  # (n, m_c, K)
        scores = nonconformity(normalise_joint(estimator, joint.reshape(-1, K)), score)
        scores = scores.reshape(joint.shape)
        R, use = own[:, None, None], ref[:, None, :]
        less[chunk] = np.sum((R < scores) & use, axis=0)
        greater[chunk] = np.sum((R > scores) & use, axis=0)
        equal[chunk] = np.sum((R == scores) & use, axis=0)
    return less, greater, equal, ref.sum(axis=0)


def _rank(n_ref: np.ndarray, alpha: float) -> np.ndarray:
    """ceil((n + 1)(1 - alpha)) per class (the rank of the conformal quantile)."""
    return np.ceil((n_ref + 1) * (1.0 - alpha) - 1e-12)


def predict_set(estimator, X: Any, alpha: Any = DEPRECATED, *,
                confidence_level: Any = DEFAULT_CONFIDENCE_LEVEL, calibration: str = "split",
                X_calib: Any = None, y_calib: Any = None, score: str = "lac",
                mondrian: bool = False, randomize: bool = False,
                random_state: Any = None) -> np.ndarray:
    """Conformal prediction sets: classes that the rows X may have, at a confidence level.

    With alpha = 1 - ``confidence_level`` (the miscoverage of the module docstring).

    Parameters
    ----------
    estimator : fitted bayesgen classifier
    X : array-like or DataFrame of shape (n, d)
        The rows to predict sets for.
    alpha : float or 1-D sequence of floats in (0, 1), deprecated
        Deprecated since 0.2 (removed in 0.3, FutureWarning): the miscoverage
        1 - confidence_level, the positional argument after X in earlier releases.
    confidence_level : float or 1-D sequence of floats in (0, 1), default=0.9
        Target coverage: P(y in set) >= confidence_level (MAPIE's name). A sequence
        gives one set per level.
    calibration : {"split", "loo", "jackknife+"}, default="split"
        ``"split"``: ``X_calib``, ``y_calib`` are labeled rows held out of the fit
        (every estimator and method). ``"loo"``: no split; ``X_calib``, ``y_calib`` are
        the training rows (optional when the fit kept them), scored by the exact
        leave-one-out predictive (``method="conjugate"``). ``"jackknife+"``: as
        ``"loo"``, and the test rows are also scored by the posterior without each
        training row (coverage >= 1 - 2 alpha guaranteed, about 1 - alpha in
        practice). Guarantees in :mod:`bayesgen.decide.conformal`.
    X_calib : array-like or DataFrame of shape (m, d), optional
    y_calib : array-like of shape (m,), optional
        Calibration rows and labels (each one of ``classes_``).
    score : {"lac", "aps"}, default="lac"
        Nonconformity score (see the module docstring).
    mondrian : bool, default=False
        Class-conditional coverage: one threshold per class.
    randomize : bool, default=False
        Smoothed (randomised) p-values: coverage exactly 1 - alpha in expectation,
        smaller sets (see the module docstring).
    random_state : int, Generator or None
        The uniforms of ``randomize=True``.

    Returns
    -------
    ndarray of bool
        Shape (n, K) for a scalar level, (n, K, len(confidence_level)) for a sequence:
        ``out[i, k]`` is True when ``classes_[k]`` is in the set of row i.
    """
    alphas = miscoverage(confidence_level, alpha)
    scalar = np.ndim(alpha if given(alpha) else confidence_level) == 0
    _check_choice(calibration, CALIBRATIONS, "calibration")
    if calibration == "jackknife+":
        Xv = statistics.validate_predict(estimator, X)
        less, greater, equal, n_ref = jackknife_plus_counts(
            estimator, Xv, X_calib, y_calib, score, mondrian)
        if randomize:
            uniform = rng_from(random_state).uniform(size=less.shape)
            pvalues = (greater + uniform * (equal + 1)) / (n_ref + 1)
            out = pvalues[..., None] > alphas
        else:  # #{R_i < s_i} < (1 - alpha)(n + 1), i.e. below the quantile's rank
            out = np.stack([less < _rank(n_ref, a) for a in alphas], axis=-1)
        return out[..., 0] if scalar else out
    cal, y_index = calibration_scores(estimator, calibration, X_calib, y_calib, score)
    Xv = statistics.validate_predict(estimator, X)
    test = nonconformity(predictive_log_proba(estimator, Xv), score)
    K = estimator.classes_.size
    if randomize:
        pvalues = smoothed_pvalues(cal, y_index, test, rng_from(random_state), mondrian)
        out = pvalues[..., None] > alphas
    else:
        out = np.stack([test <= thresholds(cal, y_index, K, a, mondrian)[None, :]
                        for a in alphas], axis=-1)
    return out[..., 0] if scalar else out
