"""What each piece of the point-fit speed machinery gains: each switched off in turn.

The point fits of ``bench_sklearn.py`` (fit + predict_proba, 300,000 x 30, K = 5;
MultinomialNB on Poisson counts of the same shape) in one process, with one piece at a
time replaced by its plain version (by monkeypatching bayesgen's modules, in this
process only):

- ``no-scope``: no :func:`bayesgen.data.missing.scan_scope`, so each check of an array
  (infinity, missing values, far rows) scans it again;
- ``np.quantile``: the frame's quartiles by ``np.quantile(V, q, axis=0,
  method="inverted_cdf")`` instead of the partitions of
  :func:`bayesgen.data.frame._by_partition`;
- ``no-no_spin``: the user's BLAS threads during the whole point fit and prediction
  instead of one (:func:`bayesgen.utils.threads.no_spin`);
- ``blocked-max-min``: a tried alternative that is not in bayesgen: the maximum and
  minimum of each 1 MB block in turn (one pass over memory instead of two);
- ``n_jobs=2``: the estimator's ``n_jobs=2`` (default None, one thread).

The variants run interleaved, their order rotated every round, so that other processes
on a shared machine slow them alike; reported are the median wall and CPU times
(``process_time``) and the CPU time relative to bayesgen as it is. Usage::

    .venv/bin/python benchmarks/bench_speed_pieces.py                # 12 rounds
    .venv/bin/python benchmarks/bench_speed_pieces.py --rounds 5 --only LDA
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sklearn import count_data, gaussian_data

import bayesgen as bg
from bayesgen.data import frame, missing
from bayesgen.inference import scoring
from bayesgen.inference import statistics as batches
from bayesgen.semi import unlabeled

CASES = {
    "GaussianNB": lambda **kw: bg.GaussianNB(method="map", **kw),
    "LDA": lambda **kw: bg.LDA(method="mle", **kw),
    "QDA": lambda **kw: bg.QDA(method="mle", **kw),
    "MultinomialNB": lambda **kw: bg.MultinomialNB(method="map", alpha=2.0, **kw),
}
VARIANTS = ["as is", "no-scope", "np.quantile", "no-no_spin", "blocked-max-min", "n_jobs=2"]


def _blocked_max_min(values: np.ndarray, block: int = 2**17) -> tuple[float, float]:
    rows = max(1, block // max(1, values.size // max(1, values.shape[0])))
    highs, lows = [], []
    for start in range(0, values.shape[0], rows):
        part = values[start : start + rows]
        highs.append(part.max())
        lows.append(part.min())
    return float(np.max(highs)), float(np.min(lows))


def _np_quantile(V: np.ndarray) -> np.ndarray:
    quartiles = np.quantile(V, [0.25, 0.5, 0.75], axis=0, method="inverted_cdf")
    return np.vstack([quartiles, V.min(axis=0), V.max(axis=0)])


_ORIGINAL = {
    "max_min": missing._max_min, "scope": missing.scan_scope, "partition": frame._by_partition,
    "no_spin": (scoring.no_spin, batches.no_spin, unlabeled.no_spin),
}


def switch(variant: str) -> None:
    """Put bayesgen's modules in the state of ``variant`` ("as is" restores them)."""
    missing._max_min = _blocked_max_min if variant == "blocked-max-min" else _ORIGINAL["max_min"]
    missing.scan_scope = (contextlib.nullcontext if variant == "no-scope"
                          else _ORIGINAL["scope"])
    frame._by_partition = _np_quantile if variant == "np.quantile" else _ORIGINAL["partition"]
    spin = [contextlib.nullcontext] * 3 if variant == "no-no_spin" else _ORIGINAL["no_spin"]
    scoring.no_spin, batches.no_spin, unlabeled.no_spin = spin


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--only", action="append", choices=list(CASES))
    args = parser.parse_args(argv)
    cases = args.only or list(CASES)
    gauss, counts = gaussian_data(300_000, 30, 5, 0), count_data(300_000, 30, 5, 0)
    times: dict = {(c, v): [] for c in cases for v in VARIANTS}
    loads = []
    for r in range(args.rounds):
        order = VARIANTS[r % len(VARIANTS):] + VARIANTS[: r % len(VARIANTS)]
        for case in cases:
            X, y = counts if case == "MultinomialNB" else gauss
            for variant in order:
                switch(variant)
                kw = {"n_jobs": 2} if variant == "n_jobs=2" else {}
                if r == 0:
                    CASES[case](**kw).fit(X, y).predict_proba(X)  # warm-up
                c0, t0 = time.process_time(), time.perf_counter()
                CASES[case](**kw).fit(X, y).predict_proba(X)
                times[(case, variant)].append((time.perf_counter() - t0,
                                               time.process_time() - c0))
        loads.append(os.getloadavg()[0])
    switch("as is")
    print(f"bayesgen from {os.path.dirname(bg.__file__)}; {args.rounds} interleaved rounds; "
          f"1-minute load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPU(s)")
    print(f"{'case':<14}{'variant':<17}{'wall (ms)':>10}{'CPU (ms)':>10}{'CPU vs as is':>14}")
    for case in cases:
        base = statistics.median(cpu for _, cpu in times[(case, "as is")])
        for variant in VARIANTS:
            wall = statistics.median(w for w, _ in times[(case, variant)])
            cpu = statistics.median(c for _, c in times[(case, variant)])
            print(f"{case:<14}{variant:<17}{1e3 * wall:>10.1f}{1e3 * cpu:>10.1f}"
                  f"{100 * (cpu / base - 1):>+13.0f}%")


if __name__ == "__main__":
    main()
