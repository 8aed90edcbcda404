"""Few rows, many features: held-out log loss at 10 and 20 rows per class.

Question: is any default posterior predictive more confident than the data allow when
there are few rows per class for the number of features, and how does the stack compare
with the best tuned scikit-learn model there?

Cells (``CELLS``; n = training rows per class; a bundled cell tests on the rest of its
rows, a generated cell on 2,000 fresh rows of the same generator, the generating
parameters drawn afresh in every split):

- scikit-learn's bundled ``iris`` (d = 4), ``wine`` (13), ``breast cancer`` (30) and
  ``digits 0-4`` (the digits 0 to 4, 64 raw pixels, several constant);
- ``dense d=60``: 2 Gaussian classes sharing a covariance that is a random rotation of
  variances log-spaced over [0.1, 10], the class means +-delta/2 with delta a random
  direction of Mahalanobis length 3 (Bayes log loss about 0.16);
- ``sparse d=60``: as ``dense``, the mean difference on 3 of the 60 coordinates
  (Mahalanobis length 3);
- ``noise d=60``: as ``dense`` with equal class means (nothing to learn: the class
  frequencies are the best prediction).

Models: ``bg.StackedClassifier()`` (its defaults) and each of its default members alone
(``bg.LDA()``, ``bg.LDA(mean_strength="auto")``, ``bg.QDA()``,
``bg.QDA(cov_target="isotropic")``, ``bg.QDA(cov_structure="spherical")``, and the class
frequencies, ``bg.LDA(cov_structure="spherical", mean_strength=1e12)``), bg ``LDA()``
and ``GaussianNB()`` at the estimators' defaults (all ``method="conjugate"``);
scikit-learn's ``LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto")``,
``QuadraticDiscriminantAnalysis`` with ``reg_param`` or (``solver="eigen"``)
``shrinkage`` tuned by 3-fold cross-validated log loss over 0.01-0.95
(``GridSearchCV``, the prior study's grid), ``GaussianNB``,
``LogisticRegressionCV`` (standardised; C by 3-fold cross-validated log loss) and
``DummyClassifier(strategy="prior")`` (the class frequencies).

"best sk" is the lowest mean log loss of the four tuned scikit-learn models in a cell;
"stack / best" divides the stack's by it (the goal: <= 1 in at least 92% of cells,
never above 1.1). "/ freq" divides a bayesgen default predictive's mean log loss by the
class frequencies' (the goal: never above 1.05). Log loss uses probabilities clipped at
1e-15 as scikit-learn does. The members keep 20 posterior draws (their class
probabilities are the closed-form predictive, which does not depend on the draws).

Run from the repository root (single process; the time of a run is written in the
page)::

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python validation/small_n.py \\
        --splits 3 --markdown validation/results_small_n.md
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from scipy.special import logsumexp
from scipy.stats import ortho_group
from sklearn import discriminant_analysis as skda
from sklearn import naive_bayes as sknb
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegressionCV
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import bayesgen as bg
from bayesgen.estimators.stacking import (
    class_log_prior,
    default_estimators,
    loo_one_unit,
    loo_temperature,
    stacking_weights,
    tempered,
)

#: (data set, n per class)
CELLS = [(name, n) for name in ("iris", "wine", "breast cancer", "digits 0-4",
                                "dense d=60", "sparse d=60", "noise d=60")
         for n in (10, 20)]
BUNDLED = {"iris": load_iris, "wine": load_wine, "breast cancer": load_breast_cancer,
           "digits 0-4": load_digits}
N_TEST = 2000
CLIP = 1e-15
#: the tuned scikit-learn models ("best sk" is the best of these)
SK_TUNED = ["sk LDA shrinkage", "sk QDA tuned", "sk GaussianNB", "sk logistic CV"]
#: the bayesgen default posterior predictives held against the class frequencies
BG_DEFAULTS = ["bg stacked", "bg member lda", "bg member lda_shrunk_means", "bg member qda",
               "bg member qda_isotropic", "bg member qda_spherical", "bg GaussianNB()"]
#: prefix of the predictives tempered by leave-one-out (a study, not a default)
TEMPERED = "T: "
def loo_tempered(est, X_tr: np.ndarray, y_tr: np.ndarray, X_te: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, float]:
    """A fitted bayesgen estimator tempered by its exact leave-one-out
    (:func:`bayesgen.estimators.stacking.loo_temperature`): its tempered leave-one-out
    log probability of every training row's class (n,), its tempered test class log
    probabilities (m, K) and T. The class prior kept is each refit's in the
    leave-one-out terms and the fit's on the test rows (exact: (N_k + 1) / (N + K))."""
    joint, y_index, loo_prior = loo_one_unit(est, X_tr, y_tr, None)  # each refit's prior
    loo = joint - logsumexp(joint, axis=1, keepdims=True)
    T = loo_temperature(loo, y_index, loo_prior)
    rows = np.arange(y_index.size)
    return (tempered(loo, loo_prior, T)[rows, y_index],
            tempered(est.predict_log_proba(X_te), class_log_prior(est), T), T)


