"""Priors chosen by the evidence against scikit-learn's tuned generative classifiers.

For scikit-learn's bundled data sets (iris, wine, breast cancer, digits) and generated
Gaussian data (well- and ill-conditioned covariances), with n training rows per class
drawn at random over several splits (the rest, or 2,000 fresh rows for generated data,
is the test set), compare held-out log loss and accuracy of

- bayesgen LDA and QDA posterior predictives (``method="conjugate"``) with their
  default priors (LDA ``cov_dof="oas"``: the strength from the Oracle Approximating
  Shrinkage intensity; QDA ``cov_dof="auto"``: the strength by the evidence), LDA with
  ``cov_dof="auto"`` (the evidence), and with the evidence choosing more: ``cov_scale=
  "auto"`` (strength and scale of the shrinkage target), ``mean_strength="auto"``
  (kappa0 and nu0); QDA with those, with ``cov_target="pooled"`` (class covariances
  partially pooled towards LDA's, the pooling strength by the evidence), with
  ``cov_dof="oas"`` and with both; LDA and QDA with each covariance structure
  ``cov_structure`` in ``"diag"``, ``"spherical"`` (mclust's EEI/EII, VVI/VII),
  ``"auto"`` (the structure of largest evidence) and ``"average"`` (the structures'
  posterior predictives averaged by their posterior probabilities), at the estimator's
  default ``cov_dof``, and QDA ``cov_structure="average"`` with ``cov_dof="oas"``;
  bayesgen GaussianNB (``method="conjugate"``, default prior and ``var_dof="auto",
  var_scale="auto"``);
- ``bg.StackedClassifier`` with its default members (LDA, QDA, QDA
  ``cov_target="isotropic"`` and QDA ``cov_structure="spherical"``, all
  ``method="conjugate"`` at their default priors) and its default ``weight_prior=1``:
  their posterior predictive class probabilities averaged with the weights that maximise
  the exact leave-one-out log score of the training labels under a Dirichlet(1 + 1/M)
  prior on the weights. The members get the study's
  sampler settings (50 draws, 1 chain): the conjugate posterior predictive is closed
  form, so the class probabilities do not depend on them, and the default 4 x 1,000
  posterior draws would make a QDA fit on digits take about a minute;
- the covariance structures (``cov_structure`` "diag", "spherical", "auto",
  "average" of LDA and QDA) and the isotropic target (``cov_target="isotropic"``);
- scikit-learn's LinearDiscriminantAnalysis with Ledoit-Wolf shrinkage
  (``solver="lsqr", shrinkage="auto"``), QuadraticDiscriminantAnalysis with
  ``reg_param`` or (``solver="eigen"``) ``shrinkage`` tuned by 3-fold cross-validated
  log loss over a grid (0.01 to 0.95), GaussianNB, and
  (a discriminative reference) standardised logistic regression.

"best sk generative" is the lowest mean log loss of the three scikit-learn generative
models in the cell; ``ratio`` columns divide a bayesgen model's mean log loss by it (the
issue's goal: <= 1 in every cell, never above 1.1). Log loss is computed with
probabilities clipped at 1e-15 as scikit-learn does; a fit that fails counts as missing.
The "structures" section also names the structure that ``cov_structure="auto"`` fitted
(``prior_search_["structure"]``, the most frequent over the splits) in every cell. The
"stacked" section gives per cell the stack's mean log loss, its standard deviation over
the splits, and its mean weight of every member (``weights_``, saved as the columns
``weight <member>`` of the per-split rows, one per row of ``loo_``: ``weight lda``,
``weight qda``, ``weight qda_isotropic``, ``weight qda_spherical``; rows saved before a
member was added lack its column).

Run (single process; 10 splits took about 15 minutes on 2 shared cores)::

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python validation/prior_study.py --splits 10 \\
        --markdown validation/results_priors.md --csv rows.csv

and ``--from-csv rows.csv`` rewrites the report from the saved rows without fitting.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import discriminant_analysis as skda
from sklearn import naive_bayes as sknb
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import bayesgen as bg
from bayesgen.estimators.stacking import default_estimators

#: (data set, n per class) cells: the issue's table, then generated data
REAL_CELLS = [("breast cancer", 10), ("breast cancer", 20), ("breast cancer", 50),
              ("digits", 20), ("digits", 50), ("wine", 10), ("iris", 10)]
GENERATED_CELLS = [("well d=5", 5), ("well d=5", 10), ("ill d=5", 10), ("ill d=5", 100),
                   ("well d=30", 5), ("well d=30", 20), ("ill d=30", 20), ("ill d=30", 100),
                   ("ill d=100", 10), ("ill d=100", 50)]
LOADERS = {"iris": load_iris, "wine": load_wine, "breast cancer": load_breast_cancer,
           "digits": load_digits}
SK_GENERATIVE = ["sk LDA shrinkage", "sk QDA tuned", "sk GaussianNB"]
BG_COMPARED = ["bg LDA default", "bg LDA cov_dof=auto", "bg LDA cov_scale=auto",
               "bg LDA mean_strength=auto", "bg QDA default", "bg QDA cov_scale=auto",
               "bg QDA mean_strength=auto", "bg QDA cov_target=pooled", "bg QDA cov_dof=oas",
               "bg QDA pooled+oas"]
#: the covariance structures (``cov_structure``), each at the estimator's default cov_dof
STRUCTURES = ["diag", "spherical", "auto", "average"]
BG_STRUCTURES = [*(f"bg LDA {s}" for s in STRUCTURES), *(f"bg QDA {s}" for s in STRUCTURES),
                 "bg QDA average+oas"]
#: the isotropic target v I in the units of X (``cov_target="isotropic"``)
BG_ISOTROPIC = ["bg LDA isotropic", "bg QDA isotropic+oas"]
#: the models whose chosen structure (``prior_search_["structure"]``) is reported
BG_CHOOSING = ["bg LDA auto", "bg QDA auto", "bg LDA average", "bg QDA average",
               "bg QDA average+oas"]
#: the stack of the conjugate LDA, QDA, isotropic QDA and spherical QDA
#: (``bg.StackedClassifier``)
BG_STACKED = ["bg stacked"]


def generated(name: str, seed: int, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """3 classes of Gaussian rows: "well" has covariances with condition number ~3,
    "ill" ~1e4 (a random rotation of log-spaced variances); class covariances are
    rescaled copies of one matrix, means 1.5 prior sds apart on average."""
    kind, dim = name.split(" d=")
    d = int(dim)
    rng = np.random.default_rng(1000 + d + (0 if kind == "well" else 1))  # fixed truth
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    var = np.logspace(0, 0.5 if kind == "well" else 4, d)
    cov = Q @ np.diag(var) @ Q.T
    chol = np.linalg.cholesky(cov)
    means = rng.normal(size=(3, d)) @ chol.T * 1.5 / np.sqrt(d) * 3
    scales = [1.0, 1.3, 0.8]
    data = np.random.default_rng(seed)
    y = data.integers(0, 3, n_rows)
    X = means[y] + data.normal(size=(n_rows, d)) @ chol.T * np.sqrt(np.take(scales, y))[:, None]
    return X, y


def models(seed: int) -> dict:
    """name -> unfitted classifier."""
    common = {"method": "conjugate", "draws": 50, "chains": 1, "random_state": seed,
              "progressbar": False}
    # scikit-learn >= 1.9's QDA needs more rows per class than features unless its
    # "eigen" solver shrinks the class covariances: both regularisations are tuned
    values = [0.01, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 0.95]
    grid = [{"reg_param": values}, {"solver": ["eigen"], "shrinkage": values}]
    return {
        "bg LDA default": bg.LDA(**common),
        "bg LDA cov_dof=auto": bg.LDA(cov_dof="auto", **common),
        "bg LDA cov_scale=auto": bg.LDA(cov_dof="auto", cov_scale="auto", **common),
        "bg LDA mean_strength=auto": bg.LDA(cov_dof="auto", mean_strength="auto", **common),
        "bg QDA default": bg.QDA(**common),
        "bg QDA cov_scale=auto": bg.QDA(cov_scale="auto", **common),
        "bg QDA mean_strength=auto": bg.QDA(mean_strength="auto", **common),
        "bg QDA cov_target=pooled": bg.QDA(cov_target="pooled", **common),
        "bg QDA cov_dof=oas": bg.QDA(cov_dof="oas", **common),
        "bg QDA pooled+oas": bg.QDA(cov_target="pooled", cov_dof="oas", **common),
        **{f"bg LDA {s}": bg.LDA(cov_structure=s, **common) for s in STRUCTURES},
        **{f"bg QDA {s}": bg.QDA(cov_structure=s, **common) for s in STRUCTURES},
        "bg QDA average+oas": bg.QDA(cov_structure="average", cov_dof="oas", **common),
        "bg LDA isotropic": bg.LDA(cov_target="isotropic", **common),
        "bg QDA isotropic+oas": bg.QDA(cov_target="isotropic", cov_dof="oas", **common),
        "bg GaussianNB": bg.GaussianNB(**common),
        "bg GaussianNB auto": bg.GaussianNB(var_dof="auto", var_scale="auto", **common),
        "bg stacked": bg.StackedClassifier(
            [(name, est.set_params(**common)) for name, est in default_estimators()]),
        "sk LDA shrinkage": skda.LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto"),
        "sk QDA tuned": GridSearchCV(
            skda.QuadraticDiscriminantAnalysis(), grid, scoring="neg_log_loss",
            cv=StratifiedKFold(3, shuffle=True, random_state=seed), error_score=np.nan),
        "sk GaussianNB": sknb.GaussianNB(),
        "sk logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
    }


def split(y: np.ndarray, n_per_class: int, rng: np.random.Generator):
    """n_per_class random training rows per class, and the rest."""
    train = np.concatenate([rng.choice(np.flatnonzero(y == k), n_per_class, replace=False)
                            for k in np.unique(y)])
    return train, np.setdiff1d(np.arange(y.size), train)


def cells(splits: int, seed: int):
    """(data, n per class, split, X_train, y_train, X_test, y_test) of every cell."""
    for name, n in REAL_CELLS:
        X, y = LOADERS[name](return_X_y=True)
        rng = np.random.default_rng(seed)
        for rep in range(splits):
            train, test = split(y, n, rng)
            yield name, n, rep, X[train], y[train], X[test], y[test]
    for name, n in GENERATED_CELLS:
        for rep in range(splits):
            X, y = generated(name, seed + rep, 3 * n + 2000)
            train, test = split(y, n, np.random.default_rng(seed + rep))
            yield name, n, rep, X[train], y[train], X[test], y[test]


def run(splits: int, seed: int) -> pd.DataFrame:
    """One row per (data set, n per class, split, model) with the held-out metrics."""
    rows = []
    for name, n, rep, X_tr, y_tr, X_te, y_te in cells(splits, seed):
        for model_name, clf in models(rep).items():
            start = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    proba = clf.fit(X_tr, y_tr).predict_proba(X_te)
            except (ValueError, np.linalg.LinAlgError):
                continue
            if not np.all(np.isfinite(proba)):
                continue
            search = getattr(clf, "prior_search_", None) or {}
            weights = ({f"weight {m}": a for m, a in zip(clf.loo_.index, clf.weights_,
                                                          strict=True)}
                       if model_name in BG_STACKED else {})
            rows.append({"data": name, "n_per_class": n, "split": rep, "model": model_name,
                         "log_loss": log_loss(y_te, proba, labels=np.unique(y_tr)),
                         "accuracy": accuracy_score(y_te, np.unique(y_tr)[proba.argmax(1)]),
                         "seconds": time.perf_counter() - start,
                         "structure": search.get("structure"),
                         **weights})
    return pd.DataFrame(rows)


def stack_members(results: pd.DataFrame) -> list[str]:
    """The stack's members recorded in the rows: the names of the ``weight <member>``
    columns, in their order (the order of ``loo_`` and ``weights_``)."""
    return [c.removeprefix("weight ") for c in results.columns if c.startswith("weight ")]


def table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean log loss per cell and model, the best scikit-learn generative model and the
    ratio of each bayesgen model to it."""
    wide = results.pivot_table(index=["data", "n_per_class"], columns="model",
                               values="log_loss", aggfunc="mean", sort=False)
    wide["best sk generative"] = wide[SK_GENERATIVE].min(axis=1)
    for name in [*BG_COMPARED, *BG_STRUCTURES, *BG_ISOTROPIC, *BG_STACKED]:
        if name in wide:  # rows saved before a model was added lack it
            wide[f"ratio {name[3:]}"] = wide[name] / wide["best sk generative"]
    return wide


