"""Benchmark of the exact conjugate posterior (issue: method="conjugate").

Measures, in one run on this machine:

1. ``bg.QDA(method="conjugate", chains=4, draws=1000).fit`` on iris, including the
   i.i.d. posterior draws and building ``idata_`` (pointwise log-likelihood included);
   goal: well under a second.
2. ``predict_proba`` from 4,000 posterior draws on 10,000 rows with d = 10 (K = 3);
   goal: a few seconds.

Run::

    .venv/bin/python benchmarks/bench_conjugate.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_iris

import bayesgen as bg


def _median_time(fn, repeats: int) -> float:
    fn()  # warm-up (imports, caches)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    X, y = load_iris(return_X_y=True)
    fit_time = _median_time(
        lambda: bg.QDA(method="conjugate", chains=4, draws=1000, random_state=0).fit(X, y),
        args.repeats,
    )

    rng = np.random.default_rng(0)
    d, n = 10, 10_000
    centres = rng.normal(scale=2.0, size=(3, d))
    y_big = rng.integers(0, 3, size=2_000)
    X_big = centres[y_big] + rng.normal(size=(2_000, d))
    clf = bg.QDA(method="conjugate", chains=4, draws=1000, random_state=0).fit(X_big, y_big)
    X_test = centres[rng.integers(0, 3, size=n)] + rng.normal(size=(n, d))
    pred_time = _median_time(lambda: clf.predict_proba(X_test), max(1, args.repeats // 2))

    print("| benchmark | seconds | goal |")
    print("|---|---|---|")
    print(f"| QDA conjugate fit on iris, 4 x 1000 draws, with idata_ | {fit_time:.3f} | < 1 s |")
    print(f"| predict_proba, 4000 draws x 10,000 rows, d = 10 | {pred_time:.3f} | a few s |")


if __name__ == "__main__":
    main()
