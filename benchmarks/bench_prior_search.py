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

The third table (``--part stacked``) times ``bg.StackedClassifier().fit`` (its default
members LDA, QDA, QDA ``cov_target="isotropic"`` and QDA ``cov_structure="spherical"``,
``method="conjugate"`` keeping 2 x 250 posterior draws each, and ``weight_prior=1``)
against the sum of the four members' fits alone and
against ``LDA(method="conjugate").fit``, at N = 100,000 and on the first N = 2,000 rows
(d = 30, K = 5). The column "loo+weights s" times what the stack adds to its members'
fits: the exact leave-one-out class probabilities of every training row under every
member (:func:`bayesgen.inference.exact_loo.loo_log_joint`) and the weights
(:func:`bayesgen.estimators.stacking.stacking_weights` with the stack's default
``weight_prior`` as ``prior_rows``), on the fitted members.

Best of ``--repeats`` wall times per configuration, single process.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_prior_search.py [--repeats 5] \\
        [--part priors|structures|stacked|all]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy.special import logsumexp
from sklearn.base import clone

import bayesgen as bg
from bayesgen.estimators.stacking import default_estimators, stacking_weights
from bayesgen.inference import exact_loo

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


#: the row counts of the stacking table (the first rows of :func:`data`)
STACK_SIZES = (N, 2_000)


def loo_and_weights(members: list, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The stack's own work on fitted members: L_nm = log p_m(y_n | x_n, D without row n)
    of every row and member, (n, M), then the stacking weights under the stack's default
    Dirichlet prior (``weight_prior``), (M,)."""
    columns = []
    for est in members:
        joint, y_index = exact_loo.loo_log_joint(est, X, y)
        columns.append(joint[np.arange(y_index.size), y_index] - logsumexp(joint, axis=1))
    return stacking_weights(np.stack(columns, axis=1),
                            prior_rows=bg.StackedClassifier().weight_prior)


def stacked(X: np.ndarray, y: np.ndarray, repeats: int) -> None:
    """Print the table of ``StackedClassifier().fit`` against its members' fits (sum of
    the best-of times of each) and ``LDA(method="conjugate").fit``, seconds and ratios,
    and the time of the leave-one-out and weights alone."""
    # at N = 100,000 every member warns that idata_ can get no log_likelihood group
    # (4 x 1,000 x N values, above the 2 GB bound); the stack needs none
    warnings.filterwarnings("ignore", message=".*pointwise log-likelihood would hold")
    # warm-up (first-call imports and graph builds are not timed)
    bg.StackedClassifier().fit(X[:500], y[:500])
    print(f"{'N':>8} {'stacked s':>10} {'members s':>10} {'LDA s':>8} {'loo+weights s':>14} "
          f"{'/members':>9} {'/LDA':>6}")
    for n in STACK_SIZES:
        Xn, yn = X[:n], y[:n]
        t_stack = best_seconds(bg.StackedClassifier, Xn, yn, repeats)
        t_members = sum(best_seconds(lambda e=est: clone(e), Xn, yn, repeats)
                        for _, est in default_estimators())
        t_lda = best_seconds(lambda: bg.LDA(method="conjugate"), Xn, yn, repeats)
        fitted = [clone(est).fit(Xn, yn) for _, est in default_estimators()]
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            loo_and_weights(fitted, Xn, yn)
            times.append(time.perf_counter() - start)
        print(f"{n:>8,} {t_stack:10.3f} {t_members:10.3f} {t_lda:8.3f} {min(times):14.3f} "
              f"{t_stack / t_members:9.2f} {t_stack / t_lda:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--part", choices=("priors", "structures", "stacked", "all"),
                        default="all", help="the prior hyper-parameters table, the "
                        "structures table, the stacking table, or all three")
    args = parser.parse_args()
    X, y = data()
    print(f"N = {N:,}, d = {D}, K = {K}; best of {args.repeats}")
    if args.part in ("priors", "all"):
        priors(X, y, args.repeats)
    if args.part in ("structures", "all"):
        structures(X, y, args.repeats)
    if args.part in ("stacked", "all"):
        stacked(X, y, args.repeats)


if __name__ == "__main__":
    main()