def chosen_structures(results: pd.DataFrame) -> pd.DataFrame:
    """Per cell and model of ``BG_CHOOSING``: the most frequent ``prior_search_["structure"]``
    over the splits, written "EEE (7/10)" (ties: the first in mclust's order)."""
    picked = results[results["model"].isin(BG_CHOOSING)]

    def mode(names: pd.Series) -> str:
        counts = names.value_counts(sort=False)
        top = counts.index[int(np.argmax(counts.to_numpy()))]
        return f"{top} ({counts[top]}/{names.size})"

    return picked.pivot_table(index=["data", "n_per_class"], columns="model",
                              values="structure", aggfunc=mode, sort=False)


def stacked(results: pd.DataFrame, wide: pd.DataFrame) -> pd.DataFrame:
    """Per cell: the stack's mean log loss, its standard deviation over the splits
    (``ddof=1``), the LDA and QDA defaults, the best scikit-learn generative model, the
    ratio of the stack to it, and the stack's mean weight of each member."""
    rows = results[results["model"].isin(BG_STACKED)]
    cell = ["data", "n_per_class"]
    spread = rows.groupby(cell, sort=False)["log_loss"].std()
    columns = [f"weight {m}" for m in stack_members(results)]
    weights = rows.groupby(cell, sort=False)[columns].mean()
    out = wide[["bg stacked", "bg LDA default", "bg QDA default", "best sk generative",
                "ratio stacked"]].copy()
    out["sd stacked"] = spread.reindex(out.index)
    return out.join(weights)


