"""Closed-form predictive and exact leave-one-out of the discrete and count families.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_conjugate_algebra.py [--repeats 5]

Data (fixed seed): a text-like CSR count matrix, 5,000 x 2,000 with 1% non-zeros
(counts 1 + Poisson(1)), and a dense 20,000 x 50 matrix (counts Poisson(2) for the
count families, their binarisation for BernoulliNB, durations Exponential(1) for
ExponentialNB, codes 0..4 for CategoricalNB), K = 3 classes. For every family that
takes the matrix, ``method="conjugate"``: the wall time of ``predict_proba(X)`` and of
the exact leave-one-out (``elpd_loo`` pointwise terms and the leave-one-out class
probabilities of every row), median of ``--repeats`` runs after one warm-up, with the
CPU time (user + system of this process) of the same runs.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import scipy.sparse as sp

import bayesgen as bg
from bayesgen.inference import exact_loo


def data(seed: int = 0):
    rng = np.random.default_rng(seed)
    n, d = 5000, 2000
    nnz = n * d // 100
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, d, nnz)
    X_sparse = sp.csr_matrix((1.0 + rng.poisson(1.0, nnz), (rows, cols)), shape=(n, d))
    X_sparse.sum_duplicates()
    y_sparse = rng.integers(0, 3, n)
    N, D = 20000, 50
    counts = rng.poisson(2.0, (N, D)).astype(float)
    dense = {"counts": counts, "binary": (counts > 1).astype(float),
             "durations": rng.exponential(1.0, (N, D)),
             "codes": rng.integers(0, 5, (N, D)).astype(float)}
    return X_sparse, y_sparse, dense, rng.integers(0, 3, N)


def timed(fn, repeats: int) -> tuple[float, float]:
    fn()
    wall, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), os.times()
        fn()
        c1 = os.times()
        wall.append(time.perf_counter() - t0)
        cpu.append(c1.user - c0.user + c1.system - c0.system)
    return float(np.median(wall)), float(np.median(cpu))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # idata_ size notes of the big fits
    X_sparse, y_sparse, dense, y_dense = data()
    cases = [
        ("MultinomialNB", "sparse", X_sparse, y_sparse),
        ("BernoulliNB", "sparse", X_sparse, y_sparse),
        ("PoissonNB", "sparse", X_sparse, y_sparse),
        ("MultinomialNB", "dense", dense["counts"], y_dense),
        ("BernoulliNB", "dense", dense["binary"], y_dense),
        ("PoissonNB", "dense", dense["counts"], y_dense),
        ("ExponentialNB", "dense", dense["durations"], y_dense),
        ("CategoricalNB", "dense", dense["codes"], y_dense),
    ]
    print(f"{'estimator':14s} {'X':7s} {'what':14s} {'wall s':>8s} {'cpu s':>8s}")
    for name, kind, X, y in cases:
        est = getattr(bg, name)(method="conjugate").fit(X, y)
        for what, fn in (
            ("predict_proba", lambda est=est, X=X: est.predict_proba(X)),
            ("loo pointwise", lambda est=est: exact_loo.pointwise(est)),
            ("loo every k", lambda est=est: exact_loo.loo_log_joint(est)),
        ):
            wall, cpu = timed(fn, args.repeats)
            print(f"{name:14s} {kind:7s} {what:14s} {wall:8.4f} {cpu:8.4f}", flush=True)


if __name__ == "__main__":
    main()
