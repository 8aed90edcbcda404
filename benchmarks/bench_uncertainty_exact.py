"""Cost of the uncertainty decomposition of conjugate fits: exact draws given each row
against the weighted draws (what BALD ranks pools with), and the Kish effective sample
size of the weights as the row moves away from the data.

    OMP_NUM_THREADS=1 python benchmarks/bench_uncertainty_exact.py

Prints, per estimator on iris (150 training rows, 150 rows decomposed, 1,000 draws per
class for the exact decomposition, 4,000 weighted draws): wall and CPU seconds of each,
then for GaussianNB the weights' median ESS and the exact decomposition's aleatoric
term at 0 to 12 standard deviations from the class-0 mean.
"""

from __future__ import annotations

import time
import warnings
from functools import partial

from sklearn.datasets import load_iris

import bayesgen as bg
from bayesgen.decide import uncertainty


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    X, y = load_iris(return_X_y=True)
    print("estimator | exact: wall (cpu) s | weighted: wall (cpu) s")
    for name in ("GaussianNB", "LDA", "QDA", "MultinomialNB"):
        est = getattr(bg, name)(method="conjugate", random_state=0).fit(X, y)
        Xv = est._check_X_predict(X)
        _, w1, c1 = _timed(partial(uncertainty.decompose_rows, est, Xv))
        _, w2, c2 = _timed(partial(uncertainty.decompose_rows, est, Xv, exact=False,
                                   warn_ess=False))
        print(f"{name} | {w1:.2f} ({c1:.2f}) | {w2:.2f} ({c2:.2f})")
    est = bg.GaussianNB(method="conjugate", random_state=0).fit(X, y)
    centre, sd = X[y == 0].mean(axis=0), X[y == 0].std(axis=0)
    print("\nGaussianNB, row at class-0 mean + t sd (every feature):")
    print("t | weighted ESS of 4,000 | weighted aleatoric | exact aleatoric | exact ESS")
    for t in (0, 2, 4, 6, 8, 12):
        row = (centre + t * sd)[None]
        Xv = est._check_X_predict(row)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bg.DataWarning)
            w = uncertainty.decompose_rows(est, Xv, exact=False)
        e = uncertainty.decompose_rows(est, Xv)
        print(f"{t} | {w.ess[0]:.1f} | {w.aleatoric[0]:.4g} | {e.aleatoric[0]:.4g} | "
              f"{e.ess[0]:.0f}")


if __name__ == "__main__":
    main()
