"""Cost of choosing the prior by the evidence: ``"auto"`` against fixed hyper-parameters.

LDA, QDA and GaussianNB fitted (``method="map"`` and ``"conjugate"``) on N = 100,000
rows, d = 30, K = 5, with every prior hyper-parameter fixed (``cov_dof=40``,
``cov_scale=1``; GaussianNB ``var_dof=3``) and with both chosen by the exact evidence
(``cov_dof="auto", cov_scale="auto"``, which also scores mclust's structures;
``var_dof="auto", var_scale="auto"``), and LDA/QDA with ``cov_dof="auto"`` alone (the
default, rows "dof"). The search
runs on the sufficient statistics (one eigen-decomposition per covariance group, then
O(d) per evaluation), so its cost does not grow with N: the target is a ratio <= 2.

The second table (``--part structures``) times the covariance structure chosen or
averaged by the evidence: LDA and QDA with ``cov_structure="auto"`` (the spherical,
diagonal and full structures scored by their exact evidences, the best fitted),
``"average"`` (the three posterior predictives averaged) and ``"diag"`` alone, each at
the estimator's default prior (LDA ``cov_dof="oas"``, QDA ``cov_dof="auto"``), against
the full structure with every hyper-parameter fixed (``cov_structure="full",
cov_dof=40, cov_scale=1, mean_strength=0.01``); ``method="map"`` and ``"conjugate"``
with ``draws=1000, chains=1``. Target: ratio <= 2.

Best of ``--repeats`` wall times per configuration, single process.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_prior_search.py [--repeats 5] \\
        [--part priors|structures|all]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import bayesgen as bg

N, D, K = 100_000, 30, 5


def data() -> tuple[np.ndarray, np.ndarray]:
    """K Gaussian classes with a shared correlated covariance (condition number ~100)."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, K, size=N)
    Q, _ = np.linalg.qr(rng.normal(size=(D, D)))
    chol = Q @ np.diag(np.logspace(0, 1, D))
    X = rng.normal(scale=2.0, size=(K, D))[y] + rng.normal(size=(N, D)) @ chol.T
    return X, y


def best_seconds(make, X, y, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        make().fit(X, y)
        times.append(time.perf_counter() - start)
    return min(times)


def priors(X: np.ndarray, y: np.ndarray, repeats: int) -> None:
    """Print the table of fixed against evidence-chosen prior hyper-parameters."""
    common = {"draws": 250, "chains": 4, "random_state": 0, "progressbar": False}
    settings = {
        "LDA": (bg.LDA, {"cov_dof": 40.0, "cov_scale": 1.0},
                {"cov_dof": "auto", "cov_scale": "auto"}),
        "LDA dof": (bg.LDA, {"cov_dof": 40.0}, {"cov_dof": "auto"}),
        "QDA": (bg.QDA, {"cov_dof": 40.0, "cov_scale": 1.0},
                {"cov_dof": "auto", "cov_scale": "auto"}),
        "QDA dof": (bg.QDA, {"cov_dof": 40.0}, {"cov_dof": "auto"}),
        "GaussianNB": (bg.GaussianNB, {"var_dof": 3.0},
                       {"var_dof": "auto", "var_scale": "auto"}),
    }
    print(f"{'model':<11} {'method':<10} {'fixed s':>9} {'auto s':>9} {'ratio':>6}")
    # warm-up: first-call imports (scipy.optimize) are not timed
    for cls, _fixed, auto in settings.values():
        cls(method="map", **auto).fit(X[:2000], y[:2000])
    for name, (cls, fixed, auto) in settings.items():
        for method in ("map", "conjugate"):
            t_fixed = best_seconds(lambda c=cls, f=fixed, m=method: c(method=m, **f, **common),
                                   X, y, repeats)
            t_auto = best_seconds(lambda c=cls, a=auto, m=method: c(method=m, **a, **common),
                                  X, y, repeats)
            print(f"{name:<11} {method:<10} {t_fixed:9.3f} {t_auto:9.3f} "
                  f"{t_auto / t_fixed:6.2f}")


#: the full structure with every prior hyper-parameter fixed (no search)
FIXED_FULL = {"cov_structure": "full", "cov_dof": 40.0, "cov_scale": 1.0,
              "mean_strength": 0.01}
#: the structure options timed against it, at the estimator's default prior
STRUCTURE_OPTIONS = ("auto", "average", "diag")


def structures(X: np.ndarray, y: np.ndarray, repeats: int) -> None:
    """Print the table of the fixed full structure against ``cov_structure`` in
    ``STRUCTURE_OPTIONS``: seconds and the ratio to the fixed fit."""
    common = {"draws": 1000, "chains": 1, "random_state": 0, "progressbar": False}
    # warm-up (first-call imports and graph builds are not timed)
    for cls in (bg.LDA, bg.QDA):
        for method in ("map", "conjugate"):
            cls(method=method, **FIXED_FULL, **common).fit(X[:2000], y[:2000])
            for option in STRUCTURE_OPTIONS:
                cls(method=method, cov_structure=option, **common).fit(X[:2000], y[:2000])
    header = " ".join(f"{o + ' s':>10} {'ratio':>6}" for o in STRUCTURE_OPTIONS)
    print(f"{'model':<6} {'method':<10} {'fixed s':>9} {header}")
    for cls in (bg.LDA, bg.QDA):
        for method in ("map", "conjugate"):
            t_fixed = best_seconds(lambda c=cls, m=method: c(method=m, **FIXED_FULL, **common),
                                   X, y, repeats)
            cells = []
            for option in STRUCTURE_OPTIONS:
                t = best_seconds(lambda c=cls, m=method, o=option:
                                 c(method=m, cov_structure=o, **common), X, y, repeats)
                cells.append(f"{t:10.3f} {t / t_fixed:6.2f}")
            print(f"{cls.__name__:<6} {method:<10} {t_fixed:9.3f} {' '.join(cells)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--part", choices=("priors", "structures", "all"), default="all",
                        help="the prior hyper-parameters table, the structures table, or both")
    args = parser.parse_args()
    X, y = data()
    print(f"N = {N:,}, d = {D}, K = {K}; best of {args.repeats}")
    if args.part in ("priors", "all"):
        priors(X, y, args.repeats)
    if args.part in ("structures", "all"):
        structures(X, y, args.repeats)


if __name__ == "__main__":
    main()
