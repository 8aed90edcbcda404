"""Time bayesgen against scikit-learn: fit + predict_proba on the same data.

Usage::

    .venv/bin/python benchmarks/bench_sklearn.py            # full size, 5 repeats
    .venv/bin/python benchmarks/bench_sklearn.py --quick    # 10x smaller, for a smoke run
    .venv/bin/python benchmarks/bench_sklearn.py --only NB  # cases whose name contains "NB"
    .venv/bin/python benchmarks/bench_sklearn.py --n-jobs -1  # bayesgen's n_jobs (default None)

For each case, both estimators are fitted on the same training matrix and then asked
for ``predict_proba`` on that matrix; one warm-up run of each is discarded, then the
two libraries run alternately ``--repeats`` times. Reported: the median wall time of
each and their ratio bayesgen / scikit-learn (goal: <= 0.5, i.e. bayesgen at least
twice as fast), the ratio of the fastest runs, the ratio of median CPU times
(``process_time``, all threads; less affected by other processes on a busy machine),
the load average, and the largest absolute difference between the two probability
matrices (0 up to rounding where both compute the same estimate).

Data (fixed seed): Gaussian class-conditional data, N = 300,000 rows, d = 30, K = 5
classes with different means and covariances; and Poisson counts, 150,000 x 100,
K = 5 classes with different rates (``--counts N D`` changes the shape, e.g.
``--counts 300000 30`` for the issue tracker's N = 300,000, d = 30). ``--quick``
divides N by 10.
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
        "LDA map",
        'LDA(method="map")',
        'LinearDiscriminantAnalysis(solver="lsqr")',
        lambda: bg.LDA(method="map"),
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
        "QDA map",
        'QDA(method="map")',
        "QuadraticDiscriminantAnalysis()",
        lambda: bg.QDA(method="map"),
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


def _with_n_jobs(make: Callable[[], Any], n_jobs: int) -> Callable[[], Any]:
    return lambda: make().set_params(n_jobs=n_jobs)


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


def run_once(
    make: Callable[[], Any], X: np.ndarray, y: np.ndarray
) -> tuple[float, float, np.ndarray]:
    """Wall and CPU time (``process_time``: all threads of this process) of
    ``make().fit(X, y).predict_proba(X)``, and the probabilities."""
    cpu, start = time.process_time(), time.perf_counter()
    proba = make().fit(X, y).predict_proba(X)
    return time.perf_counter() - start, time.process_time() - cpu, proba


def time_case(case: Case, X: np.ndarray, y: np.ndarray, repeats: int) -> dict:
    """Warm up once, then ``repeats`` interleaved runs of each library: the median and
    the minimum wall time and the median CPU time of each, and their ratios."""
    run_once(case.make_ours, X, y)
    run_once(case.make_theirs, X, y)
    ours, theirs = [], []
    for _ in range(repeats):
        *t, p_ours = run_once(case.make_ours, X, y)
        ours.append(t)
        *t, p_theirs = run_once(case.make_theirs, X, y)
        theirs.append(t)
    wall_o, cpu_o = np.array(ours).T
    wall_t, cpu_t = np.array(theirs).T
    out = {
        "case": case.name,
        "bayesgen_s": statistics.median(wall_o),
        "sklearn_s": statistics.median(wall_t),
        "bayesgen_min_s": float(wall_o.min()),
        "sklearn_min_s": float(wall_t.min()),
        "bayesgen_cpu_s": statistics.median(cpu_o),
        "sklearn_cpu_s": statistics.median(cpu_t),
        "max_dp": float(np.max(np.abs(p_ours - p_theirs))),
    }
    out["ratio"] = out["bayesgen_s"] / out["sklearn_s"]
    out["ratio_min"] = out["bayesgen_min_s"] / out["sklearn_min_s"]
    out["ratio_cpu"] = out["bayesgen_cpu_s"] / out["sklearn_cpu_s"]
    return out


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (other processes share the CPUs)."""
    try:
        return " / ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:  # not available on this platform
        return "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs (median); default 5")
    parser.add_argument("--quick", action="store_true", help="N / 10 for a fast smoke run")
    parser.add_argument("--seed", type=int, default=0, help="data seed; default 0")
    parser.add_argument(
        "--counts",
        type=int,
        nargs=2,
        default=(150_000, 100),
        metavar=("N", "D"),
        help="rows and columns of the count data; default 150000 100",
    )
    parser.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        metavar="J",
        help="bayesgen's n_jobs (default None: one thread, as scikit-learn's default)",
    )
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
    if min(args.counts) < 1:
        parser.error("--counts needs positive N and D")
    scale = 10 if args.quick else 1
    n_counts, d_counts = args.counts
    sizes = {"gaussian": (300_000 // scale, 30), "counts": (n_counts // scale, d_counts)}
    cases = [c for c in CASES if args.only is None or any(t in c.name for t in args.only)]
    if args.n_jobs is not None:  # the same cases with bayesgen's n_jobs set
        cases = [c._replace(ours=f"{c.ours[:-1]}, n_jobs={args.n_jobs})",
                            make_ours=_with_n_jobs(c.make_ours, args.n_jobs)) for c in cases]
    if not cases:
        parser.error(f"no case matches {args.only}; cases: {[c.name for c in CASES]}")

    print(
        f"bayesgen {bg.__version__} vs scikit-learn {sklearn.__version__}, numpy "
        f"{np.__version__}, Python {platform.python_version()}, {os.cpu_count()} CPU(s)"
    )
    print(f"bayesgen imported from {os.path.dirname(bg.__file__)}")
    print(
        f"fit + predict_proba on the training data; {args.repeats} alternating runs per "
        f"library after 1 warm-up each; K = 5, seed {args.seed}; bayesgen n_jobs={args.n_jobs}"
    )
    data = {}
    for key, (n, d) in sizes.items():
        if any(c.data == key for c in cases):
            make = gaussian_data if key == "gaussian" else count_data
            data[key] = make(n, d, 5, args.seed)
            print(f"  {key} data: N = {n:,}, d = {d}")
    print(f"load average (1 / 5 / 15 min) at start: {load_average()}")
    print()

    header = (
        f"{'case':<18} {'bayesgen (s)':>12} {'sklearn (s)':>11} {'ratio':>6}  "
        f"{'<= ' + str(GOAL):>7}  {'min ratio':>9} {'CPU ratio':>9}  {'max|dp|':>8}  "
        "bayesgen vs sklearn estimator"
    )
    print(header)
    print("-" * len(header))
    met = []
    for case in cases:
        X, y = data[case.data]
        r = time_case(case, X, y, args.repeats)
        met.append(r["ratio"] <= GOAL)
        print(
            f"{r['case']:<18} {r['bayesgen_s']:>12.3f} {r['sklearn_s']:>11.3f} "
            f"{r['ratio']:>6.2f}  {'yes' if met[-1] else 'no':>7}  {r['ratio_min']:>9.2f} "
            f"{r['ratio_cpu']:>9.2f}  {r['max_dp']:>8.1e}  {case.ours} vs {case.theirs}",
            flush=True,
        )
        print(
            f"{'':<18} min {r['bayesgen_min_s']:.3f} vs {r['sklearn_min_s']:.3f} s, "
            f"median CPU {r['bayesgen_cpu_s']:.3f} vs {r['sklearn_cpu_s']:.3f} s",
            flush=True,
        )
    print(f"\n{sum(met)} of {len(met)} cases meet ratio <= {GOAL} (ratio of median wall times)")
    print(f"load average (1 / 5 / 15 min) at end: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
