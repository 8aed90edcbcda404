"""``python -m bayesgen demo``: MLE against MAP on scikit-learn's bundled data sets.

The demo is driven by :data:`DEMO`, a list of (data set, classifiers) pairs; each
classifier is a :class:`Classifier` = (name, estimator factory, methods). Every
(data set, classifier, method) triple is fitted on a stratified training split and
scored on the held-out split: accuracy, log loss, expected calibration error
(:func:`expected_calibration_error`) and fit time. A fit that raises ``ValueError``
(for example QDA's MLE with fewer samples per class than features, where the class
covariance is singular) becomes a row with a note instead of stopping the demo.

Adding a method (``"conjugate"``, ``"mcmc"``) is adding it to the ``methods`` tuples;
adding a classifier or a data set is adding one entry.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from sklearn.metrics import log_loss

import bayesgen as bg
from bayesgen.cli import datasets
from bayesgen.cli.datasets import Split
from bayesgen.cli.figures import plot, regions, reliability


class Classifier(NamedTuple):
    """One row group of the table: a name, ``factory(method, seed)`` and its methods."""

    name: str
    factory: Callable[[str, int], Any]
    methods: tuple[str, ...]


#: methods the demo compares (closed-form point estimates and the exact posterior)
METHODS = ("mle", "map", "conjugate")

GAUSSIAN: list[Classifier] = [
    Classifier("LDA", lambda m, s: bg.LDA(method=m, random_state=s), METHODS),
    Classifier("QDA", lambda m, s: bg.QDA(method=m, random_state=s), METHODS),
    Classifier("GaussianNB", lambda m, s: bg.GaussianNB(method=m, random_state=s), METHODS),
]

#: the same with PyMC NUTS as well (about 10 s per fit, mostly JAX compilation)
GAUSSIAN_MCMC: list[Classifier] = [c._replace(methods=(*METHODS, "mcmc")) for c in GAUSSIAN]

DISCRETE: list[Classifier] = [
    Classifier("MultinomialNB", lambda m, s: bg.MultinomialNB(method=m, random_state=s), METHODS),
    Classifier(
        "BernoulliNB(binarize=7)",
        lambda m, s: bg.BernoulliNB(method=m, binarize=7.0, random_state=s),
        METHODS,
    ),
]


#: The demo: (data set loader taking the seed, classifiers run on it).
DEMO: list[tuple[Callable[[int], Split], list[Classifier]]] = [
    (datasets.breast_cancer, GAUSSIAN),
    (datasets.wine, GAUSSIAN_MCMC),
    (datasets.breast_cancer_small, GAUSSIAN),
    (datasets.digits, DISCRETE),
]


def expected_calibration_error(y_true: Any, proba: np.ndarray, classes: Any, n_bins: int = 10):
    """Top-label expected calibration error with equal-width confidence bins.

    Each row's confidence is its largest predicted probability c_n = max_k p_nk, and
    it is correct when that class is the true one. Rows are grouped into ``n_bins``
    bins of equal width on (0, 1] (bin b holds (b/B, (b+1)/B]), and

        ECE = sum_b (|B_b| / n) * |accuracy(B_b) - mean confidence(B_b)|,

    the average gap between confidence and accuracy (Naeini et al. 2015; Guo et al.
    2017). 0 is perfect calibration; empty bins contribute nothing.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True labels.
    proba : ndarray of shape (n, K)
        Predicted probabilities, columns in the order of ``classes``.
    classes : array-like of shape (K,)
        Labels of the columns of ``proba``.
    n_bins : int, default=10

    Returns
    -------
    float in [0, 1]
    """
    proba = np.asarray(proba, dtype=np.float64)
    top = np.argmax(proba, axis=1)
    confidence = proba[np.arange(proba.shape[0]), top]
    correct = np.asarray(classes)[top] == np.asarray(y_true)
    bins = np.clip(np.ceil(confidence * n_bins).astype(int) - 1, 0, n_bins - 1)
    gap = np.bincount(bins, weights=correct - confidence, minlength=n_bins)
    return float(np.abs(gap).sum() / proba.shape[0])


def _fit_one(clf: Classifier, method: str, data: Split, seed: int) -> dict:
    """Fit and score one (classifier, method) on one split; a ValueError becomes a note."""
    row = {"data": data.name, "classifier": clf.name, "method": method}
    estimator = clf.factory(method, seed)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            estimator.fit(data.X_train, data.y_train)
            proba = estimator.predict_proba(data.X_test)
    except ValueError as err:
        n_k = np.unique(data.y_train, return_counts=True)[1].min()
        d = data.X_train.shape[1]
        reason = "singular (n_k <= d)" if n_k <= d else str(err).split(". ")[0]
        return {**row, "note": f"{method.upper()}: {reason}"}
    fit_ms = 1000 * (time.perf_counter() - start)
    classes = estimator.classes_
    row.update(
        accuracy=float(np.mean(classes[np.argmax(proba, axis=1)] == data.y_test)),
        log_loss=float(log_loss(data.y_test, proba, labels=classes)),
        ece=expected_calibration_error(data.y_test, proba, classes),
        fit_ms=fit_ms,
        convergence=_convergence(estimator),
        note="; ".join(sorted({_short_warning(w.message) for w in caught})),
    )
    row["proba"] = proba
    return row


def _convergence(estimator) -> str:
    """'exact' for i.i.d. conjugate draws; max R-hat and divergences for NUTS; else ''."""
    if estimator.method_ == "conjugate":
        return "exact draws"
    if estimator.method_ != "mcmc":
        return ""
    from bayesgen.inference.mcmc import RHAT_MAX

    table = estimator.summary()
    n_div = int(estimator.idata_.sample_stats["diverging"].sum())
    rhat, ess = table["r_hat"].max(), table["ess_bulk"].min()
    flag = "ok" if rhat <= RHAT_MAX and n_div == 0 else "CHECK"
    return f"R-hat {rhat:.2f}, {n_div} div, min ESS {ess:.0f} {flag}"


def _short_warning(message: Warning | str) -> str:
    """'warning: ' + the first clause of a warning, without the estimator-name prefix."""
    text = str(message).split(" (")[0].split(". ")[0]
    head, sep, tail = text.partition(": ")
    return "warning: " + (tail if sep and " " not in head else text)


def run(seed: int = 0, demo: list | None = None) -> pd.DataFrame:
    """Fit every (data set, classifier, method) of ``demo`` (default :data:`DEMO`).

    Returns
    -------
    DataFrame with columns data, classifier, method, accuracy, log_loss, ece,
    fit_ms (fit + predict_proba time in milliseconds), convergence, note and proba
    (the held-out probabilities); failed fits have
    NaN scores and the reason in ``note``.
    """
    rows = []
    for load, classifiers in DEMO if demo is None else demo:
        data = load(seed)
        for clf in classifiers:
            rows.extend(_fit_one(clf, method, data, seed) for method in clf.methods)
    table = pd.DataFrame(
        rows,
        columns=[
            "data",
            "classifier",
            "method",
            "accuracy",
            "log_loss",
            "ece",
            "fit_ms",
            "convergence",
            "note",
            "proba",
        ],
    )
    table["note"] = table["note"].fillna("")
    table["convergence"] = table["convergence"].fillna("")
    return table


def format_table(table: pd.DataFrame) -> str:
    """The results as fixed-width text; failed fits show '-' in the score columns."""
    columns = {
        "data": None,
        "classifier": None,
        "method": None,
        "accuracy": "{:.3f}",
        "log_loss": "{:.3f}",
        "ece": "{:.3f}",
        "fit_ms": "{:.1f}",
        "convergence": None,
        "note": None,
    }
    header = [
        "data",
        "classifier",
        "method",
        "accuracy",
        "log loss",
        "ECE",
        "time (ms)",
        "convergence",
        "note",
    ]
    cells = [
        [
            str(v) if fmt is None else ("-" if np.isnan(v) else fmt.format(v))
            for v, fmt in zip(row, columns.values(), strict=True)
        ]
        for row in table[list(columns)].itertuples(index=False)
    ]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(header)]
    numeric = [fmt is not None for fmt in columns.values()]

    def line(values: list[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in cells)])


def main(out: str | Path = "bayesgen-demo", seed: int = 0) -> pd.DataFrame:
    """Run the demo, print the table, write ``results.csv``, ``log_loss.png``,
    ``reliability.png`` and ``decision_regions.png`` to ``out``."""
    out = Path(out)
    start = time.perf_counter()
    n_fits = sum(len(c.methods) for _, classifiers in DEMO for c in classifiers)
    print(f"fitting {n_fits} classifiers (about a minute, mostly NUTS on wine)", flush=True)
    table = run(seed)
    print(f"bayesgen {bg.__version__} demo (seed {seed}): held-out scores, 70/30 stratified split")
    print("ECE = expected calibration error, 10 equal-width bins; time = fit + predict_proba\n")
    print(format_table(table))
    out.mkdir(parents=True, exist_ok=True)
    table.drop(columns="proba").to_csv(out / "results.csv", index=False)
    png = plot(table, out / "log_loss.png")
    print(f"\nwrote {png}")
    print(f"wrote {reliability(table, seed, out / 'reliability.png')}")
    print(f"wrote {regions(seed, out / 'decision_regions.png')}")
    print(f"wrote {out / 'results.csv'}")
    print(f"done in {time.perf_counter() - start:.1f} s")
    return table
