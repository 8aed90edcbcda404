"""Benchmark of bayesgen.decide: BALD over a large pool, no-split and jackknife+ sets.

Measures, in one run on this machine (median of ``--repeats`` timed runs after a
warm-up, single-threaded):

1. BALD (``bg.acquisition_scores(est, X_pool, "bald")``, i.e. the mutual information of
   every pool row from the per-draw joint densities) over a pool of 100,000 rows,
   d = 10, K = 3, for ``GaussianNB``, ``LDA`` and ``QDA`` fitted with
   ``method="conjugate"`` and the default 4 x 1,000 draws: with all 4,000 draws
   (``max_draws=None``) and with the default ``max_draws=500``.
   Cost O(pool x draws x K x cost of one density): linear in the pool and the draws.
   Goal: seconds, not minutes. Also ``select_queries`` of a batch of 10 (scores plus
   the greedy diversity rule).
2. BatchBALD (``bg.select_queries(est, X_pool, 10, "batchbald")``) over a pool of
   10,000 rows, same data and fits, default 500 draws and 1,000 label configurations,
   against the greedy-distance BALD batch of the same size. One greedy step costs
   O(pool x draws x K x C), C = K^i configurations while K^(i+1) <= 1,000, else 1,000
   sampled ones: for K = 3 the steps 1..5 are exact, 6..9 sampled.
3. No-split conformal sets (``predict_set(calibration="loo")``) of
   ``GaussianNB(method="conjugate")``: time against the training rows n (calibration
   = the closed-form leave-one-out predictive of every training row: O(n K d), no
   refit) at 1,000 test rows, and against the test rows m at n = 10,000 (O(m K d)
   predictive plus O(n) for the quantile); the time of one fit is printed alongside,
   and the n refits a brute-force leave-one-out would need cost about n times it.
4. Jackknife+ conformal sets (``predict_set(calibration="jackknife+")``) of
   ``GaussianNB`` and ``LDA`` (``method="conjugate"``): every test row scored by the
   posterior without each training row, in closed form (no refit). Cost O(n m d) for
   GaussianNB (the downdated class of each training row at each test row; the other
   classes are the full-data predictive) and O(n m K d) for LDA (the shared covariance
   changes every class: one n x (m K) product of whitened rows), plus O(n m K log K)
   for the scores, and memory n x chunk x K (test rows in chunks): linear in the
   training rows n at fixed m, and in the test rows m at fixed n. Time against n at
   m = 200 test rows and against m at n = 1,000, with "loo" alongside. A brute-force
   jackknife+ needs n refits and n predictions of the m rows.

Run::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_decide.py [--repeats 3] [--quick]
        [--only bald|batchbald|conformal|jackknife]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import bayesgen as bg


def _median_time(fn, repeats: int) -> str:
    fn()  # warm-up
    return _timed(fn, repeats)


def _timed(fn, repeats: int) -> str:
    """"wall (cpu)": median wall and CPU seconds (``time.process_time``, this process)
    of ``repeats`` runs, no warm-up. On a shared machine the CPU time is the steadier."""
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return f"{np.median(wall):.2f} ({np.median(cpu):.2f})"


def _data(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    centres = rng.normal(scale=1.5, size=(3, d))
    return centres[y] + rng.normal(size=(n, d)), y


def bald(repeats: int, pool_rows: int) -> None:
    X, y = _data(300, 10)
    pool = _data(pool_rows, 10, seed=1)[0]
    print(f"\n## BALD over a pool of {pool_rows:,} rows, d = 10, K = 3: wall (CPU) seconds\n")
    print("| estimator | acquisition_scores, 4,000 draws | acquisition_scores, 500 draws "
          "(default) | select_queries(10), 500 draws |")
    print("|---|---|---|---|")
    for cls in (bg.GaussianNB, bg.LDA, bg.QDA):
        est = cls(method="conjugate", random_state=0).fit(X, y)
        bg.acquisition_scores(est, pool[:1000], "bald")  # warm-up
        t_all = _timed(lambda est=est: bg.acquisition_scores(est, pool, "bald", max_draws=None),
                       repeats)
        t_500 = _timed(lambda est=est: bg.acquisition_scores(est, pool, "bald"), repeats)
        t_select = _timed(lambda est=est: bg.select_queries(est, pool, 10, "bald",
                                                             random_state=0), repeats)
        print(f"| {cls.__name__} | {t_all} | {t_500} | {t_select} |", flush=True)


def batchbald(repeats: int, pool_rows: int, batch: int = 10) -> None:
    X, y = _data(300, 10)
    pool = _data(pool_rows, 10, seed=1)[0]
    print(f"\n## A batch of {batch} from a pool of {pool_rows:,} rows, d = 10, K = 3, 500 draws: "
          "wall (CPU) seconds\n")
    print(f"| estimator | select_queries({batch}, 'bald') | "
          f"select_queries({batch}, 'batchbald') |")
    print("|---|---|---|")
    for cls in (bg.GaussianNB, bg.LDA, bg.QDA):
        est = cls(method="conjugate", random_state=0).fit(X, y)
        bg.acquisition_scores(est, pool[:1000], "bald")  # warm-up
        t_bald = _timed(lambda est=est: bg.select_queries(est, pool, batch, "bald",
                                                           random_state=0), repeats)
        t_batch = _timed(lambda est=est: bg.select_queries(est, pool, batch, "batchbald",
                                                            random_state=0), repeats)
        print(f"| {cls.__name__} | {t_bald} | {t_batch} |", flush=True)


def conformal(repeats: int, sizes: list[int], test_sizes: list[int]) -> None:
    print("\n## No-split conformal sets of GaussianNB(method='conjugate'), d = 10, K = 3: "
          "wall (CPU) seconds\n")
    print("| training rows n | test rows m | one fit | predict_set loo | "
          "predict_set split, n/2 calibration rows |")
    print("|---|---|---|---|---|")
    cases = [(n, 1000) for n in sizes] + [(sizes[-1], m) for m in test_sizes]
    for n, m in cases:
        X, y = _data(n, 10)
        X_test = _data(m, 10, seed=2)[0]
        fit = lambda X=X, y=y: bg.GaussianNB(method="conjugate", draws=100, chains=1,  # noqa: E731
                                             random_state=0).fit(X, y)
        t_fit = _median_time(fit, repeats)
        est = fit()
        t_loo = _median_time(lambda est=est, X=X, y=y, X_test=X_test: est.predict_set(
            X_test, confidence_level=0.9, calibration="loo", X_calib=X, y_calib=y), repeats)
        t_split = _median_time(lambda est=est, X=X, y=y, X_test=X_test, n=n: est.predict_set(
            X_test, confidence_level=0.9, X_calib=X[: n // 2], y_calib=y[: n // 2]), repeats)
        print(f"| {n:,} | {m:,} | {t_fit} | {t_loo} | {t_split} |", flush=True)


def jackknife(repeats: int, sizes: list[int], test_sizes: list[int]) -> None:
    print("\n## Jackknife+ conformal sets, method='conjugate', d = 10, K = 3: wall (CPU) "
          "seconds\n")
    print("| estimator | training rows n | test rows m | one fit | predict_set loo | "
          "predict_set jackknife+ | n x m x d (millions) |")
    print("|---|---|---|---|---|---|---|")
    cases = [(n, test_sizes[0]) for n in sizes] + [(sizes[0], m) for m in test_sizes[1:]]
    for cls in (bg.GaussianNB, bg.LDA):
        for n, m in cases:
            X, y = _data(n, 10)
            X_test = _data(m, 10, seed=2)[0]
            fit = lambda X=X, y=y, cls=cls: cls(method="conjugate", draws=100,  # noqa: E731
                                                chains=1, random_state=0).fit(X, y)
            t_fit = _median_time(fit, repeats)
            est = fit()
            t_loo = _median_time(lambda est=est, X=X, y=y, X_test=X_test: est.predict_set(
                X_test, confidence_level=0.9, calibration="loo", X_calib=X, y_calib=y), repeats)
            t_jk = _median_time(lambda est=est, X=X, y=y, X_test=X_test: est.predict_set(
                X_test, confidence_level=0.9, calibration="jackknife+", X_calib=X,
                y_calib=y), repeats)
            print(f"| {cls.__name__} | {n:,} | {m:,} | {t_fit} | {t_loo} | {t_jk} | "
                  f"{n * m * 10 / 1e6:g} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="pool of 10,000 rows")
    parser.add_argument("--only", choices=("bald", "batchbald", "conformal", "jackknife"),
                        default=None, help="run one of the four parts")
    args = parser.parse_args(argv)
    print(f"bayesgen {bg.__version__} from {os.path.dirname(bg.__file__)}; load average "
          f"{os.getloadavg()[0]:.2f}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        if args.only in (None, "bald"):
            bald(args.repeats, 10_000 if args.quick else 100_000)
        if args.only in (None, "batchbald"):
            batchbald(args.repeats, 10_000)
        if args.only in (None, "conformal"):
            conformal(args.repeats,
                      [1_000, 10_000, 100_000] if not args.quick else [1_000, 10_000],
                      [10_000, 100_000] if not args.quick else [10_000])
        if args.only in (None, "jackknife"):
            jackknife(args.repeats, [1_000, 2_000, 4_000] if not args.quick else [500, 1_000],
                      [200, 400, 800] if not args.quick else [200, 400])
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
