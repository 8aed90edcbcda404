"""Time bayesgen against scikit-learn: fit + predict_proba on the same data.

Usage::

    .venv/bin/python benchmarks/bench_sklearn.py            # full size, 5 repeats
    .venv/bin/python benchmarks/bench_sklearn.py --quick    # 10x smaller, for a smoke run
    .venv/bin/python benchmarks/bench_sklearn.py --only NB  # cases whose name contains "NB"

For each case, both estimators are fitted on the same training matrix and then asked
for ``predict_proba`` on that matrix; one warm-up run of each is discarded, then the
median wall time over ``--repeats`` interleaved runs is reported with the ratio
bayesgen / scikit-learn (goal: <= 0.5) and the largest absolute difference between
the two probability matrices (0 up to rounding where both compute the same estimate).

Data (fixed seed): Gaussian class-conditional data, N = 300,000 rows, d = 30, K = 5
classes with different means and covariances; and Poisson counts, 150,000 x 100,
K = 5 classes with different rates. ``--quick`` divides N by 10.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import sklearn
from sklearn import discriminant_analysis as skda
from sklearn import naive_bayes as sknb

import bayesgen as bg

GOAL = 0.5


class Case(NamedTuple):
    """One comparison: labels, estimator factories and which data set it uses."""

    name: str
    ours: str
    theirs: str
    make_ours: Callable[[], Any]
    make_theirs: Callable[[], Any]
    data: str


CASES = [
    Case(
        "GaussianNB mle",
        'GaussianNB(method="mle")',
        "GaussianNB(var_smoothing=0)",
        lambda: bg.GaussianNB(method="mle"),
        lambda: sknb.GaussianNB(var_smoothing=0.0),
        "gaussian",
    ),
    Case(
        "GaussianNB map",
        'GaussianNB(method="map")',
        "GaussianNB(var_smoothing=0)",
        lambda: bg.GaussianNB(method="map"),
        lambda: sknb.GaussianNB(var_smoothing=0.0),
        "gaussian",
    ),
    Case(
        "LDA mle",
        'LDA(method="mle")',
        'LinearDiscriminantAnalysis(solver="lsqr")',
        lambda: bg.LDA(method="mle"),
        lambda: skda.LinearDiscriminantAnalysis(solver="lsqr"),
        "gaussian",
    ),
    Case(
        "QDA mle",
        'QDA(method="mle")',
        "QuadraticDiscriminantAnalysis()",
        lambda: bg.QDA(method="mle"),
        lambda: skda.QuadraticDiscriminantAnalysis(),
        "gaussian",
    ),
    Case(
        "MultinomialNB map",
        'MultinomialNB(method="map", alpha=2)',
        "MultinomialNB(alpha=1)",
        lambda: bg.MultinomialNB(method="map", alpha=2.0),
        lambda: sknb.MultinomialNB(alpha=1.0),
        "counts",
    ),
]


def gaussian_data(n: int, d: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """x | y=c ~ MVN(mu_c, Sigma_c): mu_c ~ N(0, I), Sigma_c = A_c A_c^T / d + I / 2."""
    rng = np.random.default_rng(seed)
    y = rng.integers(k, size=n)
    means = rng.normal(size=(k, d))
    X = rng.standard_normal((n, d))
    for c in range(k):
        A = rng.normal(size=(d, d))
        L = np.linalg.cholesky(A @ A.T / d + 0.5 * np.eye(d))
        rows = y == c
        X[rows] = X[rows] @ L.T + means[c]
    return X, y


def count_data(n: int, d: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """x_j | y=c ~ Poisson(lambda_cj), lambda_cj ~ Gamma(2, 1); float64 counts."""
    rng = np.random.default_rng(seed + 1)
    y = rng.integers(k, size=n)
    rates = rng.gamma(2.0, 1.0, size=(k, d))
    return rng.poisson(rates[y]).astype(np.float64), y


def run_once(make: Callable[[], Any], X: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Wall time of ``make().fit(X, y).predict_proba(X)`` and the probabilities."""
    start = time.perf_counter()
    proba = make().fit(X, y).predict_proba(X)
    return time.perf_counter() - start, proba


def time_case(case: Case, X: np.ndarray, y: np.ndarray, repeats: int) -> dict:
    """Warm up once, then the median of ``repeats`` interleaved runs of each library."""
    run_once(case.make_ours, X, y)
    run_once(case.make_theirs, X, y)
    ours, theirs = [], []
    for _ in range(repeats):
        t, p_ours = run_once(case.make_ours, X, y)
        ours.append(t)
        t, p_theirs = run_once(case.make_theirs, X, y)
        theirs.append(t)
    t_ours, t_theirs = statistics.median(ours), statistics.median(theirs)
    return {
        "case": case.name,
        "bayesgen_s": t_ours,
        "sklearn_s": t_theirs,
        "ratio": t_ours / t_theirs,
        "max_dp": float(np.max(np.abs(p_ours - p_theirs))),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs (median); default 5")
    parser.add_argument("--quick", action="store_true", help="N / 10 for a fast smoke run")
    parser.add_argument("--seed", type=int, default=0, help="data seed; default 0")
    parser.add_argument(
        "--only",
        action="append",
        default=None,
        metavar="TEXT",
        help="run only cases whose name contains TEXT (repeatable)",
    )
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    scale = 10 if args.quick else 1
    sizes = {"gaussian": (300_000 // scale, 30), "counts": (150_000 // scale, 100)}
    cases = [c for c in CASES if args.only is None or any(t in c.name for t in args.only)]
    if not cases:
        parser.error(f"no case matches {args.only}; cases: {[c.name for c in CASES]}")

    print(
        f"bayesgen {bg.__version__} vs scikit-learn {sklearn.__version__}, numpy "
        f"{np.__version__}, Python {platform.python_version()}, {os.cpu_count()} CPU(s)"
    )
    print(
        f"fit + predict_proba on the training data; median of {args.repeats} runs after "
        f"1 warm-up; K = 5, seed {args.seed}"
    )
    data = {}
    for key, (n, d) in sizes.items():
        if any(c.data == key for c in cases):
            make = gaussian_data if key == "gaussian" else count_data
            data[key] = make(n, d, 5, args.seed)
            print(f"  {key} data: N = {n:,}, d = {d}")
    print()

    header = f"{'case':<18} {'bayesgen (s)':>12} {'sklearn (s)':>11} {'ratio':>6}  "
    header += f"{'<= ' + str(GOAL):>7}  {'max|dp|':>8}  bayesgen vs sklearn estimator"
    print(header)
    print("-" * len(header))
    met = []
    for case in cases:
        X, y = data[case.data]
        r = time_case(case, X, y, args.repeats)
        met.append(r["ratio"] <= GOAL)
        print(
            f"{r['case']:<18} {r['bayesgen_s']:>12.3f} {r['sklearn_s']:>11.3f} "
            f"{r['ratio']:>6.2f}  {'yes' if met[-1] else 'no':>7}  {r['max_dp']:>8.1e}  "
            f"{case.ours} vs {case.theirs}",
            flush=True,
        )
    print(f"\n{sum(met)} of {len(met)} cases meet ratio <= {GOAL}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
