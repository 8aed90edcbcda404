"""Missing values: exact marginalisation against imputation, on wine and breast cancer.

For wine (13 features) and breast cancer (by default its 10 "mean ..." features, see
``--breast-features``), scikit-learn's bundled data sets, a stratified 70/30 train/test
split per seed, entries are removed from train *and* test at 10%, 30% and 50% of all
entries by one of two ignorable mechanisms:

- ``MCAR`` (missing completely at random): every entry independently with probability
  equal to the rate;
- ``MAR`` (missing at random): one column (the first: alcohol / mean radius) is always
  observed; every other entry of row i is missing with probability
  ``sigmoid(a + 2 z_i)``, z the standardised always-observed column, a solved so the
  expected fraction of missing entries of the whole table equals the rate (high values
  of the driver lose more entries; the missingness depends on an observed value only).

Compared, per estimator (bayesgen LDA, QDA and GaussianNB with ``method="map"``, and
GaussianNB and, on wine (``--augment-data``), LDA with ``method="conjugate"``; default
priors, ``cov_dof="auto"``):

- ``exact``: bayesgen fitted and evaluated on the data with gaps (missing entries
  integrated out: EM for LDA/QDA MAP, data augmentation for LDA conjugate, observed-entry
  statistics for GaussianNB);
- ``mean imp``: ``SimpleImputer(strategy="mean")`` fitted on the training X, applied to
  train and test, followed by the same estimator;
- ``iterative imp``: ``IterativeImputer(random_state=seed)`` (default settings, fitted
  on the training X, without the labels) followed by the same estimator;
- ``complete``: the same estimator on the same split without gaps (the reference).

Held-out log loss (probabilities clipped at 1e-15 as scikit-learn does) and accuracy,
mean and standard deviation over the seeds; EM iteration counts (``n_iter_``), the
maximum R-hat of the data-augmentation chains and the number of fits that warned
(bayesgen's ConvergenceWarning, scikit-learn's ConvergenceWarning of IterativeImputer).
Everything runs in one process (no parallel jobs).

Run::

    .venv/bin/python -m validation.missing_values --markdown validation/results_missing.md

``--quick`` (2 seeds, rates 10% and 50%, no LDA conjugate) is a smoke run.
"""

from __future__ import annotations

import argparse
import datetime
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import expit
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning
from sklearn.experimental import enable_iterative_imputer  # noqa: F401
from sklearn.impute import IterativeImputer, SimpleImputer
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split

import bayesgen as bg

RATES = (0.1, 0.3, 0.5)
MECHANISMS = ("MCAR", "MAR")
STRATEGIES = ("complete", "exact", "mean imp", "iterative imp")


def load(name: str, breast_features: str) -> tuple[np.ndarray, np.ndarray]:
    """X, y of a data set; breast cancer's first 10 columns are its "mean" features."""
    if name == "wine":
        return load_wine(return_X_y=True)
    X, y = load_breast_cancer(return_X_y=True)
    return (X[:, :10] if breast_features == "mean" else X), y


def estimators(draws: int, with_augment: bool) -> dict:
    """name -> factory(seed) of the compared bayesgen estimators."""
    out = {
        "LDA map": lambda s: bg.LDA(),
        "QDA map": lambda s: bg.QDA(),
        "GaussianNB map": lambda s: bg.GaussianNB(),
        "GaussianNB conjugate": lambda s: bg.GaussianNB(
            method="conjugate", draws=draws, chains=2, random_state=s, progressbar=False),
    }
    if with_augment:
        out["LDA conjugate"] = lambda s: bg.LDA(
            method="conjugate", draws=draws, tune=draws, chains=2, random_state=s,
            progressbar=False)
    return out


def remove(X: np.ndarray, rate: float, mechanism: str, z: np.ndarray,
           rng: np.random.Generator) -> np.ndarray:
    """X with entries set to NaN (module docstring); ``z`` the standardised driver
    column (column 0), which MAR never removes."""
    if mechanism == "MCAR":
        return np.where(rng.random(X.shape) < rate, np.nan, X)
    d = X.shape[1]
    target = rate * d / (d - 1)  # the driver column is always observed
    a = brentq(lambda a: expit(a + 2.0 * z).mean() - target, -50.0, 50.0)
    p = expit(a + 2.0 * z)[:, None]
    gone = rng.random(X.shape) < p
    gone[:, 0] = False
    return np.where(gone, np.nan, X)


