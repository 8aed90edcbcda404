"""CPU and wall time of LDA / QDA ``fit`` + ``predict_proba`` with and without missing
entries (NaN), per method.

Data (fixed seed): N = 20,000 rows, d = 8, K = 3 Gaussian classes; the gaps variant sets
3% of the entries to NaN (about 22% of the rows have a gap); ``predict_proba`` (both
variants) on the first 5,000 rows with their gaps. Methods: ``mle`` and ``map`` (EM with gaps),
``map`` at the default ``cov_dof="auto"`` ("map-auto": the fixed point over
EM-completed statistics with gaps), and ``conjugate`` (data augmentation with gaps,
2 chains x 200 draws). Reported per case: the median CPU time (``process_time``, all
threads) and wall time of ``--repeats`` runs after one discarded warm-up. To compare
two trees, run it on each in turn (and in the other order), e.g.::

    PYTHONPATH=. .venv/bin/python benchmarks/bench_missing_mvn.py --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

import bayesgen as bg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    n, d, k = 20_000, 8, 3
    y = np.repeat(np.arange(k), n // k)
    X = rng.normal(size=(y.size, d)) + y[:, None] * 0.7
    Xg = X.copy()
    Xg[rng.random(X.shape) < 0.03] = np.nan
    cases = [("mle", "mle", {}), ("map", "map", {"cov_dof": 12.0}), ("map-auto", "map", {}),
             ("conjugate", "conjugate", {"cov_dof": 12.0, "draws": 200, "chains": 2,
                                          "random_state": 0})]
    for name, cls in (("LDA", bg.LDA), ("QDA", bg.QDA)):
        for label, method, kw in cases:
            for tag, data in (("complete", X), ("gaps", Xg)):
                cpu, wall = [], []
                for _ in range(args.repeats + 1):
                    t0, c0 = time.perf_counter(), time.process_time()
                    cls(method=method, **kw).fit(data, y).predict_proba(Xg[:5000])
                    cpu.append(time.process_time() - c0)
                    wall.append(time.perf_counter() - t0)
                print(f"{name:4s} {label:10s} {tag:9s} CPU {statistics.median(cpu[1:]):.4f} s"
                      f"  wall {statistics.median(wall[1:]):.4f} s", flush=True)


if __name__ == "__main__":
    main()