def generated(name: str, counts: list[int], rng: np.random.Generator
              ) -> list[tuple[np.ndarray, np.ndarray]]:
    """One (X, y) per entry of ``counts`` (rows per class) from one draw of the
    generating parameters of a generated cell (see the module docstring)."""
    d = 60
    var = np.logspace(-1, 1, d)
    rotation = ortho_group.rvs(d, random_state=rng)
    chol = np.linalg.cholesky(rotation @ np.diag(var) @ rotation.T)
    if name.startswith("dense"):  # Mahalanobis length 3 along a random direction
        u = rng.normal(size=d)
        delta = chol @ (3.0 * u / np.linalg.norm(u))
    elif name.startswith("sparse"):  # 3 coordinates, scaled to Mahalanobis length 3
        delta = np.zeros(d)
        delta[rng.choice(d, 3, replace=False)] = rng.normal(size=3)
        delta *= 3.0 / np.linalg.norm(np.linalg.solve(chol, delta))
    else:
        delta = np.zeros(d)
    out = []
    for n in counts:
        y = np.repeat([0, 1], n)
        means = np.stack([-delta / 2, delta / 2])
        X = means[y] + rng.normal(size=(2 * n, d)) @ chol.T
        out.append((X, y))
    return out


def cells(splits: int, seed: int):
    """(data, n, split, X_train, y_train, X_test, y_test) of every cell."""
    for index, (name, n) in enumerate(CELLS):
        for rep in range(splits):
            rng = np.random.default_rng([seed, index, rep])
            if name in BUNDLED:
                X, y = BUNDLED[name](return_X_y=True)
                if name == "digits 0-4":
                    keep = y < 5
                    X, y = X[keep], y[keep]
                train = np.concatenate([rng.choice(np.flatnonzero(y == k), n, replace=False)
                                        for k in np.unique(y)])
                test = np.setdiff1d(np.arange(y.size), train)
                yield name, n, rep, X[train], y[train], X[test], y[test]
            else:
                (X_tr, y_tr), (X_te, y_te) = generated(name, [n, N_TEST // 2], rng)
                yield name, n, rep, X_tr, y_tr, X_te, y_te


def models(seed: int) -> dict:
    """name -> unfitted classifier."""
    few = {"draws": 20, "chains": 1, "progressbar": False, "random_state": seed}
    cv = StratifiedKFold(3, shuffle=True, random_state=seed)
    members = [(name, est.set_params(**few)) for name, est in default_estimators()]
    values = [0.01, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 0.95]
    return {
        "bg stacked": bg.StackedClassifier(members),
        **{f"bg member {name}": est for name, est in default_estimators()},
        "bg LDA()": bg.LDA(method="conjugate", **few),
        "bg GaussianNB()": bg.GaussianNB(method="conjugate", **few),
        "sk LDA shrinkage": skda.LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto"),
        "sk QDA tuned": GridSearchCV(  # scikit-learn >= 1.9 needs "eigen" when N_k <= d
            skda.QuadraticDiscriminantAnalysis(),
            [{"reg_param": values}, {"solver": ["eigen"], "shrinkage": values}],
            scoring="neg_log_loss", cv=cv, error_score=np.nan),
        "sk GaussianNB": sknb.GaussianNB(),
        "sk logistic CV": make_pipeline(StandardScaler(), LogisticRegressionCV(
            cv=cv, scoring="neg_log_loss", max_iter=2000)),
        "class frequencies": DummyClassifier(strategy="prior"),
    }


def held_out(log_proba: np.ndarray, index: np.ndarray) -> float:
    """Mean held-out log loss of class log probabilities (m, K), probabilities clipped
    at :data:`CLIP` as scikit-learn does."""
    p_true = np.clip(np.exp(log_proba[np.arange(index.size), index]), CLIP, 1.0)
    return float(-np.mean(np.log(p_true)))


def tempered_rows(stack, X_tr, y_tr, X_te, index, where: dict) -> list[dict]:
    """The fitted stack's members each tempered by its leave-one-out
    (:func:`loo_tempered`), and the stack of the tempered members (weights from their
    tempered leave-one-out terms, the stack's ``weight_prior``): one result row each."""
    out, loo, tests = [], [], []
    start = time.perf_counter()
    for name, est in zip(stack.loo_.index, stack.estimators_, strict=True):
        begin = time.perf_counter()
        member_loo, test, T = loo_tempered(est, X_tr, y_tr, X_te)
        loo.append(member_loo)
        tests.append(test)
        out.append({**where, "model": f"{TEMPERED}bg member {name}",
                    "log_loss": held_out(test, index), "temperature": T,
                    "seconds": time.perf_counter() - begin, "error": None})
    a = stacking_weights(np.stack(loo, axis=1), prior_rows=stack.weight_prior)
    keep = a > 0
    mix = logsumexp(np.log(a[keep])[:, None, None] + np.stack(tests)[keep], axis=0)
    out.append({**where, "model": f"{TEMPERED}bg stacked", "log_loss": held_out(mix, index),
                "seconds": time.perf_counter() - start, "error": None})
    return out


def run(splits: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per (cell, split, model): held-out log loss and seconds (a failed fit: NaN and
    its error); per (cell, split): the stack's weights."""
    rows, weights = [], []
    for name, n, rep, X_tr, y_tr, X_te, y_te in cells(splits, seed):
        classes = np.unique(y_tr)
        index = np.searchsorted(classes, y_te)
        for model_name, clf in models(rep).items():
            if model_name.startswith("bg member"):  # same draws setting as in the stack
                clf.set_params(draws=20, chains=1, progressbar=False)
            start = time.perf_counter()
            error, loss = None, np.nan
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    proba = clf.fit(X_tr, y_tr).predict_proba(X_te)
                if not np.all(np.isfinite(proba)):
                    raise ValueError("non-finite probabilities")
                p_true = np.clip(proba[np.arange(y_te.size), index], CLIP, 1.0)
                loss = float(-np.mean(np.log(p_true)))
                if model_name == "bg stacked":
                    weights.append({"data": name, "n": n, "split": rep,
                                    **dict(zip(clf.loo_.index, clf.weights_, strict=True))})
                    rows += tempered_rows(clf, X_tr, y_tr, X_te, index,
                                          {"data": name, "n": n, "split": rep})
                elif model_name == "bg GaussianNB()":
                    begin = time.perf_counter()
                    _, test, T = loo_tempered(clf, X_tr, y_tr, X_te)
                    rows.append({"data": name, "n": n, "split": rep,
                                 "model": TEMPERED + model_name,
                                 "log_loss": held_out(test, index), "temperature": T,
                                 "seconds": time.perf_counter() - begin, "error": None})
            except (ValueError, np.linalg.LinAlgError) as exc:
                error = " ".join(f"{type(exc).__name__}: {exc}".split())[:120]
            rows.append({"data": name, "n": n, "split": rep, "model": model_name,
                         "log_loss": loss, "seconds": time.perf_counter() - start,
                         "error": error})
        print(f"{name} n={n} split {rep} done", flush=True)
    return pd.DataFrame(rows), pd.DataFrame(weights)


def markdown(results: pd.DataFrame, weights: pd.DataFrame, splits: int,
             seconds: float) -> str:
    """The page: summary, the log loss table (mean +- sd over the splits), ratios, the
    stack's weights; the leave-one-out temperature study in a section of its own."""
    study = results[results["model"].str.startswith(TEMPERED)]
    results = results[~results["model"].str.startswith(TEMPERED)]
    order = list(dict.fromkeys(results["model"]))
    mean = results.pivot_table(index=["data", "n"], columns="model", values="log_loss",
                               aggfunc="mean", sort=False)[order]
    sd = results.pivot_table(index=["data", "n"], columns="model", values="log_loss",
                             aggfunc=lambda v: np.std(v, ddof=1) if len(v) > 1 else 0.0,
                             sort=False)[order]
    best_name = mean[SK_TUNED].idxmin(axis=1)
    best = mean[SK_TUNED].min(axis=1)
    ratio = mean["bg stacked"] / best
    freq = mean[BG_DEFAULTS].div(mean["class frequencies"], axis=0)
    at_or_below = int((ratio <= 1.0).sum())
    cells_n = len(ratio)
    lines = [
        "# Few rows, many features: held-out log loss", "",
        f"Mean ± sd over {splits} splits per cell of the held-out log loss (lower is "
        "better). Generated by `validation/small_n.py` (its docstring gives the design "
        f"and the command); {seconds:.0f} s single-process on a loaded 2-core machine.",
        "", "## Summary", "",
        f"- stack at or below the best tuned scikit-learn model: {at_or_below} / "
        f"{cells_n} cells ({100 * at_or_below / cells_n:.0f}%); within 1.1x: "
        f"{int((ratio <= 1.1).sum())} / {cells_n}; largest ratio {ratio.max():.2f} "
        f"({ratio.idxmax()[0]}, n = {ratio.idxmax()[1]}).",
    ]
    for model in BG_DEFAULTS:
        worst = freq[model]
        over = worst[worst > 1.05]
        where = ", ".join(f"{d} n={k} ({v:.2f})" for (d, k), v in over.items()) or "none"
        lines.append(f"- {model}: cells worse than the class frequencies by more than 5%: "
                     f"{len(over)} / {cells_n} ({where}).")
    lines += _table(
        [*order, "best sk", "stack / best"],
        [(key, [f"{mean.loc[key, m]:.3f} ± {sd.loc[key, m]:.3f}" for m in order]
          + [f"{best.loc[key]:.3f} ({best_name.loc[key]})", f"{ratio.loc[key]:.2f}"])
         for key in mean.index], title="Log loss")
    lines += _table(BG_DEFAULTS, [(key, [f"{v:.2f}" for v in freq.loc[key]])
                                  for key in freq.index],
                    title="Ratio to the class frequencies")
    if len(weights):
        members = [c for c in weights.columns if c not in ("data", "n", "split")]
        w = weights.groupby(["data", "n"], sort=False)[members].mean()
        lines += _table(members, [(key, [f"{v:.2f}" for v in w.loc[key]]) for key in w.index],
                        title="Stacking weights (mean over the splits)")
    if len(study):
        lines += temperature_section(study, mean, best)
    failed = results[results["error"].notna()]
    lines += ["", f"Failed fits: {len(failed)}."]
    lines += [f"- {r.data} n={r.n} split {r.split} {r.model}: {r.error}"
              for r in failed.itertuples()]
    secs = results.groupby("model", sort=False)["seconds"].sum()
    lines += ["", "Seconds per model over all fits: "
              + ", ".join(f"{m} {s:.0f}" for m, s in secs.items()) + "."]
    return "\n".join(lines) + "\n"


def _table(columns: list[str], rows: list[tuple], title: str | None = None) -> list[str]:
    """Markdown lines of a table with columns data, n, ``columns`` (under a "## title"
    heading when given); ``rows``: ``((data, n), cells)``, the cells already formatted."""
    head = [] if title is None else ["", f"## {title}", ""]
    return [*head, "| data | n | " + " | ".join(columns) + " |",
            "|---|---|" + "---|" * len(columns),
            *(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + " |" for key, cells in rows)]


def temperature_section(study: pd.DataFrame, mean: pd.DataFrame, best: pd.Series
                        ) -> list[str]:
    """Markdown lines: each default predictive's mean log loss over the class
    frequencies', as fitted / tempered by its leave-one-out (:func:`loo_tempered`),
    the median temperature, and the stack of tempered members against the best
    scikit-learn model."""
    t_mean = study.pivot_table(index=["data", "n"], columns="model", values="log_loss",
                               aggfunc="mean", sort=False)
    t_med = study.pivot_table(index=["data", "n"], columns="model", values="temperature",
                              aggfunc="median", sort=False)
    freq = mean["class frequencies"]
    ratio = t_mean[f"{TEMPERED}bg stacked"] / best
    cells_n = len(ratio)
    lines = ["", "## A predictive temperature chosen by leave-one-out (a study, not a "
             "default)", "",
             "Each default predictive's log-likelihood ratios divided by the T >= 1 that "
             "maximises its exact leave-one-out log score (`loo_temperature`; the class "
             "prior kept), and the stack of the tempered members (weights from their "
             "tempered leave-one-out terms). Stack of tempered members at or below the "
             f"best tuned scikit-learn model: {int((ratio <= 1.0).sum())} / {cells_n} "
             f"cells, within 1.1x: {int((ratio <= 1.1).sum())} / {cells_n}, largest "
             f"ratio {ratio.max():.2f} ({ratio.idxmax()[0]}, n = {ratio.idxmax()[1]}).",
             "", "Mean log loss over the class frequencies', as fitted -> tempered "
             "(median T):", ""]
    models = [m for m in BG_DEFAULTS if f"{TEMPERED}{m}" in t_mean.columns]
    over = {m: int((t_mean[f"{TEMPERED}{m}"] / freq > 1.05).sum()) for m in models}
    rows = []
    for key in t_mean.index:
        parts = []
        for m in models:
            T = t_med.loc[key].get(f"{TEMPERED}{m}", np.nan)
            parts.append(f"{mean.loc[key, m] / freq.loc[key]:.2f} -> "
                         f"{t_mean.loc[key, TEMPERED + m] / freq.loc[key]:.2f}"
                         + ("" if np.isnan(T) else f" ({T:.3g})"))
        rows.append((key, [*parts, f"{ratio.loc[key]:.2f}"]))
    lines += _table([*models, "tempered stack / best sk"], rows)
    lines += ["", "Cells where the tempered predictive is worse than the class frequencies "
              "by more than 5%: " + ", ".join(f"{m} {k}" for m, k in over.items()) + "."]
    return lines


def main() -> None:
    """Command line: ``--splits``, ``--seed``, ``--markdown PATH``, ``--csv PATH``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--markdown", default=None)
    parser.add_argument("--csv", default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    results, weights = run(args.splits, args.seed)
    page = markdown(results, weights, args.splits, time.perf_counter() - start)
    if args.csv:
        results.to_csv(args.csv, index=False)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(page)
    print(page)


if __name__ == "__main__":
    main()