def summary(wide: pd.DataFrame, names: list[str]) -> list[str]:
    """One Markdown bullet per model: cells at or below the best scikit-learn generative
    model, within 1.1 times it, and the largest ratio (a failed cell counts as above)."""
    lines = []
    for name in names:
        ratio = wide[f"ratio {name[3:]}"]
        lines.append(f"- {name}: {int((ratio <= 1).sum())} / {ratio.size} at or below, "
                     f"{int((ratio <= 1.1).sum())} / {ratio.size} within 1.1x, "
                     f"max ratio {ratio.max():.2f}"
                     + (f" ({int(ratio.isna().sum())} cells failed)" if ratio.isna().any()
                        else ""))
    return lines


def _fmt(value: float) -> str:
    """A mean log loss to 3 decimals, or "fails"."""
    return f"{value:.3f}" if np.isfinite(value) else "fails"


def markdown(wide: pd.DataFrame, results: pd.DataFrame, splits: int, seconds: float) -> str:
    """The results as a Markdown page."""
    has_stack = "bg stacked" in wide
    order = [*BG_COMPARED, *BG_STRUCTURES, *BG_ISOTROPIC, "bg GaussianNB", "bg GaussianNB auto",
             *(BG_STACKED if has_stack else []), *SK_GENERATIVE, "sk logistic"]
    lines = ["# Priors chosen by the evidence: held-out log loss", "",
             f"Mean over {splits} random splits per cell of the held-out log loss (lower is "
             "better); `n` rows per class for training. Generated by "
             "`validation/prior_study.py` (see its docstring for the design and the "
             f"command); {seconds:.0f} s single-process.", "",
             "| data | n | " + " | ".join(order) + " | best sk gen. | LDA default / best "
             "| LDA auto / best |",
             "|---|---|" + "---|" * (len(order) + 3)]
    for (data, n), row in wide.iterrows():
        values = [f"{row[c]:.3f}" if c in row and np.isfinite(row[c]) else "fails"
                  for c in order]
        lines.append(f"| {data} | {n} | " + " | ".join(values)
                     + f" | {row['best sk generative']:.3f} | {row['ratio LDA default']:.2f} "
                     f"| {row['ratio LDA cov_dof=auto']:.2f} |")
    lines += ["", "Cells where each bayesgen model is at or below the best scikit-learn "
              "generative model, at most 1.1 times it, and the largest ratio:", "",
              *summary(wide, BG_COMPARED)]
    lines += ["", "## Structures", "",
              "`cov_structure` of LDA (mclust's EII spherical, EEI diagonal, EEE full) and "
              "QDA (VII, VVI, VVV) at the estimator's default `cov_dof` (LDA \"oas\", QDA "
              "\"auto\"; \"full\" is the default column above), and QDA \"average\" "
              "with `cov_dof=\"oas\"`. Cells at or below the best scikit-learn generative "
              "model, within 1.1 times it, and the largest ratio:", "",
              *summary(wide, BG_STRUCTURES), "",
              "The structure of largest evidence (`prior_search_[\"structure\"]`: the one "
              "\"auto\" fits, and the one of largest weight under \"average\"), the most "
              "frequent over the splits (how often):", "",
              "| data | n | " + " | ".join(BG_CHOOSING) + " |",
              "|---|---|" + "---|" * len(BG_CHOOSING)]
    for (data, n), row in chosen_structures(results).iterrows():
        lines.append(f"| {data} | {n} | " + " | ".join(
            str(row[c]) if c in row and isinstance(row[c], str) else "fails"
            for c in BG_CHOOSING) + " |")
    lines += ["", "## The isotropic target", "",
              "`cov_target=\"isotropic\"`: the prior mean of the covariance is v I in the "
              "units of X (v the mean pooled within-class variance) instead of the diagonal "
              "of the pooled within-class variances; LDA at its default strength (\"oas\"), "
              "QDA with `cov_dof=\"oas\"`:", "", *summary(wide, BG_ISOTROPIC)]
    if has_stack:
        members = stack_members(results)
        lines += ["", "## Stacked by exact leave-one-out", "",
                  "`bg.StackedClassifier()`: the posterior predictive class probabilities of "
                  "the conjugate LDA, QDA, QDA `cov_target=\"isotropic\"` and QDA "
                  "`cov_structure=\"spherical\"` (default priors) averaged with the weights "
                  "that maximise the exact leave-one-out log score of the training labels "
                  "under the default Dirichlet prior on the weights (`weight_prior=1`). "
                  "Cells at or below the best scikit-learn generative model, within 1.1 times "
                  "it, and the largest ratio:", "",
                  *summary(wide, BG_STACKED), "",
                  "Per cell: mean held-out log loss of the stack, its standard deviation over "
                  "the splits, the LDA and QDA defaults (the members `lda` and `qda`), the "
                  "best scikit-learn generative model, the ratio of the stack to it, and the "
                  "stack's mean weights of its members:", "",
                  "| data | n | bg stacked | sd stacked | LDA default | QDA default "
                  "| best sk gen. | stacked / best | "
                  + " | ".join(f"weight {m}" for m in members) + " |",
                  "|---|---|" + "---|" * (6 + len(members))]
        for (data, n), row in stacked(results, wide).iterrows():
            lines.append(
                f"| {data} | {n} | {_fmt(row['bg stacked'])} | {_fmt(row['sd stacked'])} "
                f"| {_fmt(row['bg LDA default'])} | {_fmt(row['bg QDA default'])} "
                f"| {_fmt(row['best sk generative'])} | {row['ratio stacked']:.2f} | "
                + " | ".join(f"{row[f'weight {m}']:.2f}" for m in members) + " |")
    acc = results.pivot_table(index=["data", "n_per_class"], columns="model",
                              values="accuracy", aggfunc="mean", sort=False)
    lines += ["", "Held-out accuracy (mean over the splits):", "",
              "| data | n | " + " | ".join(order) + " |", "|---|---|" + "---|" * len(order)]
    for (data, n), row in acc.iterrows():
        lines.append(f"| {data} | {n} | " + " | ".join(
            f"{row[c]:.3f}" if c in row and np.isfinite(row[c]) else "fails" for c in order)
            + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--csv", type=Path, default=None,
                        help="also write the per-split rows (model, cell, split) here")
    parser.add_argument("--from-csv", type=Path, default=None,
                        help="rewrite the report from rows saved by --csv (no fits)")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.from_csv is not None:
        results = pd.read_csv(args.from_csv)
        args.splits = int(results["split"].max()) + 1 if "split" in results else args.splits
    else:
        results = run(args.splits, args.seed)
    wide = table(results)
    if args.csv is not None:
        results.to_csv(args.csv, index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(wide.round(3))
    if args.markdown is not None:
        seconds = (float(results["seconds"].sum()) if args.from_csv is not None
                   else time.perf_counter() - start)  # from a CSV: the fits' own times
        args.markdown.write_text(markdown(wide, results, args.splits, seconds))


if __name__ == "__main__":
    main()