def evaluate(factory, seed: int, Xtr, ytr, Xte, yte) -> dict:
    """Fit, predict and record metrics, warnings, EM iterations and R-hat."""
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = factory(seed).fit(Xtr, ytr)
        proba = clf.predict_proba(Xte)
    if not np.all(np.isfinite(proba)):
        raise FloatingPointError("predict_proba returned a non-finite value")
    out = {
        "log_loss": log_loss(yte, proba, labels=clf.classes_),
        "accuracy": accuracy_score(yte, clf.classes_[proba.argmax(1)]),
        "seconds": time.perf_counter() - start,
        "n_iter": getattr(clf, "n_iter_", np.nan),
        "bg_warnings": sum(issubclass(w.category, bg.ConvergenceWarning) for w in caught),
        "rhat": np.nan,
    }
    idata = getattr(clf, "idata_", None)
    if idata is not None and "sample_stats" in idata and "lp" in idata.sample_stats:
        import arviz as az  # data augmentation: chains of a Gibbs sampler

        out["rhat"] = float(az.rhat(idata.posterior).to_array().max())
    return out


def impute(kind: str, seed: int, Xtr, Xte) -> tuple[np.ndarray, np.ndarray, int]:
    """The training and test X imputed by an imputer fitted on the training X, and the
    number of scikit-learn ConvergenceWarnings."""
    imputer = (SimpleImputer(strategy="mean") if kind == "mean imp"
               else IterativeImputer(random_state=seed))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        imputer.fit(Xtr)
        out = imputer.transform(Xtr), imputer.transform(Xte)
    n_warn = sum(issubclass(w.category, SkConvergenceWarning) for w in caught)
    return *out, n_warn


def run(seeds: int, rates: tuple[float, ...], data: list[str], breast_features: str,
        draws: int, augment_data: list[str], log=print) -> pd.DataFrame:
    """One row per (data, mechanism, rate, seed, estimator, strategy); LDA
    ``method="conjugate"`` on the data sets in ``augment_data`` only."""
    rows = []
    for name in data:
        factories = estimators(draws, name in augment_data)
        X, y = load(name, breast_features)
        z_all = (X[:, 0] - X[:, 0].mean()) / X[:, 0].std()
        for seed in range(seeds):
            tr, te = train_test_split(np.arange(y.size), test_size=0.3, stratify=y,
                                      random_state=seed)
            base = {"data": name, "seed": seed}
            for est, factory in factories.items():
                r = evaluate(factory, seed, X[tr], y[tr], X[te], y[te])
                for mechanism in MECHANISMS:  # the reference, repeated for each cell
                    for rate in rates:
                        rows.append({**base, "mechanism": mechanism, "rate": rate,
                                     "estimator": est, "strategy": "complete", **r})
            for mechanism in MECHANISMS:
                for rate in rates:
                    rng = np.random.default_rng([seed, int(rate * 100),
                                                 MECHANISMS.index(mechanism)])
                    Xtr = remove(X[tr], rate, mechanism, z_all[tr], rng)
                    Xte = remove(X[te], rate, mechanism, z_all[te], rng)
                    cell = {**base, "mechanism": mechanism, "rate": rate,
                            "missing": float(np.isnan(Xtr).mean())}
                    imputed = {k: impute(k, seed, Xtr, Xte) for k in STRATEGIES[2:]}
                    t0 = time.perf_counter()
                    for est, factory in factories.items():
                        r = evaluate(factory, seed, Xtr, y[tr], Xte, y[te])
                        rows.append({**cell, "estimator": est, "strategy": "exact", **r})
                        for kind, (A, B, n_warn) in imputed.items():
                            r = evaluate(factory, seed, A, y[tr], B, y[te])
                            rows.append({**cell, "estimator": est, "strategy": kind, **r,
                                         "sk_warnings": n_warn})
                    log(f"{name} seed {seed} {mechanism} {rate:.0%}: "
                        f"{time.perf_counter() - t0:.1f} s")
    return pd.DataFrame(rows)


