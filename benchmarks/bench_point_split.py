"""Fit and predict_proba of one point estimator, timed apart (wall and CPU).

On the issue-16 data of ``bench_sklearn.py`` (300,000 x 30, 5 classes, Gaussian), in
this process only (no scikit-learn run in between, so no BLAS threads of another
library are awake):

    .venv/bin/python benchmarks/bench_point_split.py --estimator LDA --method mle
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sklearn import gaussian_data

import bayesgen as bg


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--estimator", default="LDA", choices=["LDA", "QDA", "GaussianNB"])
    parser.add_argument("--method", default="mle", choices=["mle", "map"])
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--n-jobs", type=int, default=None, help="the estimator's n_jobs")
    args = parser.parse_args(argv)
    X, y = gaussian_data(args.rows, 30, 5, 0)
    make = getattr(bg, args.estimator)
    for _ in range(2):  # warm-up
        make(method=args.method, n_jobs=args.n_jobs).fit(X, y).predict_proba(X)
    times = []
    for _ in range(args.repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        clf = make(method=args.method, n_jobs=args.n_jobs).fit(X, y)
        c1, t1 = time.process_time(), time.perf_counter()
        clf.predict_proba(X)
        c2, t2 = time.process_time(), time.perf_counter()
        times.append((t1 - t0, c1 - c0, t2 - t1, c2 - c1))
    fit, fit_cpu, proba, proba_cpu = 1e3 * np.median(np.array(times), axis=0)
    print(f"{args.estimator}(method={args.method!r}, n_jobs={args.n_jobs}), {args.rows} x 30, "
          f"median of "
          f"{args.repeats}: fit {fit:.1f} ms (CPU {fit_cpu:.1f}), predict_proba "
          f"{proba:.1f} ms (CPU {proba_cpu:.1f})")


if __name__ == "__main__":
    main()
