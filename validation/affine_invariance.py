"""Affine invariance of the real-valued classifiers: predictions on X vs a X + b.

A generative classifier with scale-aware defaults must give the same class
probabilities whatever units the features are recorded in. For every estimator
(LDA, QDA, GaussianNB, KernelNB, MixedNB with Gaussian and kernel parts), method
(``mle``, ``map``, ``conjugate``) and per-feature transform x -> a x + b this script
fits on X and on a X + b and reports the worst relative difference of
``predict_proba`` on the (transformed) training rows::

    max |p - p'| / max(p, p', 1e-300)

The data are iris x 10 (integers), so every transform with integer a and b is exact
and a power-free a only rounds relatively (1e-16 of each value): a difference is the
model's, not the input's. A failure (exception) is reported in place of the number.

Run::

    .venv/bin/python -m validation.affine_invariance
    .venv/bin/python -m validation.affine_invariance --markdown out.md
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from sklearn.datasets import load_iris

import bayesgen as bg

#: (label, a, b): scalars or one value per feature (iris has 4)
TRANSFORMS = [
    ("a=1, b=1e9", 1.0, 1e9),
    ("a=1e-150", 1e-150, 0.0),
    ("a=1e150", 1e150, 0.0),
    ("a=1e-300", 1e-300, 0.0),
    ("a=3, b=-1e12", 3.0, -1e12),
    ("a=-2, b=5e11", -2.0, 5e11),
    ("mixed per feature", np.array([1e-150, 1e150, -3.0, 1.0]),
     np.array([0.0, 0.0, 1e9, -1e12])),
]

ESTIMATORS = {
    "LDA": lambda **kw: bg.LDA(**kw),
    "QDA": lambda **kw: bg.QDA(**kw),
    "GaussianNB": lambda **kw: bg.GaussianNB(**kw),
    "KernelNB": lambda **kw: bg.KernelNB(**kw),
    "MixedNB(gaussian+kernel)": lambda **kw: bg.MixedNB(
        families=[("gaussian", [0, 1]), ("kernel", [2, 3])], **kw),
    "MixedNB(gaussian+poisson)": lambda **kw: bg.MixedNB(
        families=[("gaussian", [0, 1]), ("poisson", [2, 3])], **kw),
}
#: columns the transform applies to (the Poisson counts keep their units)
REAL_COLUMNS = {"MixedNB(gaussian+poisson)": [0, 1]}
METHODS = ("mle", "map", "conjugate")
NO_CONJUGATE = ("KernelNB", "MixedNB(gaussian+kernel)")


def data() -> tuple[np.ndarray, np.ndarray]:
    """iris x 10: integer features, so integer shifts and scales are exact."""
    X, y = load_iris(return_X_y=True)
    return np.round(X * 10.0), y


def relative_error(p: np.ndarray, q: np.ndarray) -> float:
    """max |p - q| / max(p, q, 1e-300) over all entries."""
    return float(np.max(np.abs(p - q) / np.maximum(np.maximum(p, q), 1e-300)))


def fit_proba(name: str, method: str, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    est = ESTIMATORS[name](method=method, draws=20, chains=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y).predict_proba(X)


def measure(name: str, method: str, a, b, X, y, reference) -> str | float:
    """Relative error of the transformed fit, or the exception's class name."""
    cols = REAL_COLUMNS.get(name, list(range(X.shape[1])))
    a_full, b_full = np.ones(X.shape[1]), np.zeros(X.shape[1])
    a_full[cols] = np.broadcast_to(a, (X.shape[1],))[cols]
    b_full[cols] = np.broadcast_to(b, (X.shape[1],))[cols]
    with np.errstate(all="ignore"):
        Xt = a_full * X + b_full
    try:
        return relative_error(reference, fit_proba(name, method, Xt, y))
    except Exception as err:  # reported in the table
        return type(err).__name__


def table() -> tuple[list[list], float]:
    """Rows [estimator, method, error per transform...] and the worst numeric error
    (inf when some transform raised)."""
    X, y = data()
    rows, worst = [], 0.0
    for name in ESTIMATORS:
        for method in METHODS:
            if method == "conjugate" and name in NO_CONJUGATE:
                continue
            reference = fit_proba(name, method, X, y)
            cells = [measure(name, method, a, b, X, y, reference) for _, a, b in TRANSFORMS]
            for c in cells:
                worst = max(worst, c if isinstance(c, float) else np.inf)
            rows.append([name, method, *cells])
    return rows, worst


def _fmt(cell) -> str:
    return f"{cell:.1e}" if isinstance(cell, float) else str(cell)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args(argv)
    rows, worst = table()
    header = ["estimator", "method", *(label for label, _, _ in TRANSFORMS)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in rows]
    lines.append(f"\nworst relative error: {worst:.1e}")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