def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over seeds per (data, mechanism, rate, estimator,
    strategy), plus EM iterations, R-hat and warning counts."""
    keys = ["data", "mechanism", "rate", "estimator", "strategy"]
    g = results.groupby(keys, sort=False)
    out = g[["log_loss", "accuracy", "seconds"]].mean()
    out["log_loss_sd"] = g["log_loss"].std()
    out["accuracy_sd"] = g["accuracy"].std()
    out["n_iter_median"] = g["n_iter"].median()
    out["n_iter_max"] = g["n_iter"].max()
    out["rhat_max"] = g["rhat"].max()
    out["bg_warned"] = g["bg_warnings"].apply(lambda s: int((s > 0).sum()))
    out["sk_warned"] = g["sk_warnings"].apply(lambda s: int((s > 0).sum())) \
        if "sk_warnings" in results else 0
    out["fits"] = g["log_loss"].count()
    return out.reset_index()


def _cell(r: pd.Series, metric: str, best: bool) -> str:
    text = f"{r[metric]:.3f} ± {r[metric + '_sd']:.3f}"
    return f"**{text}**" if best else text


def markdown_table(table: pd.DataFrame, metric: str) -> str:
    """One line per (data, mechanism, rate, estimator); the best of exact / mean imp /
    iterative imp in bold (lowest log loss, highest accuracy)."""
    head = ["data", "missing", "estimator", *STRATEGIES]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    keys = ["data", "mechanism", "rate", "estimator"]
    for (data, mech, rate, est), sub in table.groupby(keys, sort=False):
        by = sub.set_index("strategy")
        gap = by.loc[list(STRATEGIES[1:]), metric]
        best = gap.idxmin() if metric == "log_loss" else gap.idxmax()
        cells = [_cell(by.loc[s], metric, s == best) for s in STRATEGIES]
        lines.append("| " + " | ".join([data, f"{mech} {rate:.0%}", est, *cells]) + " |")
    return "\n".join(lines)


def diagnostics_table(table: pd.DataFrame) -> str:
    """EM iterations, R-hat, warnings and fit time of the exact fits."""
    head = ["data", "missing", "estimator", "EM n_iter_ median (max)",
            "R-hat max", "fits that warned", "seconds per fit"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    exact = table[table["strategy"] == "exact"]
    for _, r in exact.iterrows():
        em = ("" if np.isnan(r["n_iter_median"])
              else f"{r['n_iter_median']:.0f} ({r['n_iter_max']:.0f})")
        rhat = "" if np.isnan(r["rhat_max"]) else f"{r['rhat_max']:.2f}"
        lines.append("| " + " | ".join([
            r["data"], f"{r['mechanism']} {r['rate']:.0%}", r["estimator"], em, rhat,
            f"{r['bg_warned']}/{r['fits']}", f"{r['seconds']:.2f}"]) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--rates", type=float, nargs="+", default=list(RATES))
    parser.add_argument("--data", nargs="+", choices=["wine", "breast cancer"],
                        default=["wine", "breast cancer"])
    parser.add_argument("--breast-features", choices=["mean", "all"], default="mean",
                        help="breast cancer: its 10 'mean' features (default) or all 30 "
                        "(EM's cost per iteration grows with patterns x d^3: minutes)")
    parser.add_argument("--draws", type=int, default=200,
                        help="draws (and tuning iterations) per chain, 2 chains")
    parser.add_argument("--augment-data", nargs="*", choices=["wine", "breast cancer"],
                        default=["wine"], help="data sets on which LDA method='conjugate' "
                        "(data augmentation, the slow part) runs")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 2 seeds, rates 10%% and 50%%, no LDA conjugate")
    parser.add_argument("--csv", type=Path, default=None, help="write the raw results")
    parser.add_argument("--markdown", type=Path, default=None, help="write the tables")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.rates, args.augment_data = 2, [0.1, 0.5], []
    start = time.perf_counter()
    results = run(args.seeds, tuple(args.rates), args.data, args.breast_features,
                  args.draws, args.augment_data)
    minutes = (time.perf_counter() - start) / 60.0
    table = summarise(results)
    if args.csv is not None:
        results.to_csv(args.csv, index=False)
    text = "\n\n".join([
        "## Held-out log loss (mean ± sd over seeds; bold: best way to handle the gaps)",
        markdown_table(table, "log_loss"),
        "## Held-out accuracy (mean ± sd over seeds)",
        markdown_table(table, "accuracy"),
        "## Exact fits: EM iterations, data augmentation R-hat, warnings, time",
        diagnostics_table(table),
    ])
    print(text)
    argv_text = " ".join(argv) if argv is not None else " ".join(__import__("sys").argv[1:])
    print(f"\n{minutes:.1f} minutes")
    if args.markdown is not None:
        args.markdown.write_text(
            "# Missing values: exact marginalisation against imputation\n\n"
            f"Generated {datetime.date.today().isoformat()} in {minutes:.1f} minutes by\n\n"
            f"    .venv/bin/python -m validation.missing_values {argv_text}\n\n"
            + SETUP + "\n\n" + text + "\n")


#: the set-up paragraph of the markdown file (the discussion below the tables is
#: written by hand from the numbers and must be refreshed after a rerun)
SETUP = (
    "One process on 2 shared cores (timings noisy). Wine: 13 features, 3 classes, 124\n"
    "training rows (about 41 per class); breast cancer: its 10 \"mean\" features, 2 classes,\n"
    "398 training rows; 5 stratified 70/30 splits; the same gaps in train and test;\n"
    "`method=\"conjugate\"` with the script's draws per chain x 2 chains. \"exact\": bayesgen\n"
    "on the data with gaps (LDA/QDA `cov_dof=\"auto\"`, the fixed-point rule); \"mean imp\" /\n"
    "\"iterative imp\": scikit-learn's SimpleImputer(mean) / IterativeImputer fitted on the\n"
    "training X, then the same estimator; \"complete\": the same estimator on the same\n"
    "split without gaps."
)

if __name__ == "__main__":
    main()
